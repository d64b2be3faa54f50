"""The PDF reader on generated PDFs and bad input: page and document statuses, passwords."""

from pathlib import Path

import pytest
from fixtures import make_pdfs as fx

from indx_assets.pipeline.readers import DocumentRead, ReaderConfig
from indx_assets.pipeline.readers.pdf import PASSWORDS_ENV, pdf_passwords, read_pdf


def _read(path: Path, **config: object) -> DocumentRead:
    return read_pdf(path.read_bytes(), ReaderConfig(**config))  # type: ignore[arg-type]


def test_text_layer_becomes_one_ok_page_per_page(tmp_path: Path) -> None:
    drawn = fx.invoice(tmp_path / "invoice.pdf")
    read = _read(drawn.path)
    assert read.status == "ok" and [p.page for p in read.pages] == [1]
    page = read.pages[0]
    assert page.status == "ok" and page.reader == "pdfium"
    for line in drawn.lines:
        assert line.text in page.text  # glyph-by-glyph drawing still reads as words


def test_scan_is_unreadable_and_blank_page_is_empty(tmp_path: Path) -> None:
    read = _read(fx.image_only(tmp_path / "mixed.pdf").path)
    assert [(p.page, p.status) for p in read.pages] == [(1, "ok"), (2, "unreadable"), (3, "empty")]
    assert read.pages[1].reason and "no text layer" in read.pages[1].reason
    assert read.status == "ok"


def test_encrypted_without_password_has_a_clear_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PASSWORDS_ENV, raising=False)
    drawn = fx.encrypted(tmp_path / "secret.pdf")
    read = _read(drawn.path)
    assert read.status == "encrypted" and read.pages == ()
    assert PASSWORDS_ENV in (read.reason or "")
    wrong = _read(drawn.path, passwords=("not-it",))
    assert wrong.status == "encrypted" and "1 configured password" in (wrong.reason or "")


def test_encrypted_opens_with_a_configured_password(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PASSWORDS_ENV, raising=False)
    drawn = fx.encrypted(tmp_path / "secret.pdf")
    read = _read(drawn.path, passwords=("wrong", drawn.password))
    assert read.status == "ok" and drawn.lines[0].text in read.pages[0].text
    monkeypatch.setenv(PASSWORDS_ENV, f'["{drawn.password}"]')
    assert _read(drawn.path).status == "ok"


def test_passwords_from_config_and_environment_in_one_place(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PASSWORDS_ENV, "alpha\nbeta")
    assert pdf_passwords(ReaderConfig(passwords=("beta", "gamma"))) == ("", "beta", "gamma", "alpha")
    monkeypatch.setenv(PASSWORDS_ENV, '["x y", "z"]')
    assert pdf_passwords() == ("", "x y", "z")


@pytest.mark.parametrize(
    ("make", "status", "words"),
    [
        (lambda p: b"", "failed", "empty"),
        (lambda p: b"%PDF-1.7\n this is not really a PDF at all", "failed", "not a readable PDF"),
        (lambda p: b"\x89PNG\r\n\x1a\n" + bytes(200), "failed", "not a readable PDF"),
        (lambda p: fx.invoice(p).path.read_bytes()[:400], "failed", "not a readable PDF"),
        (lambda p: fx.zero_pages(p).path.read_bytes(), "empty", "no pages"),
    ],
    ids=["zero-bytes", "garbage-with-pdf-header", "png-named-pdf", "truncated", "zero-pages"],
)
def test_bad_documents_get_a_status_not_a_crash(tmp_path: Path, make, status: str, words: str) -> None:
    read = read_pdf(make(tmp_path / "x.pdf"), ReaderConfig())
    assert read.status == status and read.pages == ()
    assert words in (read.reason or "")


def test_many_pages_stream_through(tmp_path: Path) -> None:
    drawn = fx.many_pages(tmp_path / "long.pdf", 150)
    read = _read(drawn.path)
    assert len(read.pages) == 150 and {p.status for p in read.pages} == {"ok"}
    assert read.metadata["page_count"] == 150


@pytest.mark.parametrize("value", ['["wrong", "{pw}"]', "wrong\n{pw}\n"], ids=["json-list", "one-a-line"])
def test_both_password_forms_reach_the_settings_and_the_reader(value: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-a-line form crashed `Settings.from_env` (which read JSON only) while the reader
    accepted it: both now read the variable by one rule."""
    from indx_assets.wiring.definitions import build_resources
    from indx_assets.wiring.settings import Settings

    drawn = fx.encrypted(tmp_path / "secret.pdf")
    monkeypatch.setenv("INDX_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(PASSWORDS_ENV, value.format(pw=drawn.password))
    settings = Settings.from_env()
    assert settings.pdf_passwords == ("wrong", drawn.password)
    assert pdf_passwords() == ("", "wrong", drawn.password)
    assert _read(drawn.path).status == "ok", "the reader opens it from the environment"
    config = build_resources(settings)["readers"].config  # type: ignore[attr-defined]
    monkeypatch.delenv(PASSWORDS_ENV)
    assert read_pdf(drawn.path.read_bytes(), config).status == "ok", "and from the settings the definitions pass on"


@pytest.mark.parametrize("value", ['["unclosed", ', '["ok", 7]', '{"a": 1}'.join('[]'), "[not json"])
def test_a_malformed_password_list_is_one_line_not_a_traceback(value: str, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, PASSWORDS_ENV: value, "INDX_HOME": str(tmp_path / "home")}
    done = subprocess.run([str(Path(sys.executable).parent / "indx"), "status"], env=env, capture_output=True,
                          text=True, timeout=300)
    message = done.stderr.strip()
    assert done.returncode == 2 and len(message.splitlines()) == 1, done.stderr[-3000:]
    assert PASSWORDS_ENV in message and "Traceback" not in message
