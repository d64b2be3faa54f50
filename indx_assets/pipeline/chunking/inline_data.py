"""Inline data: the payload of a `data:` URI (`data:image/png;base64,iVBOR...`), as notebooks
and some editors export images into Markdown and HTML. It is not text: chunkers leave it out of
their chunks (keeping the URI's media type and an ellipsis), and the word measure
(`indx_assets.pipeline.fidelity`) leaves it out of the page's words alike.
"""

import re

#: An inline-data URI's payload (what follows its media type and parameters), long enough not to be prose.
DATA_PAYLOAD = re.compile(r"(\bdata:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+(?:=[\w.+-]+)?)*,)[\w+/=%-]{64,}")


def elide_inline_data(text: str) -> str:
    """`text` with every inline-data payload replaced by an ellipsis."""
    return DATA_PAYLOAD.sub(r"\1…", text) if "data:" in text else text


def inline_data_spans(text: str) -> list[tuple[int, int]]:
    """Where the inline-data payloads of `text` lie (start, end)."""
    return [(m.end(1), m.end()) for m in DATA_PAYLOAD.finditer(text)] if "data:" in text else []
