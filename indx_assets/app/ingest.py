"""Ingesting corpus roots into a data directory: what `indx ingest` and `indx_assets.ingest` run.

The roots given are added to those recorded by earlier ingests (so every known source stays
known), one partition is registered per file, what is missing or stale is materialized in
batched runs, and the result is summed up from the stored outputs (`IngestSummary`). The
caller holds the data directory's writer lock (`home_lock.writer_lock`).

Dagster, pyarrow and the pipeline's heavy parts load when an ingest runs, not when this module
is imported: `indx_assets.IngestSummary` is importable without them.
"""

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indx_assets.pipeline.roots import Root, RootError, parse_root, parse_roots
from indx_assets.wiring.settings import SAMPLE_CORPUS, Settings, record_roots, recorded_roots

if TYPE_CHECKING:
    from indx_assets.app.runner import BatchResult, PartitionSync


@dataclass(frozen=True)
class IngestSummary:
    """What an ingest did and what it left in the data directory (`indx ingest --json`)."""

    documents: int
    """Sources under the roots, ingested or not."""
    documents_by_status: dict[str, int]
    """Documents by their recorded status (`ok`, `failed`, `encrypted`, `too_large`, …)."""
    pages_by_status: dict[str, int]
    chunks: int
    chunks_by_chunker: dict[str, int]
    chunks_by_type: dict[str, int]
    vectors: int
    """Chunks written with a vector."""
    unembedded_chunks: int
    """Image chunks written without a vector."""
    problems: dict[str, str]
    """Each source (or root label, or unlisted folder) that did not come through whole, and why."""
    below_fidelity: dict[str, dict[str, Any]]
    """Documents whose chunks fall below the word-fidelity thresholds, with their records."""
    added: int
    removed: int
    kept: int
    """Sources not found this time that were kept (their root is missing or their folder unreadable)."""
    missing_roots: list[str]
    runs: int
    failed_runs: list[str]
    materializations: int
    elapsed_s: float
    """Wall seconds (for `indx ingest`, from the process's start: its imports count)."""
    home: str
    unlisted: dict[str, str] = field(default_factory=dict)
    """Folders that could not be listed (id prefix: reason); their documents are kept."""
    profile: dict[str, float] = field(default_factory=dict)
    """Seconds per stage (`pipeline.stage_clock`): startup, read, ocr, chunk, model_load, embed,
    write, orchestration (the rest), and `wall`."""

    @property
    def complete(self) -> bool:
        """Whether every file was ingested: no run failed, no root is missing, every folder was
        listed (`indx ingest` exits 1 otherwise)."""
        return not (self.failed_runs or self.missing_roots or self.unlisted)

    def to_json(self) -> dict[str, Any]:
        """The summary as plain JSON values (what `indx ingest --json` prints)."""
        return asdict(self)


def argument_root(arg: str) -> tuple[Root, bool]:
    """A given root, `LABEL=PATH` or `PATH`, with its path resolved, and whether it was
    labelled (`RootError` if there is nothing there). A path whose name holds `=` stays a
    path when it exists."""
    root = parse_root(arg)
    labelled = root.path != arg
    if labelled and Path(arg).exists() and not Path(root.path).expanduser().exists():
        labelled = False
    path = Path(root.path if labelled else arg).expanduser()
    if not path.exists():
        raise RootError(f"{path}: no such file or folder")
    resolved = path.resolve()
    return Root(root.label if labelled else resolved.name, str(resolved)), labelled


def ingest_roots_of(settings: Settings, args: Sequence[str]) -> list[str]:
    """Corpus roots (specs): those recorded by earlier ingests plus the given ones (the sample
    corpus when there are none), so every known source stays known. `RootError` when two
    would share a label or a recorded folder is given another label."""
    roots = parse_roots(recorded_roots(settings.home))
    for root, labelled in map(argument_root, args):
        same = next((r for r in roots if r.path == root.path), None)
        if same is None:
            roots.append(root)
        elif labelled and same.label != root.label:
            raise RootError(f"{root.path} is already the root labelled {same.label!r}; "
                            f"`indx forget {same.label}` before giving it another label")
    specs = [r.spec for r in roots] or [Root(SAMPLE_CORPUS.name, str(SAMPLE_CORPUS)).spec]
    parse_roots(specs)  # refuses two roots with one label, or one inside another
    return specs


def ingest(settings: Settings, paths: Sequence[str] = (), *, batch_size: int | None = None, force: bool = False,
           on_sync: "Callable[[Sequence[str], PartitionSync], None] | None" = None,
           on_batch: "Callable[[BatchResult], None] | None" = None,
           log_level: str = "CRITICAL", startup: float = 0.0) -> IngestSummary:
    """Ingest `paths` (`[LABEL=]PATH`, added to the recorded roots) into `settings`' data
    directory, re-doing only what is missing or changed (all of it with `force`).

    Raises `RootError` before anything is written when a path is not there or two roots would
    share a label. A file that cannot be read is not an error: it is ingested with its status
    and named in `problems`. `on_sync` is told the roots and the partitions found, `on_batch`
    each finished run (a progress bar's hooks); `startup` is time already gone before the call
    that the profile should count (a command's imports)."""
    import time

    from indx_assets.app.analytics import ingest_summary
    from indx_assets.app.runner import materialize_partitions, open_instance, sync_partitions
    from indx_assets.pipeline.embedders.registry import preload
    from indx_assets.pipeline.stage_clock import CLOCK
    from indx_assets.wiring.assets.ingest import BATCH_SIZE

    started = time.perf_counter()
    CLOCK.reset(startup)
    roots = ingest_roots_of(settings, paths)
    settings = replace(settings, corpus_roots=tuple(roots))
    # closed when done: a notebook that ingests again and again keeps no storage connections open
    with open_instance(settings) as instance:
        record_roots(settings.home, roots)
        sync = sync_partitions(instance, settings)
        # New sources will be embedded: the model loads while they are read and cut (a re-ingest
        # with nothing new loads it only if something turns out to need it).
        preloading = preload() if sync.added or force else None
        if on_sync:
            on_sync(roots, sync)
        # The summary names every failed source and why; Dagster's own log of a failed run
        # (a traceback per run) stays in the instance, for `dagster dev`.
        results = materialize_partitions(instance, settings, sync.current, batch_size=batch_size or BATCH_SIZE,
                                         force=force, log_level=log_level, on_batch=on_batch)
    if preloading is not None:
        preloading.join()  # done long since when anything was embedded; never left loading at exit
    failed = {s: why for r in results for s, why in r.failed.items()}
    summary = ingest_summary(settings.storage_uri, sync.current, failed)
    summary["problems"].update(_corpus_problems(sync))
    wall = startup + time.perf_counter() - started
    return IngestSummary(
        **summary,
        added=len(sync.added),
        removed=len(sync.removed),
        kept=len(sync.kept),
        missing_roots=sync.missing_roots,
        runs=len(results),
        failed_runs=[r.run_id for r in results if not r.success],
        materializations=sum(r.materialized for r in results),
        elapsed_s=round(wall, 2),
        home=str(settings.home),
        unlisted=dict(sync.unlisted),
        profile=CLOCK.profile(wall),
    )


def _corpus_problems(sync: "PartitionSync") -> dict[str, str]:
    """What the listing could not see, by where: missing roots (by label) and folders that
    could not be listed (by their id prefix), each with the documents it keeps."""
    problems = {}
    for root in map(parse_root, sync.missing_roots):
        kept = sum(1 for s in sync.kept if s == root.label or s.startswith(root.prefix))
        problems[root.label] = f"corpus root missing: {root.path}; its {kept} document(s) are kept (`indx forget {root.label}` removes them)"
    for prefix, reason in sync.unlisted.items():
        kept = sum(1 for s in sync.kept if s.startswith(prefix))
        problems[prefix] = f"{reason}; its {kept} document(s) are kept"
    return problems
