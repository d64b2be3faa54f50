"""Documents made of documents: an e-mail's body and attachments, each a document of its own.

A container's parts are read by the reader of each part's own media type and their pages laid
end to end as the container's pages (one file stays one source); each page of part `n >= 1`
carries `PART_KEY: n` in its metadata (part 0, an e-mail's body, carries none). The chain
runner cuts each part with the chain as it would cut that part on its own
(`indx_assets.pipeline.chain_runner.run_chain`), and `to_document` prefixes the locators of a
part's chunks with `attachment:{n}:`, their page numbers the part's own.
"""

from dataclasses import dataclass

#: Page metadata: the number of the part (attachment) a container's page belongs to.
PART_KEY = "attachment"
#: Page and chunk metadata: the part's file name.
PART_NAME_KEY = "attachment_name"
#: Page metadata: the page's number within its part.
PART_PAGE_KEY = "attachment_page"


@dataclass(frozen=True)
class Part:
    """One part of a container: its number (0 for the body), file name, media type and bytes.

    `parsed` is its reader's parsed form when it was just read (see `DocumentRead.parsed`)."""

    number: int
    name: str | None
    media_type: str
    content: bytes
    parsed: object = None


@dataclass(frozen=True)
class Parts:
    """A container's parts by number: the parsed form of a container's read."""

    by_number: dict[int, Part]


def part_locator(number: int, locator: str) -> str:
    """`attachment:{n}:{locator}` for a page of part `n >= 1`; the body's locators stay as they are."""
    return locator if number == 0 else f"{PART_KEY}:{number}:{locator}"


#: Container media type -> "module:function" that takes its bytes apart into `Parts`, unread
#: (for chunking pages rebuilt from storage, when no reader just parsed the container).
_SPLITTERS = {"message/rfc822": "indx_assets.pipeline.readers.mail:mail_parts"}
#: The media types of containers of parts (whose pages are cut part by part).
CONTAINER_TYPES = frozenset(_SPLITTERS)


def parts_of(content: bytes, media_type: str, parsed: object) -> Parts | None:
    """The parts of a container (its reader's parsed form, else taken apart again); None for a
    document that is not a container or whose bytes no longer come apart."""
    if isinstance(parsed, Parts):
        return parsed
    target = _SPLITTERS.get(media_type)
    if target is None:
        return None
    import importlib

    module, _, name = target.partition(":")
    try:
        return getattr(importlib.import_module(module), name)(content)
    except ValueError:  # refused (a MIME bomb): it was never read into pages either
        return None
