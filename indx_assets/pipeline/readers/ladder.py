"""The reading ladder's fingerprint: `page_outputs`' code version.

What a page's output is depends on which readers run (`READERS`' entry points), the versions
of the distributions that do the reading (this project's and the parsing libraries'), the OCR
engine and its language data, and the reader settings that shape pages (`ocr_dpi`, the OCR
page bound). All of it is hashed here, when definitions load, so installing or upgrading OCR
or a parser marks every page output stale; `chunk_map` follows only where the pages' content
changed (it is keyed on their data version).
"""

import hashlib
import json
from importlib.metadata import PackageNotFoundError, version

from indx_assets.pipeline.readers import READERS, ReaderConfig

#: Distributions whose code reads pages (besides this project's own).
READER_DISTRIBUTIONS = (
    "indx-assets", "pypdfium2", "python-pptx", "python-docx", "openpyxl", "lxml", "selectolax", "markdown-it-py",
    "charset-normalizer", "pillow", "olefile", "filetype",
)


def _version(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def ladder_fingerprint(config: ReaderConfig) -> str:
    """A stable hash of everything that decides `page_outputs` (see the module docstring)."""
    from indx_assets.pipeline.readers.ocr import ocr_fingerprint

    payload = {
        "readers": dict(sorted(READERS.items())),
        "distributions": {name: _version(name) for name in READER_DISTRIBUTIONS},
        "ocr": ocr_fingerprint(config.ocr_languages),
        "ocr_dpi": config.ocr_dpi,
        "max_ocr_pages": config.max_ocr_pages,
    }
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    return f"readers-{digest[:16]}"
