"""Size-bounded, structure-aware chunking of element lists, compatible with `unstructured`.

`chunk_elements` (basic) and `chunk_by_title` take elements from
`indx_assets.pipeline.chunking.elements` and return `CompositeElement`, `Table` and `TableChunk`
chunks. Limits are in characters (`max_characters`) or in tokens of a tokenizer the caller
passes (`max_tokens`, `tokenizer`).
"""

from indx_assets.pipeline.chunking.basic import chunk_elements
from indx_assets.pipeline.chunking.elements import (
    CodeSnippet,
    CompositeElement,
    Element,
    ElementMetadata,
    Footer,
    Header,
    ListItem,
    NarrativeText,
    PageBreak,
    Table,
    TableChunk,
    Text,
    Title,
)
from indx_assets.pipeline.chunking.title import chunk_by_title

__all__ = [
    "CodeSnippet",
    "CompositeElement",
    "Element",
    "ElementMetadata",
    "Footer",
    "Header",
    "ListItem",
    "NarrativeText",
    "PageBreak",
    "Table",
    "TableChunk",
    "Text",
    "Title",
    "chunk_by_title",
    "chunk_elements",
]
