"""The chain and the chain runner, with real entry-point discovery of third-party distributions.

Each test installs its chunker distributions as `*.dist-info` directories on `sys.path` (see
`chunker_dists`), so discovery runs through `importlib.metadata` exactly as for a wheel.
"""

import logging
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from chunker_dists import install

from indx_assets.pipeline.chain import ENTRY_POINT_GROUP, ChainConfig, load_chain
from indx_assets.pipeline.chain_runner import run_chain
from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document

TWO_PAGES = "First page of the notes.\fSecond page of the notes.".encode()
SCAN = (
    PageOutput(page=1, text="Typed first page.", status="ok", reader="test"),
    PageOutput(page=2, text="", status="unreadable", reader="test", reason="drawn content, no text"),
)


def _installed_names() -> set[str]:
    return {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}


def test_the_project_registers_the_page_fallback_as_an_entry_point() -> None:
    chain = load_chain(ChainConfig())
    assert "page" in _installed_names()
    assert chain.names[-1] == "page"
    assert getattr(chain.links[-1].chunker, "fallback", False) is True
    assert chain.links[-1].distribution == "indx-assets"


def test_a_third_party_chunker_is_asked_before_the_builtins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, distribution="acme-chunkers", chunkers={"acme": "claims_all"}, version="2.1")
    chain = load_chain(ChainConfig())
    assert chain.names[0] == "acme"
    builtins = [l for l in chain.links[1:] if getattr(l.chunker, "builtin", False) or getattr(l.chunker, "fallback", False)]
    assert len(builtins) == len(chain.links) - 1  # everything after the third party is built in
    assert (chain.links[0].distribution, chain.links[0].version) == ("acme-chunkers", "2.1")

    document = to_document(encode_bytes(TWO_PAGES, source_id="notes.txt", chain=chain))
    assert [(c.page, c.chunker) for c in document.chunks] == [(1, "acme"), (2, "acme")]
    assert document.chunks[1].content == "acme: Second page of the notes."


def test_a_chunker_that_raises_does_not_stop_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    install(tmp_path, monkeypatch, distribution="broken-chunkers", chunkers={"aaa_broken": "raises"})
    install(tmp_path, monkeypatch, distribution="fine-chunkers", chunkers={"zzz_fine": "claims_all"})
    chain = load_chain(ChainConfig())
    assert chain.names[:2] == ("aaa_broken", "zzz_fine")
    with caplog.at_level(logging.ERROR, logger="indx_assets.pipeline.chain_runner"):
        document = to_document(encode_bytes(TWO_PAGES, source_id="notes.txt", chain=chain))
    assert [c.chunker for c in document.chunks] == ["zzz_fine", "zzz_fine"]
    assert document.metadata["failed_chunkers"] == ["aaa_broken"]
    [record] = [r for r in caplog.records if "aaa_broken" in r.getMessage()]
    assert record.exc_info is not None and "aaa_broken is broken" in str(record.exc_info[1])


def test_an_answer_for_a_page_that_does_not_exist_is_dropped_and_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    install(tmp_path, monkeypatch, distribution="far-chunkers", chunkers={"far": "page_99"})
    chain = load_chain(ChainConfig())
    with caplog.at_level(logging.WARNING, logger="indx_assets.pipeline.chain_runner"):
        document = to_document(encode_bytes(TWO_PAGES, source_id="notes.txt", chain=chain))
    assert [c.page for c in document.chunks] == [1, 2]
    assert "far" not in {c.chunker for c in document.chunks}
    assert all("not there" not in c.content for c in document.chunks)
    assert any("page 99" in r.getMessage() and "does not exist" in r.getMessage() for r in caplog.records)


def test_text_claimed_for_an_unreadable_page_is_dropped_and_images_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    install(tmp_path, monkeypatch, distribution="bold-chunkers", chunkers={"bold": "text_and_image"})
    chain = load_chain(ChainConfig())
    with caplog.at_level(logging.WARNING, logger="indx_assets.pipeline.chain_runner"):
        chunk_map = run_chain(chain, b"", "application/x-scan", SCAN)
    by_page = {(c.page, c.index): c for c in chunk_map.chunks}
    # page 1 is readable: the whole claim stands
    assert by_page[1, 0].piece.text == "bold text" and by_page[1, 1].piece.image is not None
    # page 2 is unreadable: only the image survives, and it is renumbered from 0
    page_2 = [c for c in chunk_map.chunks if c.page == 2]
    assert [(c.index, c.chunker, c.piece.text, c.piece.image) for c in page_2] == [(0, "bold", None, b"\x89PNG bold")]
    assert any("text pieces dropped" in r.getMessage() and "page 2" in r.getMessage() for r in caplog.records)


def test_an_emptied_claim_counts_as_declined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, distribution="a-chunkers", chunkers={"a_text": "text_only"})
    install(tmp_path, monkeypatch, distribution="b-chunkers", chunkers={"b_image": "text_and_image"})
    chain = load_chain(ChainConfig())
    assert chain.names[:2] == ("a_text", "b_image")
    chunk_map = run_chain(chain, b"", "application/x-scan", SCAN)
    assert {(c.page, c.chunker) for c in chunk_map.chunks} == {(1, "a_text"), (2, "b_image")}
    assert chunk_map.unclaimed_pages == ()

    alone = load_chain(ChainConfig(disabled=frozenset(_installed_names() - {"a_text"})))
    chunk_map = run_chain(alone, b"", "application/x-scan", SCAN)
    assert [c.page for c in chunk_map.chunks] == [1]
    assert chunk_map.unclaimed_pages == (2,)


def test_with_no_chunker_installed_nothing_is_chunked_and_the_result_says_so() -> None:
    # A bare install: discovery over an empty set of `indx.chunkers` entry points. This is
    # the same code path `load_chain()` takes when no distribution registers a chunker; the
    # venv cannot be made bare without uninstalling this very project.
    chain = load_chain(ChainConfig(), eps=())
    assert chain.links == ()
    encoded = encode_bytes(TWO_PAGES, source_id="notes.txt", chain=chain)
    document = to_document(encoded)
    assert document.chunks == ()
    assert document.metadata["chunkers"] == []
    assert document.metadata["unclaimed_pages"] == [1, 2]
    assert document.metadata["status"] == "ok"  # reading worked; chunking had nobody to ask
    assert document.content == TWO_PAGES.decode()


def test_a_distribution_that_fails_to_load_is_left_out_and_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    install(tmp_path, monkeypatch, distribution="crashy", chunkers={"crashy": "Provider"},
            module_source="raise RuntimeError('import-time bug')\n")
    install(tmp_path, monkeypatch, distribution="liar", chunkers={"liar": "Provider"},
            module_source="class Provider:\n    def chunkers(self):\n        return ('not a chunker',)\n")
    install(tmp_path, monkeypatch, distribution="ok-chunkers", chunkers={"okay": "claims_all"})
    with caplog.at_level(logging.ERROR, logger="indx_assets.pipeline.chain"):
        chain = load_chain(ChainConfig())
    assert "okay" in chain.names and "crashy" not in chain.names and "liar" not in chain.names
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "crashy" in messages and "liar" in messages


def test_the_chain_is_disabled_and_reordered_by_entry_point_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, distribution="acme-chunkers", chunkers={"acme": "claims_all", "acme.fancy": "claims_all"})
    default = load_chain(ChainConfig())
    assert set(default.names[:2]) == {"acme", "acme.fancy"}

    reordered = load_chain(ChainConfig(order=("page", "acme.fancy")))
    assert reordered.names[:2] == ("page", "acme.fancy")
    assert set(reordered.names) == set(default.names)

    disabled = load_chain(ChainConfig(disabled=frozenset({"page", "acme"})))
    assert "page" not in disabled.names and "acme" not in disabled.names
    assert disabled.names[0] == "acme.fancy"
    document = to_document(encode_bytes(TWO_PAGES, source_id="n.txt", chain=load_chain(ChainConfig(order=("page",)))))
    assert {c.chunker for c in document.chunks} == {"page"}


def test_chain_config_mistakes_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, monkeypatch, distribution="acme-chunkers", chunkers={"acme": "claims_all"})
    with pytest.raises(ValueError, match="not installed"):
        load_chain(ChainConfig(order=("nonesuch",)))
    with pytest.raises(ValueError, match="not installed"):
        load_chain(ChainConfig(disabled=frozenset({"nonesuch"})))
    with pytest.raises(ValueError, match="takes no options"):
        load_chain(ChainConfig(options={"page": {"size": 3}}))
    with pytest.raises(ValueError, match="refused its options"):
        load_chain(ChainConfig(options={"acme": {"bogus": 1}}))
    assert load_chain(ChainConfig(options={"acme": {"prefix": "x"}})).names[0] == "acme"
    for bad in ({"order": "page"}, {"disabled": [1]}, {"order": ["page", "page"]},
                {"order": ["page"], "disabled": ["page"]}, {"options": {"page": 3}}, {"ordr": []}, []):
        with pytest.raises(ValueError):
            ChainConfig.from_mapping(bad)  # type: ignore[arg-type]


def test_the_chain_config_is_read_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDX_CHAIN", '{"disabled": ["page"]}')
    assert "page" not in load_chain().names
    path = tmp_path / "chain.json"
    path.write_text('{"order": ["page"]}', encoding="utf-8")
    monkeypatch.setenv("INDX_CHAIN", str(path))
    assert load_chain().names[0] == "page"
    monkeypatch.setenv("INDX_CHAIN", str(tmp_path / "missing.json"))
    with pytest.raises(ValueError, match="INDX_CHAIN"):
        load_chain()


def test_the_fingerprint_is_stable_and_tracks_config_and_installed_distributions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = load_chain(ChainConfig()).fingerprint
    assert base == load_chain(ChainConfig()).fingerprint
    assert base == load_chain(ChainConfig.from_mapping({})).fingerprint
    assert load_chain(ChainConfig(disabled=frozenset({"page"}))).fingerprint != base
    assert load_chain(ChainConfig(order=("page",))).fingerprint != base

    fingerprints = set()
    for version in ("1.0", "1.1"):
        with monkeypatch.context() as m:
            install(tmp_path / version, m, distribution="acme-chunkers", chunkers={"acme": "claims_all"}, version=version)
            installed = load_chain(ChainConfig())
            assert installed.fingerprint == load_chain(ChainConfig()).fingerprint
            fingerprints.add(installed.fingerprint)
            with_options = load_chain(ChainConfig(options={"acme": {"prefix": "x"}})).fingerprint
            assert with_options != installed.fingerprint
    assert len(fingerprints) == 2 and base not in fingerprints
    assert load_chain(ChainConfig()).fingerprint == base  # uninstalled again


def test_pieces_are_numbered_per_page_in_order_and_bad_offsets_are_not_trusted() -> None:
    from indx_assets.pipeline.chain import Chain, ChainLink
    from indx_assets.pipeline.chunker_port import ChunkPiece, PageChunks

    class Slicer:  # a chunker written inline: the chain runner is what is under test here
        def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple[PageChunks, ...]:
            text = outputs[0].text
            return (PageChunks(1, (
                ChunkPiece(text=text[:5], bbox_reason="no_geometry", start=0, end=5),
                ChunkPiece(text=text[6:], bbox_reason="no_geometry", start=6, end=len(text)),
                ChunkPiece(text="invented", bbox_reason="no_geometry", start=10, end=500),
            )),)

    chain = Chain((ChainLink("slicer", Slicer(), "inline", "", ""),))
    encoded = encode_bytes(b"Hello brave world", source_id="s.txt", chain=chain)
    document = to_document(encoded)
    assert [c.locator for c in document.chunks] == ["char:0-5", "char:6-17", "page:1/chunk:2"]
    assert [(c.start_offset, c.end_offset) for c in document.chunks] == [(0, 5), (6, 17), (None, None)]
    for c in document.chunks[:2]:
        assert document.content[c.start_offset:c.end_offset] == c.content
