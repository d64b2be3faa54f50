"""`indx serve` for real: a uvicorn process on a loopback port over an ingested data directory,
driven over HTTP (raw sockets where the wire itself is under test) and by the platform's own
Python SDK (`alibabacloud-searchplat20240529`), exactly as a client of the real service would."""

import base64
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from indx_assets.app.search import SearchFilters, search_chunks
from indx_assets.app.server.turns import ADMITTED
from indx_assets.wiring.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
INDX = shutil.which("indx") or "indx"
KEY = "OS-test-key-1"
SPLIT = "/v3/openapi/workspaces/default/document-split/ops-document-split-001"
BODY_TIMEOUT = 3.0  # INDX_BODY_TIMEOUT of the test server: short, so a stalled client's turn passes soon
#: The opening of the seed's curl example (seed 001): Japanese text with line and paragraph breaks.
SEED_CONTENT = (
    "製品の利点\n業界アルゴリズムエディション\nインテリジェント\n組み込みのリッチでカスタマイズ可能なアルゴリズムモデルと、"
    "さまざまな業界の検索特性を組み合わせて、業界のリコールとソートアルゴリズムを起動し、より良い検索結果を保証します。\n\n"
    "柔軟でカスタマイズ可能\n開発者は、独自のビジネス特性とデータに基づいて、対応するアルゴリズムモデル、アプリケーションスキーマ、"
    "データ処理、クエリ分析、ソート、およびその他の構成をカスタマイズして、パーソナライズされた検索ニーズを満たし、"
    "検索結果のクリック率を向上させ、迅速なビジネスの反復を実現し、需要のオンライン化のサイクルを大幅に短縮できます。\n\n"
    "自動スケーリング\n弾力的な拡張機能を備えているため、ユーザーは必要に応じて使用するリソースを拡張または縮小できます。"
)
SEED_BODY = {
    "document": {"content": SEED_CONTENT, "content_encoding": "utf8", "content_type": "text"},
    "strategy": {"type": "default", "max_chunk_size": 60, "compute_type": "token", "need_sentence": False},
}


@dataclass
class Server:
    url: str
    port: int
    home: Path
    corpus: Path
    process: subprocess.Popen[bytes]

    def env(self) -> dict[str, str]:
        return {**os.environ, "INDX_HOME": str(self.home)}

    def client(self, key: str | None = KEY) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=120)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ingest(home: Path, *paths: Path) -> None:
    done = subprocess.run([INDX, "ingest", *map(str, paths)], env={**os.environ, "INDX_HOME": str(home)},
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("serve")
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_sample_corpus import write_corpus

    corpus, home = tmp / "corpus", tmp / "indx"
    write_corpus(corpus)
    _ingest(home, corpus)
    port = _free_port()
    env = {**os.environ, "INDX_HOME": str(home), "INDX_API_KEYS": f"{KEY},OS-test-key-2",
           "INDX_BODY_TIMEOUT": str(BODY_TIMEOUT)}
    log = (tmp / "server.log").open("wb")
    process = subprocess.Popen([INDX, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    healthy_at = ready_at = None
    while time.monotonic() < deadline and ready_at is None:
        assert process.poll() is None, (tmp / "server.log").read_text()
        try:
            if healthy_at is None and httpx.get(url + "/healthz").status_code == 200:
                healthy_at = time.monotonic()
            if httpx.get(url + "/readyz").status_code == 200:
                ready_at = time.monotonic()
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    assert ready_at is not None, (tmp / "server.log").read_text()
    assert healthy_at is not None and healthy_at <= ready_at
    yield Server(url, port, home, corpus, process)
    process.terminate()
    process.wait(timeout=30)


def test_the_seeds_curl_example_is_answered_with_the_documented_envelope(server: Server) -> None:
    # the request exactly as the seed's curl sends it: a Bearer key, a JSON body
    response = httpx.post(server.url + SPLIT, json=SEED_BODY, headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"request_id", "latency", "usage", "result"}
    assert isinstance(body["request_id"], str) and len(body["request_id"]) == 36
    assert isinstance(body["latency"], int) and body["usage"]["token_count"] > 60
    result = body["result"]
    assert set(result) == {"chunks", "nodes", "rich_texts", "sentences"}
    assert result["sentences"] == [] and result["rich_texts"] == []
    nodes = {n["id"]: n for n in result["nodes"]}
    (root,) = [n for n in result["nodes"] if n["type"] == "root"]
    assert root["parent_id"] == root["id"]
    assert len(result["chunks"]) > 1, "60 tokens a chunk cuts this text in several"
    for chunk in result["chunks"]:
        assert chunk["content"] and chunk["meta"]["type"] == "text"
        assert chunk["meta"]["id"] in nodes and chunk["meta"]["parent_id"] in nodes
        assert chunk["meta"]["size"] <= 60
    # the leaves hold the document's text, in order, whole
    assert "".join("".join(c["content"].split()) for c in result["chunks"]) == "".join(SEED_CONTENT.split())


def test_sentences_and_base64_content(server: Server) -> None:
    with server.client() as client:
        plain = client.post(SPLIT, json=SEED_BODY).json()["result"]
        encoded = {**SEED_BODY, "document": {**SEED_BODY["document"], "content_encoding": "base64",
                                             "content": base64.b64encode(SEED_CONTENT.encode()).decode()}}
        assert client.post(SPLIT, json=encoded).json()["result"] == plain
        with_sentences = {**SEED_BODY, "strategy": {**SEED_BODY["strategy"], "need_sentence": True}}
        result = client.post(SPLIT, json=with_sentences).json()["result"]
    leaves = {c["meta"]["id"] for c in result["chunks"]}
    assert len(result["sentences"]) >= len(result["chunks"])
    assert all(s["meta"]["belonged_chunk_id"] in leaves for s in result["sentences"])


@pytest.mark.parametrize(("body", "headers", "path", "status", "code"), [
    (b'{"document": ', {}, SPLIT, 400, "InvalidParameter"),  # malformed JSON
    (b'[1, 2]', {}, SPLIT, 400, "InvalidParameter"),  # not an object
    (b'{"strategy": {}}', {}, SPLIT, 400, "InvalidParameter"),  # no document
    (b'{"document": {"content": 3}}', {}, SPLIT, 400, "InvalidParameter"),  # wrong type
    (b'{"document": {"content": "x"}, "strategy": {"max_chunk_size": true}}', {}, SPLIT, 400, "InvalidParameter"),
    (b'{"document": {"content": "x"}, "strategy": {"max_chunk_size": 0}}', {}, SPLIT, 400, "InvalidParameter"),
    (b'{"document": {"content": "x"}, "strategy": {"compute_type": "word"}}', {}, SPLIT, 400, "InvalidParameter"),
    (b'{"document": {"content": "x", "content_type": "pdf"}}', {}, SPLIT, 400, "InvalidParameter"),
    (b'{"document": {"content": "@@not base64", "content_encoding": "base64"}}', {}, SPLIT, 400, "InvalidParameter"),
    (b'{"document": {"content": "/w==", "content_encoding": "base64"}}', {}, SPLIT, 400, "InvalidParameter"),  # not UTF-8
    (b'{"document": {"content": "   "}}', {}, SPLIT, 400, "InvalidParameter"),  # empty
    (b'document=x', {"Content-Type": "application/x-www-form-urlencoded"}, SPLIT, 400, "InvalidParameter"),
    (b'{"document": {"content": "x"}}', {}, SPLIT.replace("ops-document-split-001", "ops-nope"), 404, "NotFound"),
    (b'{"document": {"content": "x"}}', {"Authorization": ""}, SPLIT, 401, "Unauthorized"),
    (b'{"document": {"content": "x"}}', {"Authorization": "Bearer OS-wrong"}, SPLIT, 403, "Forbidden"),
    (b'{"document": {"content": "x"}}', {"Authorization": "Basic a2V5"}, SPLIT, 401, "Unauthorized"),
    (b'{"query": ""}', {}, "/v1/search", 400, "InvalidParameter"),
    (b'{"query": "  "}', {}, "/v1/search", 400, "InvalidParameter"),  # blank: no model or index is asked
    (b'{"query": "x", "mode": "semantic"}', {}, "/v1/search", 400, "InvalidParameter"),
    (b'{"query": "x", "k": 0}', {}, "/v1/search", 400, "InvalidParameter"),
    (b'', {}, "/v1/chunk?filename=a.txt", 400, "InvalidParameter"),
    (b'hello', {}, "/v1/chunk", 400, "InvalidParameter"),  # no filename
])
def test_every_refusal_has_its_status_and_code(server: Server, body: bytes, headers: dict[str, str], path: str,
                                               status: int, code: str) -> None:
    sent = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json", **headers}
    response = httpx.post(server.url + path, content=body, headers={k: v for k, v in sent.items() if v})
    assert response.status_code == status, response.text
    error = response.json()
    assert error["code"] == code and error["message"] and len(error["request_id"]) == 36


def _raw_request(port: int, head: bytes, body: bytes) -> tuple[int, dict]:
    """Send `head` and then `body` on a raw socket; the status and JSON answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head + body)
        return _answer(sock)


def _answer(sock: socket.socket) -> tuple[int, dict]:
    """The status and JSON answer the server sends on `sock`."""
    answer = b""
    while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
        data = sock.recv(65536)
        if not data:
            break
        answer += data
    status = int(answer.split(b" ", 2)[1])
    return status, json.loads(answer.split(b"\r\n\r\n", 1)[1])


def _length(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 1 << 30


def test_a_9_mb_body_is_refused_from_its_length_without_being_read(server: Server) -> None:
    declared = 9 * 1024 * 1024
    head = (f"POST {SPLIT} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n").encode()
    # Only 1 kB of the 9 MB is ever sent: an answer can only come from the declared length.
    status, error = _raw_request(server.port, head, b'{"document": {"content": "' + b"x" * 1000)
    assert status == 413 and error["code"] == "RequestEntityTooLarge"


def _stalled_client(port: int) -> socket.socket:
    """A client that sends its headers and the opening of a 100 kB split body, then nothing more."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=BODY_TIMEOUT + 120)
    sock.sendall((f"POST {SPLIT} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\n"
                  "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n").encode()
                 + b'{"document": {"content": "')
    return sock


def _has_answer(sock: socket.socket) -> bool:
    timeout = sock.gettimeout()
    sock.setblocking(False)
    try:
        return bool(sock.recv(1, socket.MSG_PEEK))
    except BlockingIOError:
        return False
    finally:
        sock.settimeout(timeout)  # not setblocking(True): that would wait for an answer forever


def test_a_stalled_body_does_not_hold_up_other_clients(server: Server) -> None:
    stalled = _stalled_client(server.port)
    try:
        time.sleep(0.5)  # its turn taken: the server is reading its body
        with server.client() as client:
            response = client.post(SPLIT, json=SEED_BODY)
        assert response.status_code == 200, response.text
        assert not _has_answer(stalled), "answered while the stalled client still holds its turn"
        started = time.monotonic()
        status, error = _answer(stalled)
        assert status == 408 and error["code"] == "RequestTimeout", error
        assert time.monotonic() - started <= BODY_TIMEOUT + 30
    finally:
        stalled.close()


def test_stalled_clients_in_every_turn_hold_others_up_only_until_the_body_timeout(server: Server) -> None:
    # Only ADMITTED bodies are read at once (the rest wait unread, so 32 clients' 1 MB bodies are
    # not all in memory together); clients stalled in every turn lose their turns after the timeout.
    stalled = [_stalled_client(server.port) for _ in range(ADMITTED)]
    try:
        time.sleep(0.5)
        started = time.monotonic()
        with server.client() as client:
            response = client.post(SPLIT, json=SEED_BODY)
        waited = time.monotonic() - started
        assert response.status_code == 200, response.text
        assert waited <= BODY_TIMEOUT + 30, f"answered after {waited:.1f} s"
        for sock in stalled:
            status, error = _answer(sock)
            assert status == 408 and error["code"] == "RequestTimeout", error
    finally:
        for sock in stalled:
            sock.close()


def test_a_chunked_body_over_the_limit_is_cut_off_with_413(server: Server) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"document": {"content": "'
        for _ in range(9):
            yield b"x" * (1024 * 1024)
        yield b'"}}'

    response = httpx.post(server.url + SPLIT, content=chunks(), headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == 413 and response.json()["code"] == "RequestEntityTooLarge"


def _mangled(rng: random.Random) -> bytes:
    """A request body a fuzzer would send: the seed's request with random damage."""
    text = json.dumps(rng.choice([SEED_BODY, {"query": "pilot", "k": 3}]), ensure_ascii=rng.random() < 0.5)
    damage = rng.randrange(6)
    if damage == 0:  # cut short
        return text[: rng.randrange(len(text))].encode()
    if damage == 1:  # random bytes spliced in
        at = rng.randrange(len(text))
        return text[:at].encode() + rng.randbytes(rng.randrange(1, 8)) + text[at:].encode()
    if damage == 2:  # a value replaced by another JSON type
        value = rng.choice(["null", "true", "-1", "1e309", '"\\ud800"', "[]", "{}", '"' + "9" * 40 + '"', "1.5"])
        return text.replace('300', value).replace('60', value).replace('"pilot"', value).encode()
    if damage == 3:  # characters deleted
        chars = list(text)
        for _ in range(rng.randrange(1, 6)):
            chars.pop(rng.randrange(len(chars)))
        return "".join(chars).encode()
    if damage == 4:  # deep nesting
        depth = rng.randrange(100, 5000)
        return ("[" * depth + "]" * depth).encode()
    return rng.randbytes(rng.randrange(0, 200))


def test_a_thousand_malformed_bodies_never_get_a_5xx(server: Server) -> None:
    rng = random.Random(20261201)
    statuses: dict[int, int] = {}
    with server.client() as client:
        for n in range(1000):
            path = SPLIT if n % 2 == 0 else "/v1/search"
            response = client.post(path, content=_mangled(rng), headers={"Content-Type": "application/json"})
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            if response.status_code >= 400:
                assert response.json()["code"], response.text
    assert not any(status >= 500 for status in statuses), statuses
    assert statuses.get(400, 0) > 500, statuses  # the fuzz is mostly refused, as it should be


QUERIES = [("when may deep-draught ships cross the bar", "hybrid"), ("muscatel flavour leafhoppers", "vector"),
           ("hydraulic jacks", "fts")]


def test_search_answers_what_the_in_process_search_answers(server: Server) -> None:
    settings = Settings(home=server.home, storage_uri=str(server.home / "assets"),
                        lancedb_uri=str(server.home / "lancedb"), corpus_roots=(str(server.corpus),))
    with server.client() as client:
        for query, mode in QUERIES:
            served = client.post("/v1/search", json={"query": query, "k": 4, "mode": mode}).json()["hits"]
            local = json.loads(json.dumps([h.to_json() for h in search_chunks(settings, query, k=4, mode=mode)]))
            assert [h["id"] for h in served] == [h["id"] for h in local] and served, query
            assert [round(h["score"], 5) for h in served] == [round(h["score"], 5) for h in local]
            # the chunk's text is `content`, as in `indx chunk --json`, with the same fields as in-process
            assert all("text" not in h and h["content"] for h in served) and set(served[0]) == set(local[0])
            assert [h["excerpt"] for h in served] == [h["excerpt"] for h in local]
        # the filters mean the same on both sides, and filter
        top = local[0]
        prefix = top["source_id"].split("/")[0] + "/"
        for filters in (SearchFilters(source_prefix=prefix), SearchFilters(chunk_type="content", page=1),
                        SearchFilters(source_prefix="no-such-root/")):
            body = {"query": "ships", "k": 5, "source_prefix": filters.source_prefix,
                    "chunk_type": filters.chunk_type, "page": filters.page}
            served = client.post("/v1/search", json=body).json()["hits"]
            local = [h.to_json() for h in search_chunks(settings, "ships", k=5, filters=filters)]
            assert [h["id"] for h in served] == [h["id"] for h in local]
            assert all(h["source_id"].startswith(filters.source_prefix or "") for h in served)
            assert all(h["page"] == filters.page for h in served if filters.page)
        assert client.post("/v1/search", json={"query": "ships", "source_prefix": "no-such-root/"}).json()["hits"] == []


def test_the_cli_searches_through_the_server_and_falls_back_in_process(server: Server) -> None:
    env = {**server.env(), "INDX_API_KEY": KEY}
    via_server = subprocess.run([INDX, "search", "deep-draught ships", "--json", "-k", "2", "--server", server.url],
                                env=env, capture_output=True, text=True, timeout=300, check=True)
    hits = json.loads(via_server.stdout)
    assert hits and "no server" not in via_server.stderr
    unreachable = f"http://127.0.0.1:{_free_port()}"
    fallback = subprocess.run([INDX, "search", "deep-draught ships", "--json", "-k", "2"],
                              env={**env, "INDX_SERVER": unreachable}, capture_output=True, text=True, timeout=300,
                              check=True)
    assert f"no server at {unreachable}" in fallback.stderr
    assert [h["id"] for h in json.loads(fallback.stdout)] == [h["id"] for h in hits]
    refused = subprocess.run([INDX, "search", "ships", "--server", server.url], env={**env, "INDX_API_KEY": "wrong"},
                             capture_output=True, text=True, timeout=300, check=False)
    assert refused.returncode == 1 and "403" in refused.stderr and "Traceback" not in refused.stderr


def test_chunk_answers_what_indx_chunk_json_prints(server: Server) -> None:
    path = next(p for p in sorted(server.corpus.rglob("*.md")))
    local = subprocess.run([INDX, "chunk", str(path), "--json"], capture_output=True, text=True, timeout=300,
                           check=True, env=server.env())
    with server.client() as client:
        served = client.post("/v1/chunk", params={"filename": path.name}, content=path.read_bytes())
    assert served.status_code == 200, served.text
    assert served.json() == json.loads(local.stdout)


def test_a_running_server_sees_what_a_later_ingest_commits(server: Server) -> None:
    phrase = "the lighthouse keeper polishes the brass quadrant every Tuesday at dawn"
    with server.client() as client:
        before = client.post("/v1/search", json={"query": phrase, "mode": "fts", "k": 1}).json()["hits"]
        assert all(phrase not in h["content"] for h in before)
        (server.corpus / "keeper.txt").write_text(f"Keeping the light.\n\nWe know {phrase}.\n")
        _ingest(server.home)
        after = client.post("/v1/search", json={"query": phrase, "mode": "fts", "k": 1}).json()["hits"]
    assert after and phrase in after[0]["content"]


def test_the_platforms_python_sdk_works_unchanged(server: Server) -> None:
    from alibabacloud_searchplat20240529.client import Client
    from alibabacloud_searchplat20240529.models import GetDocumentSplitRequest
    from alibabacloud_tea_openapi.models import Config
    from Tea.exceptions import TeaException

    def client(key: str) -> Client:
        return Client(Config(bearer_token=key, endpoint=f"127.0.0.1:{server.port}", protocol="http"))

    request = GetDocumentSplitRequest().from_map(SEED_BODY)
    result = client(KEY).get_document_split("default", "ops-document-split-001", request)
    # as in the seed's snippet
    doc_list = [{"id": chunk.meta.get("id"), "content": chunk.content} for chunk in result.body.result.chunks]
    assert len(doc_list) > 1 and all(d["id"] and d["content"] for d in doc_list)
    assert result.body.usage.token_count > 60 and result.body.request_id
    with pytest.raises(TeaException) as refused:
        client("OS-wrong").get_document_split("default", "ops-document-split-001", request)
    assert refused.value.code == "Forbidden"


def test_the_openapi_document_is_served(server: Server) -> None:
    schema = httpx.get(server.url + "/openapi.json").json()
    assert "/v3/openapi/workspaces/{workspace_name}/document-split/{service_id}" in schema["paths"]
    assert {"/v1/search", "/v1/chunk", "/healthz", "/readyz"} <= set(schema["paths"])


def test_without_keys_it_serves_only_on_loopback(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("INDX_API_KEYS", "INDX_API_KEYS_FILE")}
    env["INDX_HOME"] = str(tmp_path / "indx")
    done = subprocess.run([INDX, "serve", "--host", "0.0.0.0", "--port", str(_free_port())], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "without API keys" in done.stderr and "Traceback" not in done.stderr
    missing = subprocess.run([INDX, "serve", "--port", str(_free_port())],
                             env={**env, "INDX_API_KEYS_FILE": str(tmp_path / "nope")},
                             capture_output=True, text=True, timeout=60, check=False)
    assert missing.returncode == 2 and "cannot read it" in missing.stderr


def test_healthz_answers_before_the_index_exists_and_readyz_says_why_not(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "INDX_HOME": str(tmp_path / "indx")}
    process = subprocess.Popen([INDX, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        # generous timeouts: while the model loads its imports hold the GIL for seconds on a loaded machine
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=60)
        assert ready.status_code == 503 and ready.json()["code"] == "ServiceUnavailable"
        hits = httpx.post(f"http://127.0.0.1:{port}/v1/search", json={"query": "x"}, timeout=60)
        assert hits.status_code in (200, 503)  # no index: no hits (200), or still loading (503), never a 500
    finally:
        process.terminate()
        process.wait(timeout=30)


def _imports_torch(args: list[str], env: dict[str, str]) -> bool:
    """Whether `indx ARGS` imports torch, read from the interpreter's own import log."""
    code = f"import sys; sys.argv = ['indx', *{args!r}]; from indx_assets.app.cli import main; main()"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    return any(line.rsplit("|", 1)[-1].strip() in ("torch", "sentence_transformers") for line in done.stderr.splitlines())


def test_searching_through_a_server_imports_no_torch(server: Server) -> None:
    env = {**server.env(), "INDX_API_KEY": KEY}
    assert not _imports_torch(["search", "ships", "--server", server.url], env)
    assert _imports_torch(["search", "ships", "-k", "1"], env)  # in-process it must: the check can fail


@pytest.mark.parametrize("args", [["--help"], ["search", "--help"], ["serve", "--help"], ["status"], ["stats"],
                                  ["chunk", str(ROOT / "data/sample/notes/tea-harvest.txt")],
                                  ["split", str(ROOT / "data/sample/notes/tea-harvest.txt")]])
def test_commands_that_embed_nothing_import_no_torch(args: list[str], tmp_path: Path) -> None:
    assert not _imports_torch(args, {**os.environ, "INDX_HOME": str(tmp_path / "indx")})
