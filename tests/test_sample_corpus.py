"""`data/sample/` is exactly what `scripts/make_sample_corpus.py` writes.

The script is run as a user runs it, into a temporary directory. Every generator in it is
deterministic (text as written, the deck re-zipped with fixed dates, the PDF drawn with
reportlab's invariant mode), so every committed file must match the script's output byte
for byte, and no committed file may exist that the script does not write.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from indx_assets.pipeline.media import detect_media_type, is_text_type
from indx_assets.pipeline.read_and_chunk import encode_file, to_document

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "make_sample_corpus.py"
SAMPLE = ROOT / "data" / "sample"


def _text_files(root: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        content = path.read_bytes()
        if is_text_type(detect_media_type(content, path.name)):
            files[path.relative_to(root).as_posix()] = content
    return files


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return out


def _all_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_script_regenerates_exactly_the_committed_files(generated: Path) -> None:
    written, committed = _all_files(generated), _all_files(SAMPLE)
    assert sorted(written) == sorted(committed), "data/sample is out of date: run python scripts/make_sample_corpus.py"
    for name, content in written.items():
        assert content == committed[name], f"{name} differs from the script's output"


def test_the_sample_corpus_has_what_the_issue_promises(generated: Path) -> None:
    files = _text_files(generated)
    media = {detect_media_type(content, name) for name, content in files.items()}
    assert {"text/markdown", "text/html", "text/plain"} <= media
    assert len(files) >= 4
    texts = {name: content.decode("utf-8") for name, content in files.items()}
    markdown = "\n".join(t for n, t in texts.items() if n.endswith(".md"))
    html = "\n".join(t for n, t in texts.items() if n.endswith(".html"))
    assert "\n## " in markdown  # multi-section
    assert "\n| --- |" in markdown and "<table>" in html  # tables
    assert "\n```" in markdown  # a code block
    assert any(not t.isascii() for t in texts.values())  # non-ASCII text


def test_every_sample_text_file_chunks() -> None:
    for name, _ in _text_files(SAMPLE).items():
        document = to_document(encode_file(SAMPLE / name, source_id=name))
        assert document.metadata["status"] == "ok", name
        assert document.chunks, name
