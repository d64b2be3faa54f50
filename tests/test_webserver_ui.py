"""The lineage UI for real: dagster-webserver on loopback over workspace.yaml, its GraphQL API,
and the asset graph page rendered by headless Chromium (Debian `chromium`)."""

import sys
from pathlib import Path

import pytest

from chunker_dists import install

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from screenshot_lineage import CHROMIUM, GRAPH_PATH, graphql, ingest_sample, screenshot, webserver  # noqa: E402

ASSETS = ["source_documents", "page_outputs", "chunk_map", "chunk_embeddings", "chunks_table"]
QUERY = """
query ($partition: String!, $keys: [AssetKeyInput!]) {
  assetNodes(assetKeys: $keys, loadMaterializations: false) {
    assetKey { path }
    description
    kinds
    isPartitioned
    staleStatusByPartition(partitions: [$partition])
    staleCausesByPartition(partitions: [$partition]) { reason category }
  }
}
"""


def test_the_webserver_serves_the_graph_with_stale_status_and_chromium_renders_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, corpus = tmp_path / "indx", tmp_path / "corpus"
    ingest_sample(home, corpus)
    # the server's code location sees a newly installed chunker: every chunk map is stale
    site = tmp_path / "site"
    install(site, monkeypatch, distribution="plain-chunkers", chunkers={"plain": "plain_text_only"})
    monkeypatch.setenv("PYTHONPATH", str(site))

    with webserver(home, corpus) as url:
        nodes = {"/".join(n["assetKey"]["path"]): n for n in
                 graphql(url, QUERY, {"partition": "corpus/notes/tea-harvest.txt",
                                     "keys": [{"path": [a]} for a in ASSETS]})["assetNodes"]}
        assert set(nodes) == set(ASSETS)
        for name in ASSETS:
            assert nodes[name]["isPartitioned"] and nodes[name]["description"] and nodes[name]["kinds"], name
        assert "lancedb" in nodes["chunks_table"]["kinds"]
        assert nodes["page_outputs"]["staleStatusByPartition"] == ["FRESH"]
        assert nodes["chunk_map"]["staleStatusByPartition"] == ["STALE"]
        assert any(c["category"] == "CODE" for c in nodes["chunk_map"]["staleCausesByPartition"][0])
        if CHROMIUM is None:
            pytest.skip("chromium is not installed (apt-get install chromium)")
        picture = tmp_path / "lineage.png"
        screenshot(url + GRAPH_PATH, picture)

    from PIL import Image

    image = Image.open(picture).convert("RGB")
    assert image.size == (1600, 1000)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200, "the page looks blank"
    dominant = max(count for count, _ in colours) / (image.width * image.height)
    assert dominant < 0.9, "one colour covers almost the whole page"
    # the graph's nodes are drawn in the middle band: it holds more than background there
    band = image.crop((300, 400, 1500, 560)).getcolors(maxcolors=1 << 20)
    assert band is not None and len(band) > 50
