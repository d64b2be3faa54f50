"""Element types, shaped like `unstructured`'s, that the element chunkers take and return.

Inputs are built as `Cls(text, *, page_number=None, bbox=None, text_as_html=None)`; every
element has `.text`, `.category` (its class name) and `.metadata`. Chunking returns
`CompositeElement` (text from one or more elements), `Table` (a whole table that fits) and
`TableChunk` (a piece of a table split by rows).

Beyond `unstructured`'s fields, the metadata can carry `start`/`end` (character offsets of the
element in the text it was parsed from) and `section_title`/`category_depth`, which the
format chunkers use to give every chunk its place in the document.
"""

from collections.abc import Sequence
from typing import Any

from indx_assets.pipeline.scratch import SpooledText

BBoxLike = tuple[float, float, float, float]


_METADATA_FIELDS = (
    "page_number",
    "bbox",
    "text_as_html",
    "orig_elements",
    "is_continuation",
    "section_title",
    "category_depth",
    "element_id",
    "parent_id",
    "start",
    "end",
    "table_id",
    "chunk_index",
    "num_carried_over_header_rows",
    "overlap_prefix_len",
    "header_prefix_len",
    "unstructured",
)
_FIELD_SET = frozenset(_METADATA_FIELDS)


class ElementMetadata:
    """Metadata of an element or a chunk. Unset fields read as `None`.

    Fields: `page_number`, `bbox` (x0, y0, x1, y1), `text_as_html`, `orig_elements` (a chunk's
    elements), `is_continuation` (second and later pieces of a split), `section_title`,
    `category_depth` (heading level), `element_id`/`parent_id`, `start`/`end` (offsets of an
    element in its source text), `table_id`/`chunk_index`/`num_carried_over_header_rows` (table
    pieces), `overlap_prefix_len`/`header_prefix_len` (characters at the start of a chunk's
    text repeated from the previous chunk or from the table header), `unstructured` (why the
    element is plain text its format's parser did not structure).
    """

    FIELDS: tuple[str, ...] = _METADATA_FIELDS

    # class-level defaults keep construction cheap: only the fields set live on the instance
    page_number: int | None = None
    bbox: BBoxLike | None = None
    text_as_html: str | SpooledText | None = None  # a long HTML table's is spooled (`readers.html`)
    orig_elements: "list[Element] | None" = None
    is_continuation: bool | None = None
    section_title: str | None = None
    category_depth: int | None = None
    element_id: str | None = None
    parent_id: str | None = None
    start: int | None = None
    end: int | None = None
    table_id: str | None = None
    chunk_index: int | None = None
    num_carried_over_header_rows: int | None = None
    overlap_prefix_len: int | None = None
    header_prefix_len: int | None = None
    unstructured: str | None = None

    def __init__(self, **fields: Any) -> None:
        unknown = fields.keys() - _FIELD_SET if fields else ()
        if unknown:
            raise AttributeError(f"unknown metadata fields: {sorted(unknown)}")
        self.__dict__.update(fields)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _FIELD_SET:
            raise AttributeError(f"unknown metadata field {name!r}")
        self.__dict__[name] = value

    def copy(self) -> "ElementMetadata":
        # the fields are known good: no check of them again (a copy per sentence of a long page)
        out = object.__new__(ElementMetadata)
        out.__dict__.update(self.__dict__)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The fields that are set (`orig_elements` as their dicts)."""
        out: dict[str, Any] = {}
        for name in _METADATA_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            if name == "orig_elements":
                value = [e.to_dict() for e in value]
            elif isinstance(value, SpooledText):
                value = value.read()
            out[name] = value
        return out

    def __repr__(self) -> str:
        fields = {k: v for k, v in self.to_dict().items() if k != "orig_elements"}
        return f"ElementMetadata({fields})"


class Element:
    """A piece of a document with a type. `category` is the class name (`Title`, `Table`, ...)."""

    __slots__ = ("text", "metadata")

    def __init__(
        self,
        text: str = "",
        *,
        page_number: int | None = None,
        bbox: Sequence[float] | None = None,
        text_as_html: str | SpooledText | None = None,
        metadata: ElementMetadata | None = None,
    ) -> None:
        if not isinstance(text, str):
            raise TypeError(f"{type(self).__name__} text must be a str, got {type(text).__name__}")
        self.text = text
        if metadata is None:
            metadata = ElementMetadata()
        self.metadata = metadata
        if page_number is not None:
            metadata.page_number = page_number
        if bbox is not None:
            metadata.bbox = tuple(float(v) for v in bbox)
        if text_as_html is not None:
            metadata.text_as_html = text_as_html

    @property
    def category(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.category, "text": self.text, "metadata": self.metadata.to_dict()}

    def __repr__(self) -> str:
        text = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return f"{self.category}({text!r})"

    def __str__(self) -> str:
        return self.text


class Text(Element):
    """Text of no more specific kind."""

    __slots__ = ()


class Title(Text):
    """A heading: it opens a section in `chunk_by_title`."""

    __slots__ = ()


class NarrativeText(Text):
    __slots__ = ()


class ListItem(Text):
    __slots__ = ()


class CodeSnippet(Text):
    """Code: its whitespace is kept verbatim in chunks."""

    __slots__ = ()


class Header(Text):
    __slots__ = ()


class Footer(Text):
    __slots__ = ()


class Table(Element):
    """A table; `metadata.text_as_html` (optional) gives its rows for row-wise splitting."""

    __slots__ = ()


class PageBreak(Element):
    """Marks a page boundary; it has no text and never makes a chunk of its own."""

    __slots__ = ()


class CompositeElement(Text):
    """A chunk formed from one or more whole elements, or one piece of a split element."""

    __slots__ = ()


class TableChunk(Table):
    """One piece of a table split by rows; continuation pieces repeat the header rows."""

    __slots__ = ()
