"""The bounds every source is held to before it is read: where a link may lead and how large
a file, or how many pages to OCR, may be.

- `INDX_FOLLOW_SYMLINKS`: `inside` (default) follows a link (to a file or a folder) only when
  its target resolves inside the same corpus root; `never` lists no link; `all` follows every
  link. A folder already on the way down is never entered again, so loops end; how a linked
  folder is walked, and which id a file reached through one gets, is `corpus._linked_folder`.
- `INDX_MAX_FILE_MB` (default 512): a larger file is refused from its size alone, unread.
- `INDX_MAX_OCR_PAGES` (default 500): a document with more pages to OCR is not OCR'd.

A refused source still gets its partition and a document status (`outside_root`,
`too_large`) whose reason names the rule, so the ingest summary shows it.
"""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: fsspec's import is a tenth of `indx chunk`'s start
    from upath import UPath

FOLLOW_SYMLINKS_ENV = "INDX_FOLLOW_SYMLINKS"
MAX_FILE_MB_ENV = "INDX_MAX_FILE_MB"
MAX_OCR_PAGES_ENV = "INDX_MAX_OCR_PAGES"
LINK_POLICIES = ("inside", "never", "all")
OUTSIDE_ROOT = "outside_root"
TOO_LARGE = "too_large"
#: Page metadata of a page left unread because its document has more pages to OCR than the
#: bound; no chunker renders it into an image either (that costs time and memory per page too).
OVER_OCR_BOUND = "over_ocr_bound"


class BoundsError(ValueError):
    """A bound set to something it cannot be (the message names the variable)."""


@dataclass(frozen=True)
class Bounds:
    follow_symlinks: str = "inside"
    max_file_mb: float = 512
    max_ocr_pages: int = 500

    def __post_init__(self) -> None:
        if self.follow_symlinks not in LINK_POLICIES:
            raise BoundsError(f"{FOLLOW_SYMLINKS_ENV} must be one of {', '.join(LINK_POLICIES)}, got {self.follow_symlinks!r}")
        if self.max_file_mb <= 0 or self.max_ocr_pages < 0:
            raise BoundsError(f"{MAX_FILE_MB_ENV} must be positive and {MAX_OCR_PAGES_ENV} at least 0")

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * (1 << 20))

    @classmethod
    def from_env(cls) -> "Bounds":
        """The bounds the environment sets; a value that is not a number is refused by name."""
        def number(name: str, default: float, kind: type) -> float:
            raw = os.environ.get(name, "").strip()
            try:
                return kind(raw) if raw else default
            except ValueError:
                raise BoundsError(f"{name} must be a number, got {raw!r}") from None

        return cls(
            follow_symlinks=os.environ.get(FOLLOW_SYMLINKS_ENV, "").strip().lower() or "inside",
            max_file_mb=number(MAX_FILE_MB_ENV, cls.max_file_mb, float),
            max_ocr_pages=int(number(MAX_OCR_PAGES_ENV, cls.max_ocr_pages, int)),
        )


def is_local(path: "UPath") -> bool:
    """Whether `path` is on a local filesystem (object stores have no links)."""
    return getattr(path, "protocol", "") in ("", "file", "local")


def link_refusal(path: "UPath", root: str, policy: str) -> str | None:
    """Why the file at `path`, found under `root`, must not be read through a link, or None.

    Under `inside` the file's real path must lie inside the root's real path, whatever links
    lead there; under `never` no link is followed. Object stores have no links.
    """
    from upath import UPath

    if policy == "all" or not is_local(path):
        return None
    real, real_root = Path(os.path.realpath(path.path)), Path(os.path.realpath(UPath(root).path))
    if policy == "never" and real != real_root / Path(path.path).relative_to(Path(UPath(root).path)):
        return f"a symbolic link, not followed ({FOLLOW_SYMLINKS_ENV}=never)"
    if real != real_root and not real.is_relative_to(real_root):
        return f"a symbolic link to {real}, outside the corpus root {real_root} ({FOLLOW_SYMLINKS_ENV}={policy})"
    return None


def size_refusal(size: int, bounds: Bounds) -> str | None:
    """Why a file of `size` bytes is refused unread, or None."""
    if size <= bounds.max_file_bytes:
        return None
    return f"{size:,} bytes, over the limit of {bounds.max_file_mb:g} MB ({MAX_FILE_MB_ENV})"
