"""A long sheet read and cut page by page (`stages.read_pages`, `stages.cut_chunks`): what is
stored is what reading and cutting it whole gives (rows, data versions, fidelity), while the
pages' regions and the chunks are never all in memory at once.

Real files (a generated ledger, as .xlsx and .csv), the real chain, real Parquet files.
"""

import csv
import io
import tracemalloc
from pathlib import Path

import openpyxl
import pytest
from fixtures import make_sheets as fx
from upath import UPath

from indx_assets.pipeline.chain import load_chain
from indx_assets.pipeline.fidelity import measure, summary
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.pipeline.readers import ReaderConfig
from indx_assets.pipeline.readers.sheets import PAGE_CHARS, SheetSpool, SheetStream, stream_sheets
from indx_assets.pipeline.schema import FIDELITY_KEY, chunks_table, digest, pages_table
from indx_assets.wiring.assets import stages
from indx_assets.wiring.resources.storage import StorageResource


def _csv(xlsx: bytes) -> bytes:
    sheet = openpyxl.load_workbook(io.BytesIO(xlsx), read_only=True).worksheets[0]
    out = io.StringIO()
    csv.writer(out).writerows(sheet.iter_rows(values_only=True))
    return out.getvalue().encode()


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("ledgers")
    content = fx.ledger(12_000)  # about 540,000 characters: three pages
    paths = {"xlsx": tmp / "ledger.xlsx", "csv": tmp / "ledger.csv"}
    paths["xlsx"].write_bytes(content)
    paths["csv"].write_bytes(_csv(content))
    return paths


@pytest.mark.parametrize("kind", ["xlsx", "csv"])
def test_a_sheet_read_and_cut_in_steps_stores_what_reading_and_cutting_it_whole_gives(
        tmp_path: Path, ledgers: dict[str, Path], kind: str) -> None:
    path = ledgers[kind]
    source = f"corpus/{path.name}"
    storage = StorageResource(root=str(tmp_path))
    stages.store_source(source, UPath(path), storage)
    read, parsed = stages.read_pages(source, storage, ReaderConfig())
    cut = stages.cut_chunks(source, storage, load_chain(), parsed)

    whole = encode_bytes(path.read_bytes(), source_id=source, name=path.name)
    assert len(whole.read.pages) >= 3, "the sheet must be several pages long"
    document = to_document(whole)
    # the stored rows and the data versions are the whole read's and cut's (no re-embedding on upgrade)
    assert storage.read("page_outputs", source).equals(pages_table(source, whole.read))
    assert read.data_version == digest(pages_table(source, whole.read))
    assert read.metadata["pages"] == len(whole.read.pages) and read.metadata["status"] == whole.read.status
    stored = storage.read("chunk_map", source)
    assert stored.equals(chunks_table(document))
    assert cut.data_version == digest(chunks_table(document))
    fidelity = summary(measure(source, whole.read.pages, document.chunks))
    assert cut.metadata["fidelity"] == fidelity and stored.schema.metadata[FIDELITY_KEY]
    assert cut.metadata["chunks"] == len(document.chunks)


def _peaks(tmp: Path, rows: int, chain: object) -> tuple[int, int, int]:
    """Python's peak memory reading and then cutting a `rows`-row ledger, and its characters."""
    tmp.mkdir()
    path = tmp / f"ledger-{rows}.xlsx"
    path.write_bytes(fx.ledger(rows))
    source = f"corpus/{path.name}"
    storage = StorageResource(root=str(tmp / "assets"), run_cache_mb=0)
    stages.store_source(source, UPath(path), storage)
    tracemalloc.start()
    try:
        _, parsed = stages.read_pages(source, storage, ReaderConfig())
        read_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        stages.cut_chunks(source, storage, chain, parsed)
        cut_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    characters = sum(len(t or "") for t in storage.read("page_outputs", source).column("text").to_pylist())
    return read_peak, cut_peak, characters


def test_reading_and_cutting_a_sheet_three_times_as_long_takes_no_more_memory(tmp_path: Path) -> None:
    chain = load_chain()
    _peaks(tmp_path / "warm", 24_000, chain)  # the tokenizer's and fidelity's word caches (bounded) filled
    short, long = _peaks(tmp_path / "short", 8_000, chain), _peaks(tmp_path / "long", 24_000, chain)
    assert long[2] > 2.5 * short[2] and long[2] > 4 * PAGE_CHARS
    # cut whole, every page's chunks were held at once: 13.6 MB, then 18.4 MB for 3x the rows
    assert long[0] < 1.3 * short[0], f"reading: {short[0] / 1e6:.1f} MB, then {long[0] / 1e6:.1f} MB for 3x the rows"
    assert long[1] < 1.3 * short[1], f"cutting: {short[1] / 1e6:.1f} MB, then {long[1] / 1e6:.1f} MB for 3x the rows"


def test_a_spool_that_cannot_be_written_fails_the_run_not_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    # a full disk while spooling is the run's failure (tried again), never the file's stored
    # `failed` status, which would leave the sheet unindexed until its bytes change
    def full(self: SheetSpool, sheet: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(SheetSpool, "add", full)
    stream = stream_sheets(b"a,b\n1,2\n", "text/csv")
    assert isinstance(stream, SheetStream)
    with pytest.raises(OSError, match="No space left"):
        list(stream.pages())


def test_a_one_page_sheet_read_in_steps_is_cut_without_parsing_the_file_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from indx_assets.pipeline.readers import sheets as readers

    path = tmp_path / "budget.xlsx"
    path.write_bytes(fx.ledger(200))
    source = f"corpus/{path.name}"
    storage = StorageResource(root=str(tmp_path / "assets"))
    stages.store_source(source, UPath(path), storage)
    _, parsed = stages.read_pages(source, storage, ReaderConfig())
    assert isinstance(parsed, SheetSpool) and storage.rows("page_outputs", source) == 1
    parses = []
    parse = readers.sheets_of
    monkeypatch.setattr(readers, "sheets_of", lambda *args: parses.append(args) or parse(*args))
    stages.cut_chunks(source, storage, load_chain(), parsed)
    # the chunker took the read's spooled sheet: before, it parsed the workbook a second time
    assert not parses, "the sheet was parsed again to be cut"
    whole = encode_bytes(path.read_bytes(), source_id=source, name=path.name)
    assert storage.read("chunk_map", source).equals(chunks_table(to_document(whole)))


def test_a_long_sheet_spools_under_the_data_directory_not_the_system_temporary_one(
        tmp_path: Path, ledgers: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    # a system temporary directory that cannot take a file (full, or gone): the spools of a long
    # sheet's pages, sheet parts and chunks are under the storage root, beside what they become
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-tmp"))
    path = ledgers["xlsx"]
    source = f"corpus/{path.name}"
    storage = StorageResource(root=str(tmp_path / "assets"))
    stages.store_source(source, UPath(path), storage)
    _, parsed = stages.read_pages(source, storage, ReaderConfig())
    stages.cut_chunks(source, storage, load_chain(), parsed)
    whole = encode_bytes(path.read_bytes(), source_id=source, name=path.name)
    assert storage.rows("page_outputs", source) >= 3
    assert storage.read("chunk_map", source).equals(chunks_table(to_document(whole)))
    assert list(Path(storage.scratch_dir()).iterdir()) == [], "a spool has no name: none is left behind"
