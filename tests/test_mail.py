"""E-mail (`.eml`): the `eml` reader's pages, its attachments as further pages, their chunks.

The messages are built by Python's `email` package (`tests/fixtures/make_mail.py`) in several
transfer encodings and charsets, with nested multiparts and attachments the project's own
fixture code wrote (a Word report, a reportlab PDF). Hostile messages (MIME bombs) must get a
recorded status in bounded time and memory.
"""

import pytest
from fixtures import make_docx
from fixtures import make_mail as fx
from metered import cost

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.chain_runner import run_chain
from indx_assets.pipeline.fidelity import measure
from indx_assets.pipeline.media import EML, detect_media_type
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.pipeline.readers import ReaderConfig, read_document

#: A refusal's bounds. The wide bomb is parsed before its parts are counted, and tracemalloc
#: (which `cost` runs under) slows the parser about sevenfold: 2-3 s on a loaded machine.
MAX_SECONDS = 10.0
MAX_PEAK_BYTES = 16 << 20
HEADERS = {"subject": fx.SUBJECT, "from": fx.SENDER, "to": fx.TO, "cc": fx.CC,
           "date": "2026-12-01T09:30:00+01:00", "message_id": fx.MESSAGE_ID}


def _document(content: bytes, name: str = "mail.eml"):  # type: ignore[no-untyped-def]
    return to_document(encode_bytes(content, source_id=name, name=name, chain=load_chain(ChainConfig())))


def _chunks(doc) -> list[tuple[int, str, str, str]]:  # type: ignore[no-untyped-def]
    return [(c.page, c.locator, c.chunk_type, c.content) for c in doc.chunks if c.chunk_type != "image"]


def test_an_eml_file_is_read_as_an_e_mail_not_as_raw_text() -> None:
    assert detect_media_type(fx.plain_qp(), "note.eml") == EML
    assert detect_media_type(fx.plain_qp(), "note.txt") == "text/plain"


def test_a_quoted_printable_body_is_decoded_and_the_headers_are_metadata() -> None:
    content = fx.plain_qp()
    assert b"=\n" in content and b"=C3=A9" in content  # soft breaks and encoded bytes on the wire
    doc = _document(content)
    assert _chunks(doc) == [(1, "page:1:char:0-219", "content", fx.PLAIN_BODY.strip())]
    assert {k: doc.metadata[k] for k in HEADERS} == HEADERS
    assert doc.metadata["status"] == "ok" and "attachments" not in doc.metadata


@pytest.mark.parametrize(("make", "body"), [(fx.latin1, fx.LATIN1_BODY), (fx.japanese, fx.JAPANESE_BODY)],
                         ids=["iso-8859-1-base64", "iso-2022-jp"])
def test_a_body_in_a_legacy_charset_is_decoded(make, body: str) -> None:  # type: ignore[no-untyped-def]
    content = make()
    assert body.encode("utf-8") not in content  # the wire holds other bytes
    doc = _document(content)
    assert [c.content for c in doc.chunks] == [body.strip()]
    assert doc.content == body


def test_an_html_body_keeps_its_structure() -> None:
    doc = _document(fx.html_only())
    table = "\n".join(" | ".join(row) for row in fx.HTML_TABLE)
    assert _chunks(doc) == [
        (1, "page:1:char:0-47", "content", "\n\n".join((fx.HTML_TITLE, *fx.HTML_ITEMS))),
        (1, "table:page:1:char:49-94", "table", table),
    ]
    assert [c.chunker for c in doc.chunks] == ["html", "html"]
    assert doc.chunks[0].metadata["section_title"] == fx.HTML_TITLE


def test_attachments_are_further_pages_of_the_mails_own_document() -> None:
    doc = _document(fx.with_attachments())
    table = "\n".join(" | ".join(row) for row in make_docx.TABLE) + f"\n{make_docx.MERGED_NOTE} | -"
    csv = "\n".join(" | ".join(row) for row in fx.CSV_ROWS)
    assert _chunks(doc) == [
        # the plain body; its HTML alternative is the same words, no attachment
        (1, "page:1:char:0-36", "content", fx.ALT_PLAIN.strip()),
        (2, "attachment:1:page:1:char:31-194", "content",
         f"{make_docx.TITLE}\n\n{make_docx.REVENUE}\n\n{make_docx.REVENUE_TEXT}\n\n{make_docx.BULLETS[0]}\n\n"
         f"{make_docx.BULLETS[1]}\n\n{make_docx.COSTS}"),
        (2, "attachment:1:table:page:1:char:196-293", "table", table),
        (3, "attachment:1:page:2:char:31-115", "content", f"{make_docx.OUTLOOK}\n\n{make_docx.OUTLOOK_TEXT}"),
        (3, "attachment:1:comment:page:2:char:117-154", "comment", make_docx.COMMENT),
        (4, "attachment:2:page:1:char:0-43", "content", "\n".join(fx.PDF_LINES)),
        (5, "attachment:3:table:page:1:char:0-39", "table", csv),
    ]
    # each attachment's chunks were cut by its own format's chunker and carry its file name
    by_page = {c.page: (c.chunker, c.metadata.get("attachment_name")) for c in doc.chunks}
    assert by_page == {1: ("text", None), 2: ("docx", "report.docx"), 3: ("docx", "report.docx"),
                       4: ("pdf", "invoice.pdf"), 5: ("sheets", "sales.csv")}
    [image] = [c for c in doc.chunks if c.chunk_type == "image"]
    assert image.locator == "attachment:1:image:page:2/chunk:2" and image.image.startswith(b"\x89PNG")
    assert {c.source_id for c in doc.chunks} == {"mail.eml"}  # one file, one source
    # every attachment is recorded; the one no reader takes is listed as unsupported
    assert [(a["name"], a["status"], a.get("pages")) for a in doc.metadata["attachments"]] == [
        ("report.docx", "ok", [2, 3]), ("invoice.pdf", "ok", [4, 4]), ("sales.csv", "ok", [5, 5]),
        (fx.ZIP_NAME, "unsupported", None)]
    assert doc.metadata["unsupported_attachments"] == [
        {"attachment": 4, "name": fx.ZIP_NAME, "media_type": "application/zip",
         "reason": "no reader for media type application/zip"}]


def test_every_word_of_the_mail_and_its_attachments_is_in_its_chunks() -> None:
    content = fx.with_attachments()
    read = read_document(content, EML, ReaderConfig())
    doc = _document(content)
    fidelity = measure("mail.eml", read.pages, doc.chunks)
    assert fidelity.passes, fidelity.to_json()
    assert fidelity.totals()["foreign"] == 0 and fidelity.totals()["lost"] == 0


def test_stored_pages_chunk_alike_without_the_readers_parse() -> None:
    """Pages rebuilt from storage (the `page_outputs` table) come without the reader's parsed
    form: the chain takes the message apart again and cuts every attachment the same."""
    from indx_assets.pipeline.schema import pages_table, read_from_pages

    content = fx.with_attachments()
    read = read_document(content, EML, ReaderConfig())
    chain = load_chain(ChainConfig())
    fresh = run_chain(chain, content, EML, read.pages, read.parsed)
    stored = read_from_pages(pages_table("mail.eml", read))
    assert stored.pages == read.pages and stored.metadata["attachments"] == read.metadata["attachments"]
    rebuilt = run_chain(chain, content, EML, stored.pages, None)
    assert rebuilt == fresh and len(fresh.chunks) == 8


def test_an_attached_message_is_read_its_own_attachments_listed() -> None:
    from email.message import EmailMessage

    outer = EmailMessage()
    outer["Subject"] = "Fwd: numbers"
    outer.set_content("See the forwarded message.")
    inner_bytes = fx.with_attachments()
    from email import message_from_bytes, policy

    outer.add_attachment(message_from_bytes(inner_bytes, policy=policy.default))
    doc = _document(outer.as_bytes())
    assert _chunks(doc) == [
        (1, "page:1:char:0-26", "content", "See the forwarded message."),
        (2, "attachment:1:page:1:char:0-36", "content", fx.ALT_PLAIN.strip()),
    ]
    [attached] = doc.metadata["attachments"]
    assert (attached["media_type"], attached["status"]) == (EML, "ok")


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: fx.mime_bomb_deep(5_000), "declares 5,000 multipart boundaries"),
        (lambda: fx.mime_bomb_wide(15_000), "15,001 lines could delimit MIME parts"),
        (lambda: fx.mime_bomb_wide(600), "more than 500 MIME parts"),
    ],
    ids=["nested-5000-deep", "15000-parts", "600-parts-parsed"],
)
def test_a_mime_bomb_gets_a_status_in_bounded_time_and_memory(make, reason: str) -> None:  # type: ignore[no-untyped-def]
    bomb = make()
    (read, elapsed, peak) = cost(lambda: read_document(bomb, EML, ReaderConfig()))
    assert (read.status, read.pages) == ("failed", ())
    assert reason in (read.reason or "")
    assert elapsed < MAX_SECONDS and peak < MAX_PEAK_BYTES, (elapsed, peak)
    assert run_chain(load_chain(ChainConfig()), bomb, EML, read.pages).chunks == ()
