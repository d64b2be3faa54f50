"""Where things live: one data directory (`INDX_HOME`) and the corpus roots.

`INDX_HOME` (default `./.indx`) holds the recorded corpus roots (`corpus.json`), the Dagster
instance (`dagster/`), the stored asset outputs (`assets/`) and the LanceDB database
(`lancedb/`). Each location can be moved on its own (an object-store URI for storage and
LanceDB in production). Corpus roots are `LABEL=PATH` specs (`roots`).
"""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from indx_assets.pipeline.bounds import Bounds
from indx_assets.pipeline.readers.passwords import PASSWORDS_ENV, parse_passwords
from indx_assets.pipeline.roots import Root, parse_root, parse_roots, unique_labels

ROOT = Path(__file__).resolve().parents[2]  # the repository (this file is indx_assets/wiring/settings.py)
SAMPLE_CORPUS = ROOT / "data" / "sample"
CORPUS_FILE = "corpus.json"


@dataclass(frozen=True)
class Settings:
    home: Path
    storage_uri: str
    lancedb_uri: str
    corpus_roots: tuple[str, ...]
    chain_config: str = ""
    pdf_passwords: tuple[str, ...] = field(default=())
    bounds: Bounds = field(default_factory=Bounds)

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"

    @classmethod
    def from_env(cls) -> "Settings":
        """Read the environment: INDX_HOME, INDX_STORAGE_URI, INDX_LANCEDB_URI, INDX_CORPUS
        (`[LABEL=]PATH` roots; `roots.RootError` if two share a label), INDX_CHAIN,
        INDX_PDF_PASSWORDS (a JSON list or one a line; `passwords.PasswordsError` if malformed)
        and the bounds (`indx_assets.pipeline.bounds`)."""
        home = Path(os.environ.get("INDX_HOME", ".indx")).resolve()
        roots = os.environ.get("INDX_CORPUS")
        corpus = tuple(r for r in roots.split(os.pathsep) if r) if roots else recorded_roots(home) or (str(SAMPLE_CORPUS),)
        # a bad or repeated label is the user's to fix, before anything runs; overlapping roots are
        # refused when listed (`CorpusResource`), so `indx forget` can still drop one
        parse_roots(corpus, overlapping=True)
        return cls(
            home=home,
            storage_uri=os.environ.get("INDX_STORAGE_URI", str(home / "assets")),
            lancedb_uri=os.environ.get("INDX_LANCEDB_URI", str(home / "lancedb")),
            corpus_roots=corpus,
            chain_config=os.environ.get("INDX_CHAIN", ""),
            pdf_passwords=parse_passwords(os.environ.get(PASSWORDS_ENV, "")),
            bounds=Bounds.from_env(),
        )


#: corpus.json's `ids` once source ids are `{label}/{path}` (before, they were the bare path).
LABELLED_IDS = "label/path"


def _recorded(home: Path) -> dict:
    path = home / CORPUS_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def recorded_roots(home: Path) -> tuple[str, ...]:
    """The corpus roots `indx ingest` recorded (as `LABEL=PATH` specs), so `dagster dev` can
    re-read the same files. Roots recorded before roots had labels get their names."""
    roots = _recorded(home).get("roots", [])
    if all(isinstance(r, dict) for r in roots):
        return tuple(Root(r["label"], r["path"]).spec for r in roots)
    return tuple(r.spec for r in unique_labels(roots))


def has_unlabelled_ids(home: Path) -> bool:
    """Whether the data directory was written when source ids were bare relative paths."""
    recorded = _recorded(home)
    return bool(recorded) and recorded.get("ids") != LABELLED_IDS


def record_roots(home: Path, roots: list[str]) -> None:
    """Record the roots (specs) for later commands; ids are labelled from now on."""
    home.mkdir(parents=True, exist_ok=True)
    listed = [{"label": r.label, "path": r.path} for r in map(parse_root, roots)]
    replace_text(home / CORPUS_FILE, json.dumps({"ids": LABELLED_IDS, "roots": listed}, indent=2))


def replace_text(path: Path, text: str) -> None:
    """Write `path` whole or not at all: written beside it, then renamed over it. (Written in
    place, a process killed mid-write left `corpus.json` empty and every later command failed
    to read it.)"""
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(text)
    os.replace(partial, path)
