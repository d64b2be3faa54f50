"""E-mail, EPUB and OpenDocument through the asset graph: a real Dagster instance, a real
LanceDB directory, files written by the fixtures' generators into a corpus of their own.

What a user notices: each file is one source, found by search, and a hit inside an e-mail's
attachment says which attachment it comes from (locator and metadata).
"""

from pathlib import Path

import dagster as dg
from fixtures import make_epub, make_mail, make_odf
from test_pipeline import ingest

from indx_assets.app.search import search_chunks
from indx_assets.wiring.settings import Settings


def _settings(tmp_path: Path) -> Settings:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "quarterly.eml").write_bytes(make_mail.with_attachments())
    (corpus / "lighthouses.epub").write_bytes(make_epub.book())
    (corpus / "minutes.odt").write_bytes(make_odf.text())
    home = tmp_path / "indx"
    return Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                    corpus_roots=(str(corpus),))


def test_mail_book_and_minutes_are_ingested_and_found(instance: dg.DagsterInstance, tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    ingest(instance, settings)
    assert sorted(instance.get_dynamic_partitions("sources")) == [
        "corpus/lighthouses.epub", "corpus/minutes.odt", "corpus/quarterly.eml"]
    (hit,) = search_chunks(settings, "Harbour invoice 4711 total due", k=1, mode="fts")
    assert (hit.source_id, hit.locator, hit.page) == ("corpus/quarterly.eml", "attachment:2:page:1:char:0-43", 4)
    assert hit.metadata["attachment_name"] == "invoice.pdf"
    (hit,) = search_chunks(settings, "keepers trimmed the wicks", k=1, mode="fts")
    assert hit.source_id == "corpus/lighthouses.epub" and hit.chunk_type == "content"
    (hit,) = search_chunks(settings, "abstentions were not recorded", k=1, mode="fts")
    assert hit.source_id == "corpus/minutes.odt" and hit.chunk_type == "table"
