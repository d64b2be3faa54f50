"""The pptx reader: one page per slide, and a clear status for every file it cannot read.

The hostile files are generated from a real deck (`tests/fixtures/make_pptx.py`); each must be
refused quickly, with its own reason, without inflating what it threatens to inflate.
"""

import io
import socket
import time
import tracemalloc
import zipfile

import pytest
from fixtures import make_pptx as fx

from indx_assets.pipeline.chunkers.pptx import PptxChunker
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig, read_document
from indx_assets.pipeline.readers.ooxml_guard import is_encrypted_ooxml
from indx_assets.pipeline.readers.pptx import PPTX, read_pptx

#: Generous bounds: the bombs threaten 64 MiB to 4 GB; a refusal inflates nothing close to that.
MAX_PEAK_BYTES = 16 << 20
MAX_SECONDS = 2.0


@pytest.fixture(scope="module")
def deck_bytes() -> bytes:
    return fx.deck()


def read(content: bytes) -> DocumentRead:
    return read_document(content, PPTX, ReaderConfig())


def test_one_page_per_slide_in_order_with_hidden_notes_and_title(deck_bytes: bytes) -> None:
    doc = read(deck_bytes)
    assert doc.status == "ok" and [p.page for p in doc.pages] == [1, 2, 3, 4, 5]
    assert all(p.reader == "pptx" for p in doc.pages)
    first, second, third, fourth, fifth = doc.pages
    assert first.text.split("\n\n")[:2] == [fx.TEXTS.title_1, fx.TEXTS.banner]
    assert fx.TEXTS.inner_child in first.text and fx.TEXTS.hidden in first.text
    assert first.metadata["notes"] == fx.NOTES and fx.NOTES not in first.text
    assert first.metadata["title"] == fx.TEXTS.title_1 and first.metadata["hidden"] is False
    assert second.text == f"{fx.TEXTS.title_2}\n\n{fx.TEXTS.body_2}"
    assert third.text.splitlines()[0] == " | ".join(fx.TABLE_ROWS[0])
    assert fourth.metadata["hidden"] is True and fourth.text == fx.HIDDEN_SLIDE_TEXT
    assert fifth.text == fx.LONG_TEXT
    assert doc.metadata["hidden_slides"] == [4]
    assert (doc.metadata["slide_width"], doc.metadata["slide_height"]) == (fx.SLIDE_W, fx.SLIDE_H)


def test_a_slide_with_only_pictures_is_empty_but_keeps_its_pictures(deck_bytes: bytes) -> None:
    only_pictures = fx.drop_table(deck_bytes)
    doc = read(only_pictures)
    assert doc.pages[2].status == "empty"
    [slide3] = [c for c in PptxChunker().chunk(only_pictures, PPTX, doc.pages) if c.page == 3]
    assert [p.chunk_type for p in slide3.pieces] == ["image", "image"]


@pytest.mark.parametrize(
    ("make", "status", "reason"),
    [
        (lambda d: b"", "empty", "zero-byte"),
        (lambda d: d[: len(d) // 2], "failed", "corrupt or truncated"),
        (lambda d: b"PK\x03\x04" + bytes(range(256)) * 40, "failed", "corrupt or truncated"),
        (lambda d: fx.zip_of({"hello.txt": b"not a deck"}), "failed", "not a readable PowerPoint"),
        (lambda d: fx.drop_part(d, "ppt/slides/slide2.xml"), "failed", "not a readable PowerPoint"),
    ],
    ids=["empty", "truncated", "garbage", "zip-not-pptx", "missing-part"],
)
def test_broken_files_get_a_clear_status(deck_bytes: bytes, make, status: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    doc = read(make(deck_bytes))
    assert (doc.status, doc.pages) == (status, ())
    assert reason in (doc.reason or "")


def test_password_protected_deck_is_encrypted(deck_bytes: bytes) -> None:
    pytest.importorskip("msoffcrypto", reason="msoffcrypto-tool (test extra) writes the encrypted fixture")
    locked = fx.encrypted(deck_bytes)
    assert locked.startswith(b"\xd0\xcf\x11\xe0") and is_encrypted_ooxml(locked)
    doc = read(locked)
    assert doc.status == "encrypted" and "password" in (doc.reason or "")
    assert not is_encrypted_ooxml(deck_bytes)


def test_legacy_ole_file_is_unsupported_not_encrypted(deck_bytes: bytes) -> None:
    pytest.importorskip("msoffcrypto", reason="msoffcrypto-tool (test extra) writes the OLE container")
    # The same real OLE container with its EncryptedPackage stream renamed: an OLE file that is
    # not an encrypted OOXML package, as a PowerPoint 97-2003 file is.
    renamed = fx.encrypted(deck_bytes).replace("EncryptedPackage".encode("utf-16-le"), "PowerPoint Docum".encode("utf-16-le"))
    doc = read(renamed)
    assert doc.status == "unsupported" and "legacy" in (doc.reason or "")


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (fx.zip_bomb, "zip bomb"),
        (fx.absurd_size, "zip bomb"),
        (fx.lying_zip, "Bad CRC"),
        (fx.entity_bomb, "declares a DTD"),
        (fx.external_entity, "declares a DTD"),
        (lambda d: fx.entity_in(d, "utf-32"), "declares a DTD"),
        (lambda d: fx.entity_in(d, "utf-32-be"), "declares a DTD"),
        (lambda d: fx.entity_in(d, "utf-32-le"), "declares a DTD"),
        (lambda d: fx.entity_in(d, "cp037"), "declares a DTD"),
        (lambda d: fx.entity_in(d, "utf-8-sig"), "declares a DTD"),
        (fx.corrupt_entry, "slide1.xml is corrupt"),
    ],
    ids=["zip-bomb-64MiB", "declares-4GB", "lying-size-header", "billion-laughs", "external-entity-utf16",
         "entity-utf32-bom", "entity-utf32be", "entity-utf32le", "entity-ebcdic", "entity-utf8-bom", "corrupt-entry"],
)
def test_hostile_files_are_refused_fast_in_bounded_memory(deck_bytes: bytes, make, reason: str) -> None:  # type: ignore[no-untyped-def]
    hostile = make(deck_bytes)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        doc = read_pptx(hostile, ReaderConfig())
        chunked = PptxChunker().chunk(hostile, PPTX, doc.pages)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert doc.status == "failed" and reason in (doc.reason or "")
    assert chunked == ()
    assert elapsed < MAX_SECONDS
    assert peak < MAX_PEAK_BYTES, f"peak {peak} bytes"


def test_external_references_are_never_fetched(deck_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    # A sentinel, not a mock of the reader: any attempt to open a connection fails the test.
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the pptx reader tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    linked = fx.linked_picture(deck_bytes)
    doc = read(linked)
    assert doc.status == "ok"
    [slide3] = [c for c in PptxChunker().chunk(linked, PPTX, doc.pages) if c.page == 3]
    assert [p.chunk_type for p in slide3.pieces] == ["table"]  # linked pictures are skipped, not fetched


def test_refused_packages_never_reach_the_xml_parser(deck_bytes: bytes) -> None:
    """The guard hands python-pptx a stored zip: nothing it parses can inflate further."""
    from indx_assets.pipeline.readers.ooxml_guard import verified_package

    with zipfile.ZipFile(verified_package(deck_bytes)) as package:
        assert {i.compress_type for i in package.infolist()} == {zipfile.ZIP_STORED}
        with zipfile.ZipFile(io.BytesIO(deck_bytes)) as original:
            assert sorted(package.namelist()) == sorted(n for n in original.namelist() if not n.endswith("/"))
