"""OpenDocument: `.odt`, `.ods` and `.odp` read onto the Word, workbook and deck models and cut
by the `docx`, `sheets` and `pptx` chunkers' rules.

The project's own files are written from ODF XML (`tests/fixtures/make_odf.py`); LibreOffice
headless (an independent producer, installed by `.ci/run`) converts the project's Word, Excel
and PowerPoint fixtures, which must then read as their Office originals do. Hostile files get a
recorded status in bounded time and memory.
"""

from pathlib import Path

import pytest
from fixtures import make_docx, make_odf, make_pptx, make_sheets
from metered import cost

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.chain_runner import run_chain
from indx_assets.pipeline.fidelity import measure
from indx_assets.pipeline.media import ODP, ODS, ODT, detect_media_type
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.pipeline.readers import ReaderConfig, read_document
from indx_assets.pipeline.readers.docx import DOCX
from indx_assets.pipeline.readers.pptx import PPTX
from indx_assets.pipeline.readers.sheets import XLSX

MAX_PEAK_BYTES = 16 << 20
MAX_SECONDS = 2.0


def _document(content: bytes, name: str):  # type: ignore[no-untyped-def]
    return to_document(encode_bytes(content, source_id=name, name=name, chain=load_chain(ChainConfig())))


def _chunks(doc) -> list[tuple]:  # type: ignore[no-untyped-def,type-arg]
    return [(c.page, c.locator, c.chunk_type, c.content) for c in doc.chunks]


def _fidelity_passes(content: bytes, media_type: str, name: str) -> None:
    read = read_document(content, media_type, ReaderConfig())
    fidelity = measure(name, read.pages, _document(content, name).chunks)
    assert fidelity.passes, fidelity.to_json()
    assert fidelity.totals()["foreign"] == 0 and fidelity.totals()["lost"] == 0


def _converted(content: bytes, suffix: str, tmp: Path) -> bytes:
    converted = make_odf.converted(content, suffix, tmp)
    if converted is None:
        pytest.skip("LibreOffice (soffice with Writer, Calc and Impress) is not installed; .ci/run installs it")
    return converted


def _mimetype_last(content: bytes) -> bytes:
    """`content` rezipped with its `mimetype` entry last and deflated (as some tools write it):
    no fixed signature at the start of the file then says what it is."""
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(content)) as src:
        names = [n for n in src.namelist() if n != "mimetype"] + ["mimetype"]
        parts = {n: src.read(n) for n in names}
    return make_pptx.zip_of(parts)


@pytest.mark.parametrize(("make", "media_type"), [(make_odf.text, ODT), (make_odf.spreadsheet, ODS),
                                                  (make_odf.presentation, ODP)], ids=["odt", "ods", "odp"])
def test_opendocument_files_are_detected_by_their_mimetype_entry(make, media_type: str) -> None:  # type: ignore[no-untyped-def]
    assert detect_media_type(make(), "file.bin") == media_type
    assert detect_media_type(_mimetype_last(make()), "file.bin") == media_type


def test_a_text_document_chunks_like_a_word_document() -> None:
    fx = make_odf
    doc = _document(fx.text(), "minutes.odt")
    table = "\n".join(" | ".join(row) for row in fx.TABLE) + f"\n{fx.MERGED} | -"
    intro = "\n\n".join((fx.TITLE, f"{fx.INTRO}.", *fx.ITEMS, fx.SUBITEM))
    assert _chunks(doc) == [
        (1, "page:1:char:23-133", "content", intro),
        (1, "table:page:1:char:135-206", "table", table),
        (1, "footnote:page:1:char:208-228", "footnote", fx.NOTE),
        (1, "image:page:1/chunk:3", "image", ""),
        # the heading's paragraph style breaks the page before it
        (2, "page:2:char:23-68", "content", f"{fx.SECOND}\n\n{fx.SECOND_TEXT}"),
    ]
    first = doc.chunks[0]
    assert first.metadata["page_header"] == [fx.HEADER] and first.metadata["section_path"] == [fx.TITLE]
    assert "ListItem" in first.metadata["element_types"]
    assert doc.chunks[1].metadata["text_as_html"].startswith("<table><thead><tr><th>Motion</th>")
    assert 'colspan="2"' in doc.chunks[1].metadata["text_as_html"]
    assert doc.chunks[3].metadata["alt_text"] == fx.PICTURE_ALT and doc.chunks[3].image.startswith(b"\x89PNG")
    assert {c.chunker for c in doc.chunks} == {"odt"}
    _fidelity_passes(fx.text(), ODT, "minutes.odt")


def test_the_word_report_converted_by_libreoffice_reads_as_the_docx_does(tmp_path: Path) -> None:
    report = make_docx.report()
    odt = _converted(report, ".docx", tmp_path)
    assert [p.text for p in read_document(odt, ODT).pages] == [p.text for p in read_document(report, DOCX).pages]
    assert _chunks(_document(odt, "report.odt")) == _chunks(_document(report, "report.docx"))
    _fidelity_passes(odt, ODT, "report.odt")


def test_a_spreadsheet_chunks_like_a_workbook_hidden_parts_left_out() -> None:
    fx = make_odf
    content = fx.spreadsheet()
    read = read_document(content, ODS, ReaderConfig())
    assert [(p.status, dict(p.metadata)) for p in read.pages] == [
        ("ok", {"hidden": False, "sheet": "Ledger", "hidden_rows": [3]}),
        ("empty", {"hidden": True, "sheet": "Hidden"}),
    ]
    table = "\n".join(" | ".join(row) for row in fx.SHEET_ROWS)  # stored values: 1250000, not 1,250,000.0
    assert _chunks(_document(content, "ledger.ods")) == [(1, "table:page:1:char:0-103", "table", table)]
    assert fx.HIDDEN_ROW[0] not in read.content and fx.SECRET_SHEET not in read.content
    _fidelity_passes(content, ODS, "ledger.ods")


def test_the_budget_converted_by_libreoffice_reads_as_the_xlsx_does(tmp_path: Path) -> None:
    budget = make_sheets.budget()
    ods = _converted(budget, ".xlsx", tmp_path)
    ods_read, xlsx_read = read_document(ods, ODS), read_document(budget, XLSX)
    assert [dict(p.metadata) for p in ods_read.pages] == [dict(p.metadata) for p in xlsx_read.pages]
    # LibreOffice computed the Total formulas the xlsx never cached: each row gains its total
    ods_lines, xlsx_lines = ods_read.pages[0].text.splitlines(), xlsx_read.pages[0].text.splitlines()
    assert [o.startswith(x) for o, x in zip(ods_lines, xlsx_lines, strict=True)] == [True] * len(xlsx_lines)
    totals = {r[0]: r[1] + r[2] for r in make_sheets.ROWS}
    assert "Salaries | 1200000 | 1250000 | 2450000" in ods_lines and totals["Salaries"] == 2450000
    _fidelity_passes(ods, ODS, "budget.ods")


def test_a_presentation_chunks_like_a_deck() -> None:
    fx = make_odf
    content = fx.presentation()
    read = read_document(content, ODP, ReaderConfig())
    assert [(p.reader, dict(p.metadata)) for p in read.pages] == [
        ("odf", {"hidden": False, "notes": fx.NOTES, "title": fx.SLIDE_TITLE}), ("odf", {"hidden": True})]
    doc = _document(content, "plan.odp")
    table = "\n".join(" | ".join(row) for row in fx.SLIDE_TABLE)
    # title first, then top-to-bottom, left-to-right; boxes from the frames over a 28 x 15.75 cm slide
    assert [(c.page, c.chunk_type, c.content, [round(v, 3) for v in c.bbox]) for c in doc.chunks] == [
        (1, "content", fx.SLIDE_TITLE, [0.036, 0.063, 0.964, 0.254]),
        (1, "content", fx.SLIDE_TEXT, [0.036, 0.317, 0.464, 0.571]),
        (1, "table", table, [0.536, 0.317, 0.893, 0.571]),
        (1, "image", "", [0.036, 0.762, 0.179, 0.952]),
        (2, "content", fx.HIDDEN_SLIDE, [0.036, 0.063, 0.75, 0.19]),
    ]
    assert doc.chunks[4].metadata["slide_hidden"] is True
    _fidelity_passes(content, ODP, "plan.odp")


def test_the_deck_converted_by_libreoffice_reads_as_the_pptx_does(tmp_path: Path) -> None:
    deck = make_pptx.deck()
    odp = _converted(deck, ".pptx", tmp_path)
    assert [p.text for p in read_document(odp, ODP).pages] == [p.text for p in read_document(deck, PPTX).pages]
    ours, theirs = _document(odp, "deck.odp"), _document(deck, "deck.pptx")
    shape = [(c.page, c.locator, c.chunk_type, c.content, c.bbox_reason) for c in theirs.chunks]
    assert [(c.page, c.locator, c.chunk_type, c.content, c.bbox_reason) for c in ours.chunks] == shape
    _fidelity_passes(odp, ODP, "deck.odp")


@pytest.mark.parametrize(
    ("make", "media_type"),
    [(make_odf.text, ODT), (make_odf.spreadsheet, ODS), (make_odf.presentation, ODP)], ids=["odt", "ods", "odp"])
def test_stored_pages_chunk_alike_without_the_readers_parse(make, media_type: str) -> None:  # type: ignore[no-untyped-def]
    content = make()
    read = read_document(content, media_type, ReaderConfig())
    chain = load_chain(ChainConfig())
    fresh = run_chain(chain, content, media_type, read.pages, read.parsed)
    assert run_chain(chain, content, media_type, read.pages) == fresh
    assert fresh.chunks and {c.chunker for c in fresh.chunks} == {{ODT: "odt", ODS: "ods", ODP: "odp"}[media_type]}


def _empty_then_content() -> bytes:
    """A row of 2**31 empty cells, then one with content: laid out, it would be a list of 2**31."""
    body = ('<office:spreadsheet><table:table table:name="Wide"><table:table-row>'
            '<table:table-cell table:number-columns-repeated="2147483647"/>'
            '<table:table-cell office:value-type="string"><text:p>far</text:p></table:table-cell>'
            "</table:table-row></table:table></office:spreadsheet>")
    return make_odf.package(ODS, make_odf._document(body))


@pytest.mark.parametrize(
    ("make", "media_type", "status", "reason"),
    [
        (lambda: make_odf.entity_bomb(ODT), ODT, "failed", "declares a DTD or entities"),
        (lambda: make_odf.entity_bomb(ODS), ODS, "failed", "declares a DTD or entities"),
        (lambda: make_odf.entity_bomb(ODP), ODP, "failed", "declares a DTD or entities"),
        (lambda: make_pptx.zip_bomb(make_odf.text()), ODT, "failed", "zip bomb"),
        (lambda: make_pptx.lying_zip(make_odf.spreadsheet()), ODS, "failed", "Bad CRC"),
        (lambda: make_odf.text()[:300], ODT, "failed", "corrupt or truncated"),
        (make_odf.encrypted, ODT, "encrypted", "password-protected"),
    ],
    ids=["odt-billion-laughs", "ods-billion-laughs", "odp-billion-laughs", "zip-bomb-64MiB", "lying-size-header",
         "truncated", "encrypted"],
)
def test_hostile_files_get_a_status_fast_in_bounded_memory(make, media_type: str, status: str,  # type: ignore[no-untyped-def]
                                                          reason: str) -> None:
    hostile = make()
    suffix = {ODT: ".odt", ODS: ".ods", ODP: ".odp"}[media_type]
    assert detect_media_type(hostile, f"bad{suffix}") == media_type

    def read_and_chunk():  # type: ignore[no-untyped-def]
        read = read_document(hostile, media_type, ReaderConfig())
        return read, run_chain(load_chain(ChainConfig()), hostile, media_type, read.pages, read.parsed)

    (read, chunked), elapsed, peak = cost(read_and_chunk)
    assert (read.status, read.pages, chunked.chunks) == (status, (), ())
    assert reason in (read.reason or "")
    assert elapsed < MAX_SECONDS and peak < MAX_PEAK_BYTES, (elapsed, peak)


@pytest.mark.parametrize(("make", "reason"), [(make_odf.repetition_bomb, "more than 1,000,000 cells"),
                                              (_empty_then_content, "past column 16,384")],
                         ids=["rows-repeated-1e6-by-1000", "cells-repeated-2e31"])
def test_a_repetition_bomb_fails_its_sheet_in_bounded_memory(make, reason: str) -> None:  # type: ignore[no-untyped-def]
    bomb = make()
    read, elapsed, peak = cost(lambda: read_document(bomb, ODS, ReaderConfig()))
    assert read.pages[0].status == "failed" and reason in (read.pages[0].reason or "")
    assert [p.text for p in read.pages[1:]] == (["Still | read"] if make is make_odf.repetition_bomb else [])
    assert elapsed < MAX_SECONDS and peak < MAX_PEAK_BYTES, (elapsed, peak)
