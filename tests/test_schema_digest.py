"""The data version of stored pages and chunks (`schema.digest`): long text is hashed in pieces
from its Arrow buffer, and the bytes hashed stay those of each row as sorted-key JSON, so no
data version moves."""

import base64
import hashlib
import json

import pyarrow as pa

from indx_assets.pipeline import schema
from indx_assets.pipeline.schema import CHUNKS, PAGES, digest


def _rows_hash(table: pa.Table) -> str:
    """The documented rule, spelled out: the document record, then each row's JSON and a newline."""
    h = hashlib.sha256((table.schema.metadata or {}).get(b"indx.document", b""))
    for row in table.to_pylist():
        row = {k: base64.b64encode(v).decode() if isinstance(v, bytes) else v for k, v in row.items()}
        h.update(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode() + b"\n")
    return h.hexdigest()


def test_a_page_longer_than_a_piece_hashes_as_its_row_json(monkeypatch) -> None:
    # quotes, backslashes, controls, accents and emoji; a small piece size puts multibyte
    # characters and escapes across every boundary between pieces
    text = 'the "pilot" said \\ \n\t\x01 crème 😀 \u2028 ' * 5000
    monkeypatch.setattr(schema, "_PIECE", 7)
    pages = pa.Table.from_pylist(
        [{"source_id": "s/ä.txt", "page": 1, "text": text, "status": "ok", "reader": "text", "reason": None,
          "lines": [{"text": "l", "bbox": [0.0, 1.0, 2.0, 3.5], "metadata": "{}"}], "metadata": "{}"},
         {"source_id": "s/ä.txt", "page": 2, "text": "", "status": "empty", "reader": "text", "reason": "only whitespace",
          "lines": None, "metadata": "{}"},
         {"source_id": "s/ä.txt", "page": 3, "text": None, "status": "failed", "reader": "text", "reason": "x",
          "lines": None, "metadata": "{}"}],
        schema=PAGES.with_metadata({"indx.document": '{"status": "ok"}'}))
    assert digest(pages) == _rows_hash(pages)
    chunks = pa.Table.from_pylist([{"id": f"c{i}", "text": text[:100], "image": b"\x00\xff" * 3, "page": 1}
                                   for i in range(300)], schema=CHUNKS)
    assert digest(chunks) == _rows_hash(chunks)
