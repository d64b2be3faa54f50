"""`indx show` and the page picture: the boxes are drawn where the chunks are."""

import io
from pathlib import Path

from fixtures import make_pdfs as fx
from PIL import Image
from typer.testing import CliRunner

from indx_assets.app.cli import COMMAND_MODULES, app
from indx_assets.pipeline.chunk_picture import render_chunk_picture
from indx_assets.pipeline.read_and_chunk import encode_file, to_document


def _register() -> None:
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(f"indx_assets.app.cli.{name}")


def _coloured(image: Image.Image, x: int, y: int) -> bool:
    r, g, b = image.getpixel((x, y))[:3]
    return max(r, g, b) - min(r, g, b) > 60  # box outlines are saturated; the page is grey text on white


def test_picture_draws_each_box_on_the_rendered_page(tmp_path: Path) -> None:
    path = fx.table(tmp_path / "table.pdf").path
    document = to_document(encode_file(path))
    chunks = [c for c in document.chunks if c.page == 1]
    png = render_chunk_picture(path.read_bytes(), "application/pdf", 1, chunks, dpi=72)
    assert png is not None
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert abs(image.width - 595.3) <= 1 and abs(image.height - 841.9) <= 1
    for chunk in chunks:
        x0, y0, x1, y1 = (round(v * s) for v, s in zip(chunk.bbox, (image.width, image.height) * 2))  # type: ignore[arg-type]
        mid_y = (y0 + y1) // 2
        assert _coloured(image, x0, mid_y) or _coloured(image, x0 + 1, mid_y), chunk.content
        assert not _coloured(image, (x0 + x1) // 2, mid_y)  # inside stays the page


def test_picture_for_other_media_uses_a_blank_page_and_bad_pdfs_give_none() -> None:
    png = render_chunk_picture(b"", "text/plain", 1, [((0.1, 0.1, 0.5, 0.2), "1")], aspect=16 / 9)
    image = Image.open(io.BytesIO(png))  # type: ignore[arg-type]
    assert image.width > image.height
    assert render_chunk_picture(b"%PDF-1.4 broken", "application/pdf", 1, []) is None


def test_show_writes_the_picture_and_lists_the_chunks(tmp_path: Path) -> None:
    _register()
    path = fx.invoice(tmp_path / "invoice.pdf").path
    out = tmp_path / "page.png"
    result = CliRunner().invoke(app, ["show", str(path), "--page", "1", "--out", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert Image.open(out).format == "PNG"
    assert "table" in result.output and "INVOICE" in result.output
    missing = CliRunner().invoke(app, ["show", str(path), "--page", "9"])
    assert missing.exit_code == 1 and "no page 9" in missing.output
