"""The `text` chunker: plain text cut into paragraphs (blank lines), then by `chunk_by_title`.

A paragraph of long lines is one element per line (`indx_assets.pipeline.chunking.paragraphs`).
A paragraph (or line of such) of one short line without closing punctuation (a chapter heading, say) is a
`Title`; a paragraph whose every line starts with a bullet or a number is a list, one
`ListItem` per line; everything else is `NarrativeText`.
"""

import re
from collections.abc import Iterator

from indx_interfaces import PageOutput

from indx_assets.pipeline.chunkers.base import StructuredProvider, StructuredTextChunker
from indx_assets.pipeline.chunking.elements import Element, ListItem, NarrativeText, Title
from indx_assets.pipeline.chunking.paragraphs import line_runs

_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=\r?\n[ \t\r]*\n|\s*\Z)", re.S)
_BULLET = re.compile(r"^\s*(?:[-*+•‣◦]|\(?\d{1,3}[.)]|[a-zA-Z][.)])\s+\S")
_TITLE_MAX_CHARS = 80
_TITLE_MAX_WORDS = 10


def _is_title(paragraph: str) -> bool:
    if "\n" in paragraph or len(paragraph) > _TITLE_MAX_CHARS or len(paragraph.split()) > _TITLE_MAX_WORDS:
        return False
    return paragraph[-1] not in ".,;:!?'\"”’)" and any(c.isalpha() for c in paragraph) and not paragraph[0].islower()


def text_elements(text: str) -> Iterator[Element]:
    """Paragraph elements of a plain text, each with its `start`/`end` offsets in `text`, in order."""
    for m in _PARAGRAPH.finditer(text):
        paragraph = m.group()
        lines = paragraph.split("\n")
        if len(lines) > 1 and all(_BULLET.match(line) for line in lines):
            offset = m.start()
            for line in lines:
                stripped = line.strip()
                start = offset + line.index(stripped[0])
                item = ListItem(stripped)
                item.metadata.start, item.metadata.end = start, start + len(stripped)
                yield item
                offset += len(line) + 1
            continue
        starts = [m.start()]
        for line in lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        for a, b in line_runs(lines):
            run = "\n".join(lines[a:b]).strip()
            if not run:
                continue
            start = starts[a] + len("\n".join(lines[a:b])) - len("\n".join(lines[a:b]).lstrip())
            element: Element = Title(run) if _is_title(run) else NarrativeText(run)
            if isinstance(element, Title):
                element.metadata.category_depth = 1
            element.metadata.start, element.metadata.end = start, start + len(run)
            yield element


class TextChunker(StructuredTextChunker):
    media_types = frozenset({"text/plain"})
    page_local = True  # each page is cut from its own text (`chain_runner.cuts_page_by_page`)
    reads_content = False  # cut from the page text alone (`chain_runner.reads_content`)

    def page_elements(self, content: bytes, page: PageOutput) -> Iterator[Element]:
        return text_elements(page.text)


class TextProvider(StructuredProvider):
    chunker_class = TextChunker
