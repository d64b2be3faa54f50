"""Where things live: one data directory (`INDX_HOME`) and the corpus roots.

The data directory is found the way git finds its repository: `$INDX_HOME` when set, else the
nearest `.indx` folder in the current folder or one of its parents, else `./.indx` (which
`indx ingest` creates; commands that only read refuse to, `NoDataDirectory`). It holds the
recorded corpus roots (`corpus.json`), the Dagster instance (`dagster/`), the stored asset
outputs (`assets/`) and the LanceDB database (`lancedb/`). Each location can be moved on its own
(an object-store URI for storage and LanceDB in production). Corpus roots are `LABEL=PATH`
specs (`roots`).
"""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from indx_assets.pipeline.bounds import Bounds
from indx_assets.pipeline.chain import CHAIN_ENV, ChainConfig
from indx_assets.pipeline.readers.passwords import PASSWORDS_ENV, parse_passwords
from indx_assets.pipeline.roots import Root, parse_root, parse_roots, unique_labels

ROOT = Path(__file__).resolve().parents[2]  # the repository (this file is indx_assets/wiring/settings.py)
SAMPLE_CORPUS = ROOT / "data" / "sample"
CORPUS_FILE = "corpus.json"
HOME_ENV = "INDX_HOME"
#: The data directory's folder name, looked for in the current folder and its parents.
HOME_DIR = ".indx"


class NoDataDirectory(LookupError):
    """A command that only reads found no data directory (it never creates one)."""


def find_home(start: Path) -> Path | None:
    """The nearest `.indx` folder in `start` or one of its parents, or None."""
    for folder in (start, *start.parents):
        if (folder / HOME_DIR).is_dir():
            return folder / HOME_DIR
    return None


def home_from_env() -> Path:
    """The data directory, absolute: `$INDX_HOME`, else the nearest `.indx` in the current folder
    or its parents, else `./.indx` (not created here)."""
    if os.environ.get(HOME_ENV):
        return Path(os.environ[HOME_ENV]).expanduser().resolve()
    cwd = Path.cwd()
    return find_home(cwd) or cwd / HOME_DIR


#: `INDX_EXECUTOR`: the executor of the runs Dagster launches (`wiring.executors`).
EXECUTOR_ENV = "INDX_EXECUTOR"
EXECUTORS = ("default", "in_process", "celery", "dask")


class ExecutorError(ValueError):
    """`INDX_EXECUTOR` names no executor, or one whose package is not installed."""


def executor_from_env() -> str:
    name = os.environ.get(EXECUTOR_ENV, "").strip() or "default"
    if name not in EXECUTORS:
        raise ExecutorError(f"{EXECUTOR_ENV}={name!r} is not an executor; use one of: {', '.join(EXECUTORS)}")
    return name


#: `INDX_SENSOR_INTERVAL_S`: seconds between two ticks of the corpus sensor, and between two
#: evaluations of automation (`wiring.automation`), when the Dagster daemon runs them.
SENSOR_INTERVAL_ENV = "INDX_SENSOR_INTERVAL_S"
#: Dagster's own default: a tick over a large corpus is not free, and nobody waits on it.
DEFAULT_SENSOR_INTERVAL_S = 30


class SensorIntervalError(ValueError):
    """`INDX_SENSOR_INTERVAL_S` is not a whole number of seconds of at least 1."""


def sensor_interval_from_env() -> int:
    raw = os.environ.get(SENSOR_INTERVAL_ENV, "").strip()
    if not raw:
        return DEFAULT_SENSOR_INTERVAL_S
    try:
        seconds = int(raw)
    except ValueError:
        seconds = 0
    if seconds < 1:
        raise SensorIntervalError(f"{SENSOR_INTERVAL_ENV} must be a whole number of seconds, at least 1; got {raw!r}")
    return seconds


@dataclass(frozen=True)
class Settings:
    home: Path
    storage_uri: str
    lancedb_uri: str
    corpus_roots: tuple[str, ...]
    chain_config: str = ""
    pdf_passwords: tuple[str, ...] = field(default=())
    bounds: Bounds = field(default_factory=Bounds)
    #: the executor of launched runs (`wiring.executors`)
    executor: str = "default"
    #: seconds between sensor ticks and automation evaluations (`INDX_SENSOR_INTERVAL_S`)
    sensor_interval_s: int = DEFAULT_SENSOR_INTERVAL_S

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"

    def require_home(self) -> "Settings":
        """These settings, if their data directory exists; else `NoDataDirectory` saying where it
        was looked for (for commands that only read: they never create one)."""
        if self.home.is_dir():
            return self
        if os.environ.get(HOME_ENV):
            raise NoDataDirectory(f"no data directory at {self.home} ({HOME_ENV}); "
                                  f"run `indx ingest` to create it, or point {HOME_ENV} at one")
        raise NoDataDirectory(f"no data directory: no {HOME_DIR} in {self.home.parent} or any folder above it, "
                              f"and {HOME_ENV} is not set; run `indx ingest` here to create one, or set {HOME_ENV}")

    @classmethod
    def from_env(cls, home: Path | str | None = None) -> "Settings":
        """Read the environment: the data directory (`home` when given, else `home_from_env`),
        INDX_STORAGE_URI, INDX_LANCEDB_URI, INDX_CORPUS (`[LABEL=]PATH` roots; `roots.RootError` if
        two share a label), INDX_CHAIN (`chain.ChainConfigError` if it is no chain config),
        INDX_PDF_PASSWORDS (a JSON list or one a line; `passwords.PasswordsError` if malformed),
        INDX_EXECUTOR (`wiring.executors`), INDX_SENSOR_INTERVAL_S and the bounds (`indx_assets.pipeline.bounds`). A
        mistake in any of them is found here, before a command does anything."""
        home = Path(home).expanduser().resolve() if home is not None else home_from_env()
        roots = os.environ.get("INDX_CORPUS")
        corpus = tuple(r for r in roots.split(os.pathsep) if r) if roots else recorded_roots(home) or (str(SAMPLE_CORPUS),)
        # a bad or repeated label is the user's to fix, before anything runs; overlapping roots are
        # refused when listed (`CorpusResource`), so `indx forget` can still drop one
        parse_roots(corpus, overlapping=True)
        chain_config = os.environ.get(CHAIN_ENV, "")
        ChainConfig.parse(chain_config)  # malformed JSON is said now, by every command, not deep in a run
        return cls(
            home=home,
            storage_uri=os.environ.get("INDX_STORAGE_URI", str(home / "assets")),
            lancedb_uri=os.environ.get("INDX_LANCEDB_URI", str(home / "lancedb")),
            corpus_roots=corpus,
            chain_config=chain_config,
            pdf_passwords=parse_passwords(os.environ.get(PASSWORDS_ENV, "")),
            bounds=Bounds.from_env(),
            executor=executor_from_env(),
            sensor_interval_s=sensor_interval_from_env(),
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
