"""What a printed page number looks like, for the chunkers that leave page furniture out
(`pdf`: a line in a page's top or bottom band; `html`: the block that ends a printed page)."""

import re

_ROMAN = r"(?=[ivxlc])c{0,3}(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"  # i to cccxcix: "xiv", not "civil"
#: A whole line or block (`fullmatch`) that reads as a page number: "12", "- 12 -", "Page 3",
#: "3 of 9", "3/9", "xiv".
PAGE_NUMBER = re.compile(rf"[\W_]*(?:page\s+)?(?:\d{{1,4}}|{_ROMAN})(?:\s*(?:of|/)\s*\d{{1,4}})?[\W_]*", re.IGNORECASE)
