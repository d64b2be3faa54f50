"""`indx chunk FILE [--json] [--source-id ID]`: what a user sees for good and bad files."""

import json
import os
import random
import shutil
import subprocess
import sys
import uuid
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from chunker_dists import install
from typer.testing import CliRunner

import indx_assets.app.cli.chunk  # noqa: F401  (registers the command on the app)
from indx_assets.app.cli import app
from indx_assets.pipeline.chain import ENTRY_POINT_GROUP

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"
DOCUMENT_FIELDS = {"id", "source_id", "content", "chunks", "metadata"}
CHUNK_FIELDS = {
    "id", "source_id", "locator", "start_offset", "end_offset", "parent_ref", "chunk_type", "content",
    "metadata", "embedding", "page", "bbox", "bbox_reason", "chunker",
}

#: name -> (bytes, expected document status); every one must print, exit 0 and say its status
BAD_INPUT: dict[str, tuple[bytes, str]] = {
    "empty.txt": (b"", "empty"),
    "blank.txt": (b"  \n\t\n ", "empty"),
    "latin1.txt": ("Grüße, café crème à la française, très cher.".encode("latin-1"), "ok"),
    "wide.txt": ("UTF-16 text: Zürich\fpage two".encode("utf-16"), "ok"),
    "garbage.txt": (random.Random(3).randbytes(2048), "failed"),
    "scripts.html": (b"<html><head><script>x()</script></head><body><script>y()</script><style>p{}</style></body></html>", "empty"),
    "pages.txt": (b"first\fsecond\f\fthird", "ok"),
    "unicode.md": ("# Überschrift\n\n中文 — العربية — 🚋".encode(), "ok"),
}


def run(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, ["chunk", *args], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def run_json(*args: str) -> dict:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_output_has_the_document_and_chunk_fields() -> None:
    path = SAMPLE / "notes" / "tea-harvest.txt"
    doc = run_json(str(path), "--source-id", "notes/tea-harvest.txt")
    assert DOCUMENT_FIELDS <= set(doc)
    assert doc["source_id"] == "notes/tea-harvest.txt"
    assert str(uuid.UUID(doc["id"])) == doc["id"]
    assert doc["content"] == path.read_text(encoding="utf-8")
    meta = doc["metadata"]
    assert meta["media_type"] == "text/plain" and meta["status"] == "ok"
    assert meta["pages"] == [
        {"page": 1, "status": "ok", "reader": "text", "reason": None},
        {"page": 2, "status": "ok", "reader": "text", "reason": None},
    ]
    installed = {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert set(meta["chunkers"]) <= {n for n in installed} | {n for n in meta["chunkers"] if n.split(".")[0] in installed}
    assert meta["chain"].startswith("chain-")
    assert doc["chunks"]
    for chunk in doc["chunks"]:
        assert CHUNK_FIELDS <= set(chunk)
        assert chunk["source_id"] == doc["source_id"] and chunk["parent_ref"] == doc["id"]
        assert chunk["chunker"] in meta["chunkers"]
        assert chunk["page"] in (1, 2)
        assert (chunk["bbox"] is None) != (chunk["bbox_reason"] is None)
        if chunk["bbox"] is not None:
            assert len(chunk["bbox"]) == 4 and all(isinstance(v, float) for v in chunk["bbox"])
        if chunk["start_offset"] is not None:
            assert doc["content"][chunk["start_offset"]:chunk["end_offset"]] == chunk["content"]


def test_the_table_shows_page_locator_chunker_reason_and_text() -> None:
    result = run(str(SAMPLE / "notes" / "tea-harvest.txt"))
    assert result.exit_code == 0
    out = result.stdout
    assert "status=ok" in out and "page 2: ok by text" in out
    assert "no_geometry" in out and "Tea harvest notes" in out
    assert "chunks" in out.splitlines()[-1]


@pytest.mark.parametrize("name", list(BAD_INPUT))
def test_bad_input_gets_a_clear_status_and_never_crashes(tmp_path: Path, name: str) -> None:
    content, status = BAD_INPUT[name]
    path = tmp_path / name
    path.write_bytes(content)
    doc = run_json(str(path))
    assert doc["metadata"]["status"] == status
    if status != "ok":
        assert doc["chunks"] == []
        assert doc["metadata"]["reason"]
    text = run(str(path))
    assert text.exit_code == 0
    assert f"status={status}" in text.stdout


def test_a_pdf_named_txt_is_reported_as_pdf_not_read_as_text(tmp_path: Path) -> None:
    path = tmp_path / "invoice.txt"
    path.write_bytes(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n")
    doc = run_json(str(path))
    meta = doc["metadata"]
    assert meta["media_type"] == "application/pdf"
    # `unsupported` without a PDF reader, `failed` with one: a clear status either way
    assert meta["status"] not in ("ok", "empty") and meta["reason"]
    assert doc["chunks"] == []
    assert "obj" not in doc["content"]
    assert run(str(path)).exit_code == 0


def test_form_feeds_make_pages_in_the_output(tmp_path: Path) -> None:
    path = tmp_path / "pages.txt"
    path.write_bytes(b"first\fsecond\f\fthird")
    doc = run_json(str(path))
    assert [(p["page"], p["status"]) for p in doc["metadata"]["pages"]] == [
        (1, "ok"), (2, "ok"), (3, "empty"), (4, "ok")]
    assert {c["page"] for c in doc["chunks"]} == {1, 2, 4}


def test_text_that_looks_like_markup_is_printed_as_is(tmp_path: Path) -> None:
    path = tmp_path / "[bold]notes.txt"
    path.write_text("Arrays: a[/] and [bold]not bold[/bold] and [link=x]", encoding="utf-8")
    result = run(str(path))
    assert result.exit_code == 0, result.output
    assert "[bold]notes.txt" in result.stdout
    for fragment in ("a[/]", "[bold]not", "bold[/bold]", "[link=x]"):  # the table may wrap the text
        assert fragment in result.stdout


def test_with_every_chunker_disabled_nothing_is_chunked_and_the_command_says_why(tmp_path: Path) -> None:
    # The honest empty chain for a command line: the user's own chain config disables every
    # installed entry point (the library's bare-install path, discovery over no entry points,
    # is covered in test_chain). The command must not claim nothing is installed.
    installed = sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})
    env = {"INDX_CHAIN": json.dumps({"disabled": installed})}
    path = SAMPLE / "notes" / "tea-harvest.txt"
    result = run(str(path), env=env)
    assert result.exit_code == 0
    said = " ".join(result.stdout.split())  # rich wraps the line at the terminal's width
    assert "No chunker is enabled" in said and "nothing was chunked" in said
    doc = json.loads(run(str(path), "--json", env=env).stdout)
    assert doc["metadata"]["chunkers"] == [] and doc["chunks"] == []
    assert doc["metadata"]["unclaimed_pages"] == [1, 2]
    assert doc["metadata"]["status"] == "ok"


def test_a_chain_config_mistake_is_an_error_message_not_a_traceback() -> None:
    result = run(str(SAMPLE / "notes" / "tea-harvest.txt"), env={"INDX_CHAIN": '{"disabled": ["nonesuch"]}'})
    assert result.exit_code == 2
    assert "nonesuch" in result.stderr and "Traceback" not in result.output


def test_a_missing_file_or_an_empty_source_id_is_a_usage_error(tmp_path: Path) -> None:
    assert run(str(tmp_path / "missing.txt")).exit_code == 2
    assert run(str(SAMPLE / "notes" / "tea-harvest.txt"), "--source-id", " ").exit_code == 2


def test_ids_follow_the_source_id_not_the_path(tmp_path: Path) -> None:
    original = SAMPLE / "guides" / "chunking-primer.md"
    moved = tmp_path / "moved.md"
    shutil.copyfile(original, moved)
    a = run_json(str(original), "--source-id", "guides:primer")
    b = run_json(str(moved), "--source-id", "guides:primer")
    c = run_json(str(moved))
    assert [x["id"] for x in a["chunks"]] == [x["id"] for x in b["chunks"]]
    assert a["id"] == b["id"] != c["id"]


def test_a_third_party_chunker_cuts_what_the_command_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path / "site", monkeypatch, distribution="acme-chunkers", chunkers={"acme": "claims_all"})
    doc = run_json(str(SAMPLE / "notes" / "tea-harvest.txt"))
    assert doc["metadata"]["chunkers"][0] == "acme"
    assert [c["chunker"] for c in doc["chunks"]] == ["acme", "acme"]
    assert doc["chunks"][0]["content"].startswith("acme: Tea harvest notes")


def test_the_installed_indx_script_runs_the_command() -> None:
    script = Path(sys.executable).with_name("indx")
    if not script.exists():
        pytest.skip("the indx console script is not installed next to this interpreter")
    env = {k: v for k, v in os.environ.items() if k != "INDX_CHAIN"}
    done = subprocess.run(
        [str(script), "chunk", str(SAMPLE / "articles" / "lighthouses.html"), "--json"],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["metadata"]["media_type"] == "text/html"
    assert "Fresnel" in doc["content"] and "analytics" not in doc["content"]
    assert "this text is hidden" not in doc["content"]


def test_a_file_no_reader_supports_exits_non_zero_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "archive.zip"
    shutil.make_archive(str(tmp_path / "archive"), "zip", SAMPLE / "notes")
    for args in ((str(path),), (str(path), "--json")):
        result = run(*args)
        assert result.exit_code == 1, result.output
        assert "no reader supports it" in result.stderr and "application/zip" in result.stderr


def test_a_command_line_imports_only_its_command_yet_help_lists_every_command() -> None:
    # `indx chunk ...` imports the chunk command's module alone (the others' imports cost a
    # tenth of a second of its start); help and a mistyped name still see every command
    from indx_assets.app.cli import COMMAND_MODULES

    indx = ("import sys\nfrom indx_assets.app.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "from indx_assets.app.cli import COMMAND_MODULES\n"
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('indx_assets.app.cli.')\n"
            "             and m.rsplit('.', 1)[1] in COMMAND_MODULES))")  # cli.errors is the group's, not a command

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", indx, *args], capture_output=True, text=True, check=True)

    assert run("chunk", "--help").stdout.strip().splitlines()[-1] == "['chunk']"
    listed = run("--help").stdout
    assert all(f" {name} " in listed for name in COMMAND_MODULES)
    assert "Did you mean 'chunk'" in run("chunkk").stderr


def test_chunking_a_file_loads_no_search_table_library() -> None:
    # `indx chunk` reads and cuts: the table's schema (pyarrow, numpy) is the store's and the
    # search's, a third of a second of every start when loaded for nothing
    pdf = next((SAMPLE / "handbooks").glob("*.pdf"))
    indx = ("import sys\nfrom indx_assets.app.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pyarrow', 'numpy', 'indx_assets.app.search') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", indx, "chunk", str(pdf)], capture_output=True, text=True, check=True)
    assert "chunks" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"
