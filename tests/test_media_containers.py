"""Media detection looks inside zip and OLE containers, so Office files reach their reader."""

import io
import zipfile
from pathlib import Path

from fixtures import make_pptx

from indx_assets.pipeline.media import PPTX, detect_media_type
from indx_assets.pipeline.read_and_chunk import encode_bytes


def test_a_deck_whose_zip_signature_says_nothing_is_still_a_presentation(corpus: Path) -> None:
    # filetype gives up on this deck (its first entry is not [Content_Types].xml)
    content = (corpus / "example-docs" / "science-exploration-1p.pptx").read_bytes()
    assert detect_media_type(content, "slides.bin") == PPTX


def test_a_plain_zip_stays_a_zip() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("readme.txt", "not an office document")
    assert detect_media_type(buffer.getvalue(), "archive.zip") == "application/zip"


def test_a_password_protected_deck_is_reported_encrypted_not_unsupported() -> None:
    locked = make_pptx.encrypted(make_pptx.deck())
    assert detect_media_type(locked, "board.pptx") == PPTX
    read = encode_bytes(locked, source_id="board.pptx").read
    assert read.status == "encrypted", read
    # without the name's hint an OLE container is not assumed to be a deck
    assert detect_media_type(locked, "board.bin") != PPTX
