"""The OCR rung of the reading ladder and the image readers, on pages the project draws itself.

Every fixture comes from `fixtures/make_scans.py`: text this project chooses, drawn with
pillow's built-in TrueType font, so OCR is measured against ground truth.
"""

import io
import logging
import sys
import time

import pytest
from fixtures.make_scans import (
    Scan,
    all_scans,
    blank,
    bomb_png,
    character_error_rate,
    clean,
    image_only_pdf,
    multipage_tiff,
    two_columns,
)
from PIL import Image

from indx_assets.pipeline.chunker_port import validate_bbox
from indx_assets.pipeline.readers import READERS, DocumentRead, ReaderConfig, read_document
from indx_assets.pipeline.readers import ocr as ocr_module

SCANS = {scan.name: scan for scan in all_scans()}
MAX_CER = 0.05


def _ocr(scan: Scan, fmt: str = "PNG", media_type: str = "image/png") -> DocumentRead:
    return read_document(scan.encode(fmt), media_type)


@pytest.mark.parametrize("name", sorted(SCANS))
def test_ocr_reads_generated_pages_within_five_percent_cer(name: str) -> None:
    scan = SCANS[name]
    read = _ocr(scan)
    assert read.status == "ok"
    (page,) = read.pages
    assert page.status == "ok" and page.reader == "ocr:tesseract"
    cer = character_error_rate(page.text, scan.text)
    assert cer < MAX_CER, f"{name}: CER {cer:.3f}\n{page.text}"
    # The page text is the lines' text, so chunk offsets into it line up with the lines.
    assert [line.text for line in page.lines] == [t for t in page.text.split("\n") if t]


@pytest.mark.parametrize("name", sorted(SCANS))
def test_every_line_box_lies_inside_the_image_and_carries_a_confidence(name: str) -> None:
    (page,) = _ocr(SCANS[name]).pages
    assert page.lines
    for line in page.lines:
        assert validate_bbox(line.bbox) == line.bbox
        assert 0.0 < line.metadata["confidence"] <= 1.0


@pytest.mark.parametrize("make", [clean, two_columns], ids=["clean", "two_columns"])
def test_line_boxes_sit_on_the_drawn_lines(make) -> None:
    scan = make()
    (page,) = _ocr(scan).pages
    assert len(page.lines) == len(scan.boxes)
    height = scan.image.height
    for line, drawn in zip(page.lines, scan.boxes, strict=True):
        # Within a few pixels of where the ink is: Tesseract's box is the ink's box.
        assert all(abs(a - b) * height < 6 for a, b in zip(line.bbox[1::2], drawn[1::2])), (line, drawn)
        assert abs(line.bbox[0] - drawn[0]) * scan.image.width < 6, (line, drawn)


def test_two_columns_are_read_left_column_first() -> None:
    scan = two_columns()
    (page,) = _ocr(scan).pages
    sides = ["left" if line.bbox[2] < 0.5 else "right" for line in page.lines]
    assert sides == sorted(sides), f"columns interleaved: {sides}"
    left, right = scan.columns
    assert character_error_rate(page.text[: len(left)], left) < MAX_CER
    assert page.text.index("Tea harvests") > page.text.index("at sea")
    # Each column is a block of its own, so the lines chunker never merges across the gutter.
    blocks = {side: {line.metadata["block"] for line, s in zip(page.lines, sides) if s == side} for side in ("left", "right")}
    assert blocks["left"].isdisjoint(blocks["right"])


@pytest.mark.parametrize(
    ("fmt", "media_type"),
    [("JPEG", "image/jpeg"), ("BMP", "image/bmp"), ("WEBP", "image/webp"), ("TIFF", "image/tiff")],
)
def test_each_image_format_is_read(fmt: str, media_type: str) -> None:
    scan = clean()
    read = _ocr(scan, fmt, media_type)
    (page,) = read.pages
    assert page.status == "ok" and page.metadata["format"] == fmt
    assert character_error_rate(page.text, scan.text) < MAX_CER


def test_multipage_tiff_gives_one_page_per_frame_in_order() -> None:
    scans = [clean(), two_columns(), blank()]
    read = read_document(multipage_tiff(scans), "image/tiff")
    assert [p.page for p in read.pages] == [1, 2, 3]
    assert [p.status for p in read.pages] == ["ok", "ok", "unreadable"]
    for page, scan in zip(read.pages[:2], scans, strict=False):
        assert character_error_rate(page.text, scan.text) < MAX_CER
    assert read.status == "ok"


def test_a_page_where_ocr_finds_nothing_stays_unreadable() -> None:
    read = _ocr(blank())
    (page,) = read.pages
    assert page.status == "unreadable" and page.text == "" and not page.lines
    # No text came from OCR, so the page keeps the reader it had; OCR's attempt is on record.
    assert page.reader == "image" and page.metadata["ocr_engine"] == "tesseract"
    assert "OCR found no text" in (page.reason or "")
    assert read.status == "unreadable"


def test_transparent_png_with_dark_text_is_read_on_white() -> None:
    # Dark ink on a fully transparent background: flattening onto black would hide it.
    scan = clean()
    rgba = Image.new("RGBA", scan.image.size, (0, 0, 0, 0))
    rgba.putalpha(scan.image.point(lambda v: 255 - v))  # black ink, opaque only where drawn
    buffer = io.BytesIO()
    rgba.save(buffer, "PNG")
    (page,) = read_document(buffer.getvalue(), "image/png").pages
    assert character_error_rate(page.text, scan.text) < MAX_CER


@pytest.mark.parametrize(
    ("content", "media_type", "reason"),
    [
        (b"", "image/png", "empty"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "image/png", "png"),
        (b"definitely not an image at all" * 10, "image/jpeg", "jpeg"),
        (clean().encode("PNG"), "image/jpeg", "jpeg"),  # a PNG labelled JPEG: the label's decoder refuses it
    ],
    ids=["empty", "corrupt-header", "garbage", "mislabelled"],
)
def test_bad_image_bytes_fail_with_a_reason(content: bytes, media_type: str, reason: str) -> None:
    read = read_document(content, media_type)
    assert read.status == "failed"
    assert reason in (read.reason or "").lower()


def test_truncated_image_fails_its_page_with_the_decoders_reason() -> None:
    data = clean().encode("PNG")
    read = read_document(data[: len(data) // 2], "image/png")
    assert read.status == "failed"
    assert [p.status for p in read.pages] == ["failed"]
    assert "truncated" in (read.pages[0].reason or "")


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
@pytest.mark.parametrize(("width", "height"), [(10_000, 9_000), (14_000, 13_000)], ids=["over-our-limit", "over-pillows-limit"])
def test_decompression_bomb_is_refused_quickly(width: int, height: int) -> None:
    bomb = bomb_png(width, height)
    assert len(bomb) < 1_000_000  # tiny on disk, 90-400 MB decoded
    started = time.perf_counter()
    read = read_document(bomb, "image/png")
    elapsed = time.perf_counter() - started
    assert read.status == "failed"
    assert "decompression bomb" in (read.reason or "")
    assert elapsed < 0.5, f"refusing took {elapsed:.2f}s: the image was decoded"


def test_missing_ocr_extra_keeps_pages_unreadable_and_says_what_to_install(monkeypatch, caplog) -> None:
    # The one mock here: the extra *is* installed in the test venv, so its absence is
    # simulated by making `import tesserocr` fail, exactly as it does without the extra.
    monkeypatch.setitem(sys.modules, "tesserocr", None)
    monkeypatch.setattr(ocr_module, "_ENGINES", {})
    with caplog.at_level(logging.WARNING, logger="indx_assets.pipeline.readers.ocr"):
        read = _ocr(clean())
    (page,) = read.pages
    assert page.status == "unreadable" and page.reader == "image" and page.text == ""
    assert "pip install 'indx-assets[ocr]'" in caplog.text
    assert "indx-assets[ocr]" in (page.reason or "")


def test_a_language_without_data_names_the_package_to_install(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="indx_assets.pipeline.readers.ocr"):
        read = read_document(clean().encode(), "image/png", ReaderConfig(ocr_languages="eng+xyz"))
    assert read.pages[0].status == "unreadable"
    assert "tessdata-fast-xyz" in caplog.text


def test_image_only_pdf_is_read_page_by_page_through_ocr() -> None:
    if "application/pdf" not in READERS:
        pytest.skip("the PDF reader is not registered yet")
    scans = [clean(), two_columns(), blank()]
    read = read_document(image_only_pdf(scans), "application/pdf", ReaderConfig(ocr_dpi=150))
    assert [p.status for p in read.pages] == ["ok", "ok", "unreadable"]
    assert [p.reader for p in read.pages[:2]] == ["ocr:tesseract"] * 2
    assert read.pages[2].metadata["ocr_engine"] == "tesseract"
    assert read.pages[0].metadata["ocr_dpi"] == 150
    for page, scan in zip(read.pages[:2], scans, strict=False):
        assert character_error_rate(page.text, scan.text) < MAX_CER
