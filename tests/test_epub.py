"""EPUB: the `epub` reader's chapters and the `epub` chunker's pieces.

The book is written by the project's own code (`tests/fixtures/make_epub.py`, zipfile) with a
navigation document, a spine order unlike the manifest's, a list, a table and a picture; a book
pandoc (Debian's, an independent producer) wrote must read alike. DRM and hostile books get a
recorded status in bounded time and memory.
"""

from pathlib import Path

import pytest
from fixtures import make_epub as fx
from fixtures import make_pptx
from metered import cost

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.chunkers.epub import EpubChunker
from indx_assets.pipeline.fidelity import measure
from indx_assets.pipeline.media import EPUB, detect_media_type
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.pipeline.readers import ReaderConfig, read_document

MAX_PEAK_BYTES = 16 << 20
MAX_SECONDS = 2.0


def _document(content: bytes, name: str = "book.epub"):  # type: ignore[no-untyped-def]
    return to_document(encode_bytes(content, source_id=name, name=name, chain=load_chain(ChainConfig())))


def _fidelity_passes(content: bytes) -> None:
    read = read_document(content, EPUB, ReaderConfig())
    fidelity = measure("book.epub", read.pages, _document(content).chunks)
    assert fidelity.passes, fidelity.to_json()
    assert fidelity.totals()["foreign"] == 0 and fidelity.totals()["lost"] == 0


def test_a_chapter_s_long_navigation_title_names_its_chunks_in_a_few_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each chunk of a chapter carries its navigation title (`chapter_title`, `section_title`,
    the head of `section_path`): a title of 60 KB is named by its first words (`section_name`)."""
    from indx_assets.pipeline.chunkers.base import SECTION_NAME_MAX_CHARS, section_name

    title = " ".join(f"Keeping{i}" for i in range(6000))
    monkeypatch.setattr(fx, "NAV_TWO", title)
    (chunk,) = [c for c in _document(fx.book()).chunks if c.page == 2]
    name = section_name(title)
    assert len(name) <= SECTION_NAME_MAX_CHARS + 1 and name.startswith("Keeping0 Keeping1 ")
    assert (chunk.metadata["chapter_title"], chunk.metadata["section_title"], chunk.metadata["section_path"]) == (
        name, name, [name])


def test_an_epub_is_detected_by_its_mimetype_entry_wherever_it_is() -> None:
    assert detect_media_type(fx.book(), "book.bin") == EPUB
    # some tools zip `mimetype` after the rest: no signature at the file's start then says EPUB
    assert detect_media_type(make_pptx.zip_of({**fx._parts(), "mimetype": b"application/epub+zip"}), "book.bin") == EPUB


def test_the_book_chunks_exactly_chapters_in_spine_order() -> None:
    doc = _document(fx.book())
    table = "\n".join(" | ".join(row) for row in fx.TABLE)
    got = [(c.page, c.locator, c.chunk_type, c.content, c.metadata.get("section_path")) for c in doc.chunks]
    assert got == [
        (1, "page:1:char:0-140", "content", "\n\n".join((fx.HEADING_ONE, fx.TEXT_ONE, *fx.ITEMS)),
         [fx.NAV_ONE, fx.HEADING_ONE]),
        (1, "table:page:1:char:142-191", "table", table, [fx.NAV_ONE, fx.HEADING_ONE]),
        (1, "image:page:1/chunk:2", "image", "", None),
        # a chapter without a heading of its own: the navigation's title is its section
        (2, "page:2:char:0-74", "content", fx.TEXT_TWO, [fx.NAV_TWO]),
    ]
    assert doc.chunks[3].metadata["section_title"] == fx.NAV_TWO
    image = doc.chunks[2]
    assert image.image.startswith(b"\x89PNG") and image.metadata["alt_text"] == fx.ALT
    assert {c.chunker for c in doc.chunks} == {"epub"}
    pages = read_document(fx.book(), EPUB, ReaderConfig()).pages
    assert [p.metadata["title"] for p in pages] == [fx.NAV_ONE, fx.NAV_TWO]  # the navigation's, not the headings'
    assert doc.metadata["title"] == fx.TITLE
    _fidelity_passes(fx.book())


def test_a_book_written_by_pandoc_reads_alike(tmp_path: Path) -> None:
    content = fx.by_pandoc(tmp_path)
    if content is None:
        pytest.skip("pandoc is not installed; .ci/run installs it")
    doc = _document(content)
    chapters = [c for c in doc.chunks if c.metadata.get("chapter_title")]
    assert [(c.metadata["chapter_title"], c.content) for c in chapters] == [
        (fx.NAV_ONE, "\n\n".join((fx.NAV_ONE, fx.TEXT_ONE, *fx.ITEMS))),
        (fx.NAV_TWO, f"{fx.NAV_TWO}\n\n{fx.TEXT_TWO}"),
    ]
    assert chapters[0].metadata["section_path"] == [fx.NAV_ONE]  # the heading says the nav title: once
    _fidelity_passes(content)


def test_stored_pages_chunk_alike_without_the_readers_parse() -> None:
    content = fx.book()
    read = read_document(content, EPUB, ReaderConfig())
    chunker = EpubChunker()
    assert chunker.chunk(content, EPUB, read.pages) == chunker.chunk(content, EPUB, read.pages, parsed=read.parsed)


@pytest.mark.parametrize(("kind", "reason"), [("encryption", "encrypted (DRM): OEBPS/text/one.xhtml"),
                                              ("rights", "DRM licence")])
def test_a_drm_protected_book_is_encrypted(kind: str, reason: str) -> None:
    read = read_document(fx.with_drm(kind), EPUB, ReaderConfig())
    assert (read.status, read.pages) == ("encrypted", ())
    assert reason in (read.reason or "")


def test_obfuscated_fonts_leave_the_book_readable() -> None:
    read = read_document(fx.with_drm("fonts"), EPUB, ReaderConfig())
    assert read.status == "ok" and len(read.pages) == 2


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: make_pptx.zip_bomb(fx.book()), "zip bomb"),
        (lambda: make_pptx.lying_zip(fx.book()), "Bad CRC"),
        (fx.entity_bomb, "declares a DTD or entities"),
        (lambda: fx.book()[:2000], "corrupt or truncated"),
    ],
    ids=["zip-bomb-64MiB", "lying-size-header", "billion-laughs", "truncated"],
)
def test_hostile_books_get_a_status_fast_in_bounded_memory(make, reason: str) -> None:  # type: ignore[no-untyped-def]
    hostile = make()
    assert detect_media_type(hostile, "bad.epub") == EPUB

    def read_and_chunk():  # type: ignore[no-untyped-def]
        read = read_document(hostile, EPUB, ReaderConfig())
        return read, EpubChunker().chunk(hostile, EPUB, read.pages)

    (read, chunked), elapsed, peak = cost(read_and_chunk)
    assert (read.status, read.pages, chunked) == ("failed", (), ())
    assert reason in (read.reason or "")
    assert elapsed < MAX_SECONDS and peak < MAX_PEAK_BYTES, (elapsed, peak)
