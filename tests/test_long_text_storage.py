"""A page's long text is stored beside its `page_outputs` row (`text-{sha256}.txt`), not in it,
and comes back whole: the chunks cut from it are those cut straight from the file, after a
re-ingest of an edited file and after an ingest killed (kill -9) while the text was being
written or just before its row was: no half file and no text that no row names is left."""

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.pipeline.readers import read_document
from indx_assets.pipeline.schema import LONG_TEXT, digest, long_texts, pages_table, text_files
from indx_assets.wiring.assets.stages import CHUNK_MAP, PAGE_OUTPUTS, stored_pages
from indx_assets.wiring.resources.storage import StorageResource

SOURCE = "corpus/long.txt"

INGEST = """
import os, signal, sys
from indx_assets.app.runner import materialize_partitions, open_instance, sync_partitions
from indx_assets.wiring.resources import storage as stored
from indx_assets.wiring.settings import Settings

def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)

# The kill is real (SIGKILL of this process); only its moment is chosen, by wrapping the
# storage's own steps, since a moment inside a write cannot be hit reliably from outside.
if sys.argv[1] == "kill-in-text":  # after the first MiB of the page's text is in its temporary file
    stored._COPY_STEP = 1 << 16
    write_steps = stored._write_steps
    def dying(partial, blocks):
        def then_die():
            for i, block in enumerate(blocks):
                if i == 16 and partial.name.startswith(stored.TEXT_PREFIX):
                    die()
                yield block
        return write_steps(partial, then_die())
    stored._write_steps = dying
elif sys.argv[1] == "kill-before-row":  # the text is in place, its row not yet
    write = stored.StorageResource.write
    def dying_write(self, asset, source_id, table, beside=()):
        if asset == "page_outputs":
            die()
        return write(self, asset, source_id, table, beside)
    stored.StorageResource.write = dying_write
settings = Settings.from_env()
instance = open_instance(settings)
sync = sync_partitions(instance, settings)
results = materialize_partitions(instance, settings, sync.current, selection=["source_documents", "page_outputs", "chunk_map"])
assert all(r.success for r in results)
"""


def _long_file(path: Path, words: int, seed: str) -> bytes:
    """Over `LONG_TEXT` characters on page 1 (sentences, paragraphs, CRLF line ends, accents,
    CJK, an emoji, a JSON-escaped quote and backslash), then a form feed and a short page 2."""
    vocabulary = ["harbour", "tide", "wall", "crème", "brûlée", "漢字", "🙂", 'a "quote"', "back\\slash", seed]
    sentences = []
    for i in range(words // 12):
        body = " ".join(vocabulary[(i * 7 + k) % len(vocabulary)] for k in range(12))
        sentences.append(f"{body.capitalize()} {i}.")
    lines = "\r\n".join(" ".join(sentences[i:i + 6]) + ("\r\n" if i % 30 == 0 else "") for i in range(0, len(sentences), 6))
    content = (lines + "\f" + "A short second page about the harbour wall.\n").encode()
    path.write_bytes(content)
    return content


def _ingest(tmp_path: Path, how: str = "whole") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "INDX_HOME": str(tmp_path / "indx"), "INDX_CORPUS": str(tmp_path / "corpus")}
    return subprocess.run([sys.executable, "-c", INGEST, how], env=env, capture_output=True, text=True, timeout=900)


def _folder(tmp_path: Path) -> Path:
    storage = StorageResource(root=str(tmp_path / "indx" / "assets"))
    return Path(str(storage.path(PAGE_OUTPUTS, SOURCE).parent))


def _assert_stored_whole(tmp_path: Path, content: bytes) -> None:
    """The stored page text is the file's, its chunks those cut straight from the file, and
    beside the row lies exactly the one text it names."""
    storage = StorageResource(root=str(tmp_path / "indx" / "assets"))
    table = storage.read(PAGE_OUTPUTS, SOURCE)
    named = text_files(table.schema)
    assert list(named) == [1] and table.column("text").to_pylist()[0] is None, "page 1's text is beside its row"
    assert sorted(p.name for p in _folder(tmp_path).iterdir()) == sorted(["part-0.parquet", named[1]])
    direct = encode_bytes(content, source_id=SOURCE, name="long.txt")
    assert stored_pages(SOURCE, storage).pages == direct.read.pages
    stored_chunks = storage.read(CHUNK_MAP, SOURCE).select(["text", "page", "start_offset", "end_offset", "chunk_type"])
    expected = [(c.content or None, c.page, c.start_offset, c.end_offset, c.chunk_type) for c in to_document(direct).chunks]
    assert [tuple(r.values()) for r in stored_chunks.to_pylist()] == expected


def test_a_long_page_round_trips_beside_its_row_through_reingest_and_kills(tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    content = _long_file(tmp_path / "corpus" / "long.txt", 240_000, "first")
    assert len(content.split(b"\f")[0].decode()) > LONG_TEXT

    done = _ingest(tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    _assert_stored_whole(tmp_path, content)
    first = text_files(StorageResource(root=str(tmp_path / "indx" / "assets")).read(PAGE_OUTPUTS, SOURCE).schema)[1]

    # edited: the new text replaces the old, which no row names any more
    content = _long_file(tmp_path / "corpus" / "long.txt", 240_000, "second")
    done = _ingest(tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    _assert_stored_whole(tmp_path, content)
    assert not (_folder(tmp_path) / first).exists()

    for kill, seed in (("kill-in-text", "third"), ("kill-before-row", "fourth")):
        content = _long_file(tmp_path / "corpus" / "long.txt", 240_000, seed)
        killed = _ingest(tmp_path, kill)
        assert killed.returncode == -9, killed.stderr[-3000:]
        left = {p.name for p in _folder(tmp_path).iterdir()}
        assert any(n.endswith(".partial") for n in left) if kill == "kill-in-text" else len(left) == 3, left
        done = _ingest(tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        _assert_stored_whole(tmp_path, content)


def test_where_a_long_text_is_kept_does_not_move_the_data_version() -> None:
    """The same bytes are hashed for a page whose text is in its row and one whose text is
    beside it, so no stored document's data version moved when long texts moved out."""
    text = ("Harbour wall, crème \"brûlée\" \\ 漢字 🙂\r\n\t" * 40_000) + "end"
    read = read_document(text.encode() + b"\fpage two", "text/plain")
    long = long_texts(read)
    assert list(long) == [1]
    inline = pages_table(SOURCE, read)
    beside = pages_table(SOURCE, read, {1: "text-x.txt"})
    assert beside.column("text").to_pylist() == [None, "page two"]
    assert digest(beside, long) == digest(inline)
    assert digest(beside) != digest(inline)  # the text itself is what is hashed


@pytest.mark.parametrize("root", ["local", "memory://indx-test/long-text"])
def test_a_text_beside_a_row_round_trips_and_goes_with_the_row(root: str, tmp_path: Path) -> None:
    storage = StorageResource(root=str(tmp_path / "assets") if root == "local" else root)
    text = "é漢🙂\r\n" * 300_000
    name = storage.write_text(PAGE_OUTPUTS, SOURCE, text)
    storage.write(PAGE_OUTPUTS, SOURCE, pa.table({"page": [1]}), beside=[name])
    assert storage.read_text(PAGE_OUTPUTS, SOURCE, name) == text
    assert storage.delete(PAGE_OUTPUTS, SOURCE)
    assert not storage.path(PAGE_OUTPUTS, SOURCE).parent.exists() or not list(storage.path(PAGE_OUTPUTS, SOURCE).parent.iterdir())
