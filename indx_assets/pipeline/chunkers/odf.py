"""The `odf` chunkers: OpenDocument files cut by their Office Open XML counterparts' chunkers.

The OpenDocument readers map a text document onto the Word reader's `WordDocument`, a
spreadsheet onto the spreadsheet reader's `Workbook` and a presentation onto the PowerPoint
reader's `Deck` (`indx_assets.pipeline.readers.odf`). Each chunker here hands that model (the
read's parsed form, or the file loaded again) to a `docx`, `sheets` or `pptx` chunker as that
format's parsed form, so an `.odt` is cut exactly as the same document saved as `.docx` would
be, with the same options. A file that cannot be opened is declined.
"""

from collections.abc import Callable
from typing import Any

from indx_interfaces import PageChunks, PageOutput

from indx_assets.pipeline.chunkers.base import ChunkerSettings, StructuredProvider
from indx_assets.pipeline.media import ODP, ODS, ODT


class _Counterpart:
    """Cuts files of `media_type` with `counterpart`, a chunker of `as_type`, given the model
    `load` makes of them (of type `model`)."""

    builtin = True
    reads_parsed = True
    media_type = ""

    def __init__(self, counterpart: Any, as_type: str, model: type, load: Callable[[bytes], Any]) -> None:
        self.counterpart, self.as_type, self.model, self.load = counterpart, as_type, model, load
        self.media_types = frozenset({self.media_type})

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...],
              parsed: object = None) -> tuple[PageChunks, ...]:
        """The port's `chunk`; `parsed` is the OpenDocument reader's model of these bytes, if at hand."""
        from indx_assets.pipeline.readers.ooxml_guard import PackageRefused

        if media_type != self.media_type:
            return ()
        try:
            model = parsed if isinstance(parsed, self.model) else self.load(content)
        except PackageRefused:
            return ()
        return self.counterpart.chunk(content, self.as_type, outputs, parsed=model)


class OdtChunker(_Counterpart):
    media_type = ODT

    def __init__(self, settings: ChunkerSettings | None = None) -> None:
        from indx_assets.pipeline.chunkers.docx import DocxChunker
        from indx_assets.pipeline.readers.docx import DOCX, WordDocument
        from indx_assets.pipeline.readers.odf import load_odt

        super().__init__(DocxChunker(settings), DOCX, WordDocument, load_odt)


class OdsChunker(_Counterpart):
    media_type = ODS

    def __init__(self, settings: ChunkerSettings | None = None) -> None:
        from indx_assets.pipeline.chunkers.sheets import SheetsChunker
        from indx_assets.pipeline.readers.odf import load_ods
        from indx_assets.pipeline.readers.sheets import XLSX, Workbook

        super().__init__(SheetsChunker(settings), XLSX, Workbook, load_ods)


class OdpChunker(_Counterpart):
    media_type = ODP

    def __init__(self, pptx: Any = None) -> None:
        from indx_assets.pipeline.chunkers.pptx import PptxChunker
        from indx_assets.pipeline.readers.odf import load_odp
        from indx_assets.pipeline.readers.pptx import PPTX, Deck

        super().__init__(pptx or PptxChunker(), PPTX, Deck, load_odp)


class OdtProvider(StructuredProvider):
    """The `odt` entry point; options as for the `docx` chunker (`ChunkerSettings`)."""

    chunker_class = OdtChunker  # type: ignore[assignment]


class OdsProvider(StructuredProvider):
    """The `ods` entry point; options as for the `sheets` chunker (`ChunkerSettings`)."""

    chunker_class = OdsChunker  # type: ignore[assignment]


class OdpProvider:
    """The `odp` entry point; options as for the `pptx` chunker (`include_notes`, `max_characters`)."""

    def __init__(self, pptx: Any = None) -> None:
        from indx_assets.pipeline.chunkers.pptx import PptxProvider

        self.pptx = pptx or PptxProvider()

    def with_options(self, **options: Any) -> "OdpProvider":
        return OdpProvider(self.pptx.with_options(**options))

    def chunkers(self) -> tuple[OdpChunker, ...]:
        return (OdpChunker(self.pptx.chunkers()[0]),)
