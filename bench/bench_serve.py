"""`indx serve` under load, on loopback only, against calling the same code in-process.

    python bench/bench_serve.py                        # 60 s per workload and concurrency (about 15 min)
    python bench/bench_serve.py --seconds 10 --concurrency 1 8
    python bench/bench_serve.py --concurrency 32 --workloads split-1mb --indx /tmp/old/indx   # another checkout's server

Workloads: the document split of seed 001's curl example and of a 1 MB Markdown file (the
opening megabyte of Chroma's finance and pubmed corpora), and search (vector, then hybrid) with
the 472 questions of Chroma's retrieval benchmark over its five corpora, ingested once into
`bench/out/serve-home` by `indx ingest`. For each concurrency and workload: requests/s, p50 and
p99 latency, errors and 5xx; the server's RSS at the start and the end of the run. Baselines
measured in the same run: `split_document` called in-process, one request after another, on the
same inputs (the split throughput at concurrency 8 is held against it), and the wall time of a
cold `indx search --server` (a new process, as a user runs it). Every loop is bounded in time
and in count, and talks only to 127.0.0.1.
"""

import argparse
import asyncio
import csv
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
CHROMA = SHARED / "eval" / "chroma"
SEED = SHARED / "seeds" / "001_5ec20ec03b38a566.txt"
HOME = HERE / "out" / "serve-home"
INDX = shutil.which("indx") or "indx"
KEY = "bench-key"
SPLIT = "/v3/openapi/workspaces/default/document-split/ops-document-split-001"
MAX_REQUESTS = 200_000  # per workload and concurrency: the time bound comes first on this machine
#: A request's time bound: at concurrency 32 a 1 MB split waits for the 31 before it (6 s each on
#: a loaded 2-core machine), so minutes, not seconds.
REQUEST_TIMEOUT = 1800

#: A workload's name on the command line (`--workloads`).
WORKLOAD_NAMES = {"split seed": "split-seed", "split 1 MB md": "split-1mb", "search vector": "search-vector",
                  "search hybrid": "search-hybrid"}
TARGETS = {"vector p50 ms at c=1": 50.0, "hybrid p50 ms at c=1": 100.0, "split c=8 / in-process": 0.8,
           "RSS growth": 0.10, "cold indx search s": 1.0}


def seed_content() -> str:
    """The document of seed 001's curl example, unescaped."""
    text = SEED.read_text(encoding="utf-8")
    raw = re.search(r'\\"content\\":\\"(.*?)\\",\s*\\"content_encoding', text, re.S)
    assert raw, "the seed's curl example was not found"
    return raw.group(1).replace("\\\\n", "\n").replace('\\"', '"')


def megabyte_markdown() -> str:
    text = (CHROMA / "corpora" / "finance.md").read_text() + "\n\n" + (CHROMA / "corpora" / "pubmed.md").read_text()
    cut = text.encode()[: 1024 * 1024].decode("utf-8", "ignore")
    return cut[: cut.rfind("\n\n")]


def questions() -> list[str]:
    with (CHROMA / "questions_df.csv").open(newline="") as f:
        return [row["question"] for row in csv.DictReader(f)]


def split_body(content: str, content_type: str) -> dict:
    return {"document": {"content": content, "content_type": content_type},
            "strategy": {"max_chunk_size": 300, "compute_type": "token"}}


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (uvicorn workers), in MB."""
    total = 0
    pids = [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            continue
    return total / 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_index() -> None:
    if (HOME / "lancedb" / "chunks.lance").is_dir():
        return
    print(f"ingesting Chroma's five corpora into {HOME} (once) ...", flush=True)
    subprocess.run([INDX, "ingest", str(CHROMA / "corpora")], env={**os.environ, "INDX_HOME": str(HOME)},
                   check=True, stdout=subprocess.DEVNULL)


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    server_errors: int = 0
    seconds: float = 0.0

    def row(self, name: str, concurrency: int, rss: float) -> str:
        lat = sorted(self.latencies) or [float("nan")]
        p50, p99 = lat[len(lat) // 2] * 1000, lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
        rate = len(self.latencies) / self.seconds if self.seconds else 0.0
        return (f"{name:<14} {concurrency:>3} {rate:>9.1f} {p50:>9.1f} {p99:>9.1f} {len(self.latencies):>8} "
                f"{self.errors:>6} {self.server_errors:>4} {rss:>7.0f}")

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies) * 1000

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds


async def load(url: str, path: str, bodies: list[dict], concurrency: int, seconds: float) -> Result:
    """`concurrency` clients, each sending the next body as soon as the last one is answered."""
    result = Result()
    deadline = time.perf_counter() + seconds
    counter = iter(range(MAX_REQUESTS))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {KEY}"}, limits=limits,
                                 timeout=REQUEST_TIMEOUT) as client:
        async def worker() -> None:
            for n in counter:
                if time.perf_counter() >= deadline:
                    return
                started = time.perf_counter()
                try:
                    response = await client.post(path, json=bodies[n % len(bodies)])
                except httpx.TransportError:  # refused, reset or timed out: an error, not the end of the run
                    result.errors += 1
                    continue
                if response.status_code == 200:
                    result.latencies.append(time.perf_counter() - started)
                else:
                    result.errors += 1
                    result.server_errors += response.status_code >= 500

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        result.seconds = time.perf_counter() - started
    return result


def in_process_split(bodies: list[dict], seconds: float) -> float:
    """Requests/s of `split_document` called directly, one after another, on the same bodies."""
    from indx_assets.pipeline.chunking.split import split_document
    from indx_assets.pipeline.tokenizer import minilm_tokenizer

    tokenizer = minilm_tokenizer()
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds and done < MAX_REQUESTS:
        body = bodies[done % len(bodies)]
        split_document(body["document"]["content"].encode(), content_type=body["document"]["content_type"],
                       max_chunk_size=300, compute_type="token", tokenizer=tokenizer)
        done += 1
    return done / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="per workload and concurrency")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--workers", type=int, default=1, help="indx serve --workers")
    parser.add_argument("--workloads", nargs="+", metavar="NAME",
                        help="only these workloads (split-seed split-1mb search-vector search-hybrid)")
    parser.add_argument("--indx", default=INDX,
                        help="the indx command that serves (another checkout's, for a baseline)")
    args = parser.parse_args()
    if not CHROMA.is_dir() or not SEED.is_file():
        sys.exit("needs ../shared/eval/chroma and ../shared/seeds (read in place)")
    ensure_index()

    split_bodies = [split_body(seed_content(), "text"), split_body(megabyte_markdown(), "markdown")]
    every_workload = {
        "split seed": (SPLIT, split_bodies[:1]),
        "split 1 MB md": (SPLIT, split_bodies[1:]),
        "search vector": ("/v1/search", [{"query": q, "k": 5, "mode": "vector"} for q in questions()]),
        "search hybrid": ("/v1/search", [{"query": q, "k": 5, "mode": "hybrid"} for q in questions()]),
    }
    chosen = args.workloads or list(WORKLOAD_NAMES.values())
    workloads = {name: w for name, w in every_workload.items() if WORKLOAD_NAMES[name] in chosen}
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "INDX_HOME": str(HOME), "INDX_API_KEYS": KEY}
    server = subprocess.Popen([*args.indx.split(), "serve", "--port", str(port), "--workers", str(args.workers)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        else:
            sys.exit("the server did not become ready in 300 s")
        rss_ready = rss_mb(server.pid)
        # What is measured is the warm server: each workload once, then searches for 10 s.
        for path, bodies in every_workload.values():
            httpx.post(url + path, json=bodies[0], headers={"Authorization": f"Bearer {KEY}"}, timeout=300)
        asyncio.run(load(url, "/v1/search", every_workload["search hybrid"][1], 1, 10.0))
        rss_start = rss_mb(server.pid)
        print(f"server pid {server.pid}, {args.workers} worker(s), RSS {rss_ready:.0f} MB when ready, "
              f"{rss_start:.0f} MB after warm-up; "
              f"{os.cpu_count()} cores shared with the load generator")
        print(f"{'workload':<14} {'c':>3} {'req/s':>9} {'p50 ms':>9} {'p99 ms':>9} {'ok':>8} {'errors':>6} {'5xx':>4} "
              f"{'RSS MB':>7}")
        results: dict[tuple[str, int], Result] = {}
        for concurrency in args.concurrency:
            for name, (path, bodies) in workloads.items():
                result = asyncio.run(load(url, path, bodies, concurrency, args.seconds))
                results[(name, concurrency)] = result
                print(result.row(name, concurrency, rss_mb(server.pid)), flush=True)
        rss_end = rss_mb(server.pid)

        mixed = [results[(n, 8)] for n in ("split seed", "split 1 MB md") if (n, 8) in results]
        # the baseline of split at c=8, so only when both splits ran at c=8
        direct = in_process_split(split_bodies, args.seconds) if len(mixed) == 2 else None
        cold = []
        for _ in range(3):
            started = time.perf_counter()
            subprocess.run([*args.indx.split(), "search", "what did the president say about fees", "--server", url, "--json"],
                           env={**env, "INDX_API_KEY": KEY}, check=True, stdout=subprocess.DEVNULL)
            cold.append(time.perf_counter() - started)
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:  # uvicorn waits for requests in flight: do not leave it behind
            server.kill()
            server.wait()

    errors = sum(r.errors for r in results.values())
    server_errors = sum(r.server_errors for r in results.values())
    summary = {
        "errors": errors, "5xx": server_errors, "rss_start_mb": round(rss_start), "rss_end_mb": round(rss_end),
        "RSS growth": round(rss_end / rss_start - 1, 3),
        "cold indx search s": round(statistics.median(cold), 2),
    }
    if (("search vector", 1) in results) and (("search hybrid", 1) in results):
        summary["vector p50 ms at c=1"] = round(results[("search vector", 1)].p50_ms, 1)
        summary["hybrid p50 ms at c=1"] = round(results[("search hybrid", 1)].p50_ms, 1)
    if direct is not None:
        summary["in-process split req/s (seed and 1 MB alternating)"] = round(direct, 2)
        # the in-process loop alternates the two inputs: compare with the same mix served
        served = 2 / (1 / mixed[0].rate + 1 / mixed[1].rate)
        summary["split c=8 req/s (same mix)"] = round(served, 2)
        summary["split c=8 / in-process"] = round(served / direct, 2)
    print(json.dumps(summary, indent=2))
    for name, target in TARGETS.items():
        if name in summary:
            value = summary[name]
            ok = value >= target if name == "split c=8 / in-process" else value <= target
            print(f"{'PASS' if ok else 'MISS'} {name}: {value} (target {'>=' if '/' in name else '<='} {target})")
    print(f"{'PASS' if errors == 0 and server_errors == 0 else 'MISS'} errors {errors}, 5xx {server_errors} (target 0)")


if __name__ == "__main__":
    main()
