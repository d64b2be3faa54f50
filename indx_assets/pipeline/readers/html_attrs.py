"""What the HTML walk reads in an element's attributes: one rule, for the parsed tree and for
the markup the cuts scan.

The walk (`html.py`) skips an element that is hidden (`hidden`, `aria-hidden="true"`, an input
of type hidden, a style with `display: none` or `visibility: hidden`) and ends a printed page
before or after an element whose style breaks one (`break-before`, `page-break-after` and the
like). The cuts (`html_cuts.py`) must neither reopen nor cut before an element the walk reads
so, and see only its markup: `READ_IN_MARKUP` matches every tag whose attributes could hold
any of these, spelled with the words in `_WORDS` or with a character reference (`&`), which
could spell one.
"""

import re
from collections.abc import Mapping

#: Every attribute name, value and CSS property the rules below read holds one of these words.
_WORDS = ("hidden", "display", "visibility", "break")

HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
#: CSS that starts a printed page before or after an element (filings converted from print set it).
BREAK_BEFORE = re.compile(r"(?:page-)?break-before\s*:\s*(?:always|page|left|right)", re.I)
BREAK_AFTER = re.compile(r"(?:page-)?break-after\s*:\s*(?:always|page|left|right)", re.I)

#: A tag's markup that may hold what the walk reads (a superset: a class named `hidden-xs` too).
READ_IN_MARKUP = re.compile("|".join((*_WORDS, "&")).encode(), re.I)


def hidden(tag: str, attrs: Mapping[str, str | None]) -> bool:
    """Whether the walk skips an element `tag` with these attributes, and all it holds."""
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return True
    if tag == "input" and (attrs.get("type") or "").lower() == "hidden":
        return True
    style = attrs.get("style")
    return bool(style and HIDDEN_STYLE.search(style))
