"""A long sheet through a real `indx ingest` process: a real Dagster instance, a real LanceDB
directory, a real (tiny, `embedder_models`) sentence-transformers model, which embeds the
sheet's hundreds of chunks in seconds where MiniLM takes a minute on 2 cores.

What a user notices: every chunk the ingest cut from a sheet long enough to be cut into several
pages is in the search table once, with its text, page and vector, and nothing else is; the
chunk map's ids are the table's ids. (The ingest reads the chunk map in batches and joins the
vectors by id in Arrow, `stages.embed_chunks` and `stages.write_rows`.)
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from embedder_models import save_tiny_sentence_transformer
from fixtures import make_sheets as fx

from indx_assets.pipeline.embedders.registry import EMBEDDER_ENV, load_embedder
from indx_assets.wiring.definitions import build_resources
from indx_assets.wiring.settings import Settings

ROWS = 6_000  # about 290,000 characters: two pages of `readers.sheets.PAGE_CHARS`, the second under the repeated header


def test_an_ingested_long_sheet_has_each_chunk_of_its_chunk_map_once_with_its_vector(tmp_path: Path) -> None:
    spec = f"sentence-transformers:{save_tiny_sentence_transformer(tmp_path / 'tiny-st')}"
    corpus, home = tmp_path / "corpus", tmp_path / "indx"
    corpus.mkdir()
    (corpus / "ledger.xlsx").write_bytes(fx.ledger(ROWS))
    indx = str(Path(sys.executable).parent / "indx")
    env = {**os.environ, "INDX_HOME": str(home), "HOME": str(home), EMBEDDER_ENV: spec}
    done = subprocess.run([indx, "ingest", str(corpus), "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    resources = build_resources(Settings.from_env(home))
    chunk_map = resources["storage"].read("chunk_map", "corpus/ledger.xlsx").to_pylist()  # type: ignore[attr-defined]
    assert len({c["page"] for c in chunk_map}) >= 2, "the sheet must be long enough to be cut into pages"

    rows = resources["lancedb"].table().to_arrow().select(["id", "text", "page", "vector"]).to_pylist()  # type: ignore[attr-defined]
    assert len(rows) == len({r["id"] for r in rows}) == len(chunk_map)
    assert {r["id"]: (r["text"], r["page"]) for r in rows} == {c["id"]: (c["text"], c["page"]) for c in chunk_map}
    assert all(r["vector"] is not None and len(r["vector"]) == 16 for r in rows)
    # each row holds its own chunk's vector, not another's: the first, a middle and the last chunk re-embedded
    picked = [rows[0], rows[len(rows) // 2], rows[-1]]
    again = load_embedder(spec).embedder.embed_texts([r["text"] for r in picked])
    stored = np.asarray([r["vector"] for r in picked])
    assert np.allclose(stored, again, atol=1e-5)
