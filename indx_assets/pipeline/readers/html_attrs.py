"""What the HTML walk reads in an element's attributes: one rule, for the parsed tree and for
the markup the cuts scan.

The walk (`html.py`) skips an element that is hidden (`hidden`, `aria-hidden="true"`, an input
of type hidden, a style with `display: none` or `visibility: hidden`) and ends a printed page
before or after an element whose style breaks one (`break-before`, `page-break-after` and the
like). The cuts (`html_cuts.py`) must neither reopen nor cut before an element the walk reads
so, and see only its markup: `READ_IN_MARKUP` matches every tag with an attribute the walk reads
(`hidden`, `aria-hidden`) or a value it reads (`style`, `type`) holding one of the words in
`_WORDS` or a character reference (`&`), which could spell one. A reference in any other value
cannot change what the walk reads: an ASP.NET page's one `<form action="…?id=3&amp;x=1">`
around the whole body is cut inside.
"""

import re
from collections.abc import Mapping

#: Every attribute name, value and CSS property the rules below read holds one of these words.
_WORDS = ("hidden", "display", "visibility", "break")

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
#: CSS that starts a printed page before or after an element (filings converted from print set it).
BREAK_BEFORE = re.compile(r"(?:page-)?break-before\s*:\s*(?:always|page|left|right)", re.I)
BREAK_AFTER = re.compile(r"(?:page-)?break-after\s*:\s*(?:always|page|left|right)", re.I)

#: HTML's whitespace (not `\s`, which holds a vertical tab: a value's part in HTML).
_WS = rb"[\t\n\f\r ]"
#: A tag's markup that may hold what the walk reads: a superset, matched from wherever an
#: attribute's name may start (after whitespace, `/` or a quoted value's end), so a `style=…`
#: inside another value matches too, but never a `class="hidden-xs"` or a `data-style`.
READ_IN_MARKUP = re.compile(
    rb"(?:^|[\t\n\f\r /\"'])(?:"
    rb"(?:aria-)?hidden(?=[\t\n\f\r /=>]|$)"
    rb"|(?:style|type)" + _WS + rb"*=" + _WS + rb"*"
    rb"(?:\"[^\"]*|'[^']*|[^\t\n\f\r >]*)(?:" + "|".join((*_WORDS, "&")).encode() + rb"))",
    re.I,
)


def hidden(tag: str, attrs: Mapping[str, str | None]) -> bool:
    """Whether the walk skips an element `tag` with these attributes, and all it holds."""
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return True
    if tag == "input" and (attrs.get("type") or "").lower() == "hidden":
        return True
    style = attrs.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))
