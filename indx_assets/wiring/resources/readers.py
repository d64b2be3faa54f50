"""Reader settings as a resource (PDF passwords, OCR resolution and languages)."""

import dagster as dg

from indx_assets.pipeline.readers import ReaderConfig


class ReadersResource(dg.ConfigurableResource):
    pdf_passwords: list[str] = []
    ocr_dpi: int = 200
    ocr_languages: str = "eng"
    max_ocr_pages: int = ReaderConfig.max_ocr_pages

    @property
    def config(self) -> ReaderConfig:
        return ReaderConfig(passwords=tuple(self.pdf_passwords), ocr_dpi=self.ocr_dpi, ocr_languages=self.ocr_languages,
                            max_ocr_pages=self.max_ocr_pages)
