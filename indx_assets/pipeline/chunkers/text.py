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
from indx_assets.pipeline.chunking.paragraphs import collapsed_run, iter_line_runs, run_segments

_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=\r?\n[ \t\r]*\n|\s*\Z)", re.S)
#: A stretch of text stripped of the whitespace at its ends (as `str.strip`: `\s` is `str.isspace`).
_NOT_SPACE = re.compile(r"\S(?:.*\S)?", re.S)
#: A line that starts with a bullet (matched from the line's start: `match(text, start, end)`).
_BULLET = re.compile(r"\s*(?:[-*+•‣◦]|\(?\d{1,3}[.)]|[a-zA-Z][.)])\s+\S")
_TITLE_MAX_CHARS = 80
_TITLE_MAX_WORDS = 10


def _is_title(paragraph: str) -> bool:
    if "\n" in paragraph or len(paragraph) > _TITLE_MAX_CHARS or len(paragraph.split()) > _TITLE_MAX_WORDS:
        return False
    return paragraph[-1] not in ".,;:!?'\"”’)" and any(c.isalpha() for c in paragraph) and not paragraph[0].islower()


def text_elements(text: str, start: int = 0, end: int | None = None) -> Iterator[Element]:
    """Paragraph elements of a plain text (of `text[start:end]`, read in place), each with its
    `start`/`end` offsets in `text`, in order. A paragraph is read a line at a time, never held
    as its lines (a log or a word list is one paragraph of a million lines); a long one holds
    its text with whitespace collapsed (`paragraphs.collapsed_run`), a segment of it at a time
    (`paragraphs.run_segments`)."""
    for m in _PARAGRAPH.finditer(text, start, len(text) if end is None else end):
        start, end = m.span()
        if text.find("\n", start, end) >= 0 and all(_BULLET.match(text, a, b) for a, b in _line_spans(text, start, end)):
            for a, b in _line_spans(text, start, end):
                first, last = _NOT_SPACE.search(text, a, b).span()  # type: ignore[union-attr]
                item = ListItem(text[first:last])
                item.metadata.start, item.metadata.end = first, last
                yield item
            continue
        for (a, _), (_, b) in iter_line_runs(((span, text[span[0]:span[1]]) for span in _line_spans(text, start, end))):
            found = _NOT_SPACE.search(text, a, b)
            if found is None:
                continue
            for a, b in run_segments(text, *found.span()):
                run = collapsed_run(text, a, b) or text[a:b]
                element: Element = Title(run) if _is_title(run) else NarrativeText(run)
                if isinstance(element, Title):
                    element.metadata.category_depth = 1
                element.metadata.start, element.metadata.end = a, b
                yield element


def _line_spans(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The spans of the lines of `text[start:end]` (split at each line feed)."""
    while (feed := text.find("\n", start, end)) >= 0:
        yield start, feed
        start = feed + 1
    yield start, end


class TextChunker(StructuredTextChunker):
    media_types = frozenset({"text/plain"})
    page_local = True  # each page is cut from its own text (`chain_runner.cuts_page_by_page`)
    reads_content = False  # cut from the page text alone (`chain_runner.reads_content`)

    def page_elements(self, content: bytes, page: PageOutput) -> Iterator[Element]:
        return text_elements(page.text)


class TextProvider(StructuredProvider):
    chunker_class = TextChunker
