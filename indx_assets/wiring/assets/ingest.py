"""The asset graph from raw bytes to the LanceDB table, as one batched multi-asset.

source_documents → page_outputs → chunk_map → chunk_embeddings → chunks_table, one dynamic
partition per source. The five assets share one op so a run can carry many documents through
every stage (orchestration costs seconds per run, a document milliseconds), and each stage
reports every partition's materialization itself (see `provenance`), so per-partition data
versions hold in batched runs. A stage skips partitions that are already fresh — same code,
same upstream data version — so a batch re-run costs only what changed; `force` redoes all.

Reading and cutting go document by document (`_Batch.read_then_cut`): a document's pages are
cut right after they are read, with the reader's parsed form of it (a PDF's page runs, a
deck, a workbook), which is let go before the next document is read. So each page is loaded
once, and a batch holds one parsed document at a time, never a hundred.
"""

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import dagster as dg

from indx_assets.pipeline.freed_memory import return_freed_memory
from indx_assets.pipeline.stage_clock import CLOCK
from indx_assets.wiring.assets import stages
from indx_assets.wiring.assets.freshness import judge
from indx_assets.wiring.assets.partitions import SOURCES
from indx_assets.wiring.assets.provenance import PartitionRecord, latest_records, log_batch, materialization
from indx_assets.wiring.dagster_internals import BACKFILL_ID_TAG
from indx_assets.wiring.resources import (
    ChainResource,
    CorpusResource,
    EmbedderResource,
    LanceDBResource,
    ReadersResource,
    StorageResource,
)
from indx_assets.wiring.resources.source_index import readable_name
from indx_assets.wiring.resources.storage import sha256_file

T = TypeVar("T")

#: Documents per run when a backfill or the CLI batches partitions.
BATCH_SIZE = 100
SOURCE_CODE_VERSION = "source-v1"
READERS_CODE_VERSION = "readers-v1"
TABLE_CODE_VERSION = "lancedb-chunks-v1"
#: The run failure's metadata entry naming each failed source and why (`runner.BatchResult.failed`).
FAILED_SOURCES = "failed_sources"
#: The op's concurrency pool: how many ingest steps run at once (deploy/dagster.yaml gives it one,
#: the embedder has the cores; the local cluster one per worker). Its LanceDB commits go one at a
#: time whatever the slots (`LanceDBResource.writing`).
INGEST_POOL = "embedder"

SOURCE_DOCUMENTS = dg.AssetKey(stages.SOURCE_DOCUMENTS)
PAGE_OUTPUTS = dg.AssetKey(stages.PAGE_OUTPUTS)
CHUNK_MAP = dg.AssetKey(stages.CHUNK_MAP)
CHUNK_EMBEDDINGS = dg.AssetKey(stages.CHUNK_EMBEDDINGS)
CHUNKS_TABLE = dg.AssetKey(stages.CHUNKS_TABLE)
ASSET_KEYS = (SOURCE_DOCUMENTS, PAGE_OUTPUTS, CHUNK_MAP, CHUNK_EMBEDDINGS, CHUNKS_TABLE)
PARENT = {PAGE_OUTPUTS: SOURCE_DOCUMENTS, CHUNK_MAP: PAGE_OUTPUTS, CHUNK_EMBEDDINGS: CHUNK_MAP, CHUNKS_TABLE: CHUNK_EMBEDDINGS}


class IngestConfig(dg.Config):
    force: bool = False
    """Redo every selected stage for every partition, fresh or not."""


class _Batch:
    """Bookkeeping of one run: which partitions each stage materialized or failed."""

    def __init__(self, context: dg.AssetExecutionContext, code_versions: dict[dg.AssetKey, str], force: bool):
        self.context = context
        self.code_versions = code_versions
        self.force = force
        self.failed: dict[str, str] = {}
        #: Partitions whose chunk map `read_then_cut` made in this run.
        self.cut_here: set[str] = set()

    def records(self, key: dg.AssetKey, partitions: Sequence[str]) -> dict[str, PartitionRecord]:
        return latest_records(self.context.instance, key, partitions)

    def todo(self, key: dg.AssetKey, partitions: Sequence[str]) -> tuple[list[str], dict[str, PartitionRecord]]:
        """Partitions whose `key` is missing or stale, and the parent records to cite."""
        parent = PARENT[key]
        live = [p for p in partitions if p not in self.failed]
        parents = self.records(parent, live)
        own = self.records(key, live)
        todo = [
            p for p in live
            if p in parents and (self.force or not judge(own.get(p), self.code_versions[key], parent, parents[p]).fresh)
        ]
        skipped = len(live) - len(todo)
        if skipped:
            self.context.log.info(f"{key.to_user_string()}: {skipped} partition(s) already fresh")
        return todo, parents

    def fail(self, key: dg.AssetKey, partitions: Sequence[str], exc: BaseException) -> None:
        """Log a stage's failure and record it for each partition it cost: with its traceback
        when it is a defect, as one line when the file itself could not be read (permission,
        gone since it was listed): that is the file's problem, not the code's."""
        where = f"{key.to_user_string()} failed for {', '.join(map(repr, partitions[:5]))}"
        if isinstance(exc, OSError):
            self.context.log.warning(f"{where}: {type(exc).__name__}: {exc}")
        else:
            self.context.log.exception(where)
        self.failed.update({p: f"{key.to_user_string()}: {type(exc).__name__}: {exc}" for p in partitions})

    def per_partition(
        self, key: dg.AssetKey, partitions: Sequence[str], work: Callable[[str], stages.StageOutput]
    ) -> list[dg.DagsterEvent]:
        """Run a stage partition by partition; one partition's failure is logged and recorded,
        never fatal to the batch. The stage's materializations are logged together when it
        ends (one event-log write), so an interrupted stage is redone, not half-recorded."""
        todo, parents = self.todo(key, partitions)
        events = []
        for partition in todo:
            try:
                out = work(partition)
            except Exception as exc:  # a bad document must not take its batch down
                self.fail(key, [partition], exc)
                continue
            events.append(self.event(key, partition, out, parents))
        return log_batch(self.context, events)

    def read_then_cut(
        self,
        partitions: Sequence[str],
        read: Callable[[str], tuple[stages.StageOutput, object]],
        cut: Callable[[str, object], stages.StageOutput] | None,
    ) -> Iterator[dg.DagsterEvent]:
        """`page_outputs` partition by partition, each document cut (`cut`, when `chunk_map` is
        selected) right after it is read, with the reader's parsed form, if its chunk map needs
        doing; failures as in `per_partition`. Each stage's materializations are logged as one
        batch, `page_outputs`' first, so every chunk map cites its pages' logged event.
        Partitions whose pages were fresh are left for `chunk_map`'s own pass; so are the ones
        cut here, which that pass then finds fresh (or, forced, must not cut again: `cut_here`).
        """
        todo, parents = self.todo(PAGE_OUTPUTS, partitions)
        own_maps = self.records(CHUNK_MAP, todo) if cut is not None else {}
        read_events, cuts = [], {}
        for partition in todo:
            try:
                out, parsed = read(partition)
            except Exception as exc:  # a bad document must not take its batch down
                self.fail(PAGE_OUTPUTS, [partition], exc)
                continue
            read_events.append(self.event(PAGE_OUTPUTS, partition, out, parents))
            pages = PartitionRecord.unlogged(out.data_version)
            stale = self.force or not judge(own_maps.get(partition), self.code_versions[CHUNK_MAP], PAGE_OUTPUTS, pages).fresh
            if cut is not None and stale:
                try:
                    cuts[partition] = cut(partition, parsed)
                except Exception as exc:
                    self.fail(CHUNK_MAP, [partition], exc)
            del parsed  # let go before the next document is read
        yield from log_batch(self.context, read_events)
        self.cut_here.update(cuts)
        if cuts:
            logged = self.records(PAGE_OUTPUTS, list(cuts))
            yield from log_batch(self.context, [self.event(CHUNK_MAP, pk, out, logged) for pk, out in cuts.items()])

    def batched(
        self,
        key: dg.AssetKey,
        partitions: Sequence[str],
        work: Callable[[list[str], dict[str, PartitionRecord]], dict[str, stages.StageOutput]],
    ) -> list[dg.DagsterEvent]:
        """Run a stage over all its partitions at once (one embedding pass, one table commit);
        its failure is every member's."""
        todo, parents = self.todo(key, partitions)
        if not todo:
            return []
        try:
            outputs = work(todo, parents)
        except Exception as exc:
            self.fail(key, todo, exc)
            return []
        return log_batch(self.context, [self.event(key, partition, out, parents) for partition, out in outputs.items()])

    def event(self, key: dg.AssetKey, partition: str, out: stages.StageOutput,
              parents: dict[str, PartitionRecord] | None = None) -> dg.AssetMaterialization:
        parent = PARENT.get(key)
        return materialization(
            key, partition, data_version=out.data_version, code_version=self.code_versions[key],
            parent=parent, parent_record=(parents or {}).get(partition), metadata=out.metadata,
        )


def timed(stage: str, work: Callable[..., T], trimmed: bool = False) -> Callable[..., T]:
    """`work`, its time counted as `stage`'s in the process's stage clock (`indx ingest --profile`);
    `trimmed`: then the memory it freed is handed back to the system (`return_freed_memory`), for
    a stage run once a batch (embedding, writing), so the next one does not peak on top of it."""
    def run(*args: Any) -> T:
        with CLOCK.stage(stage):
            try:
                return work(*args)
            finally:
                if trimmed:
                    return_freed_memory()
    return run


def _specs(code_versions: dict[dg.AssetKey, str],
           automation: dict[dg.AssetKey, dg.AutomationCondition] | None = None) -> list[dg.AssetSpec]:
    described = {
        SOURCE_DOCUMENTS: ("Raw bytes of each source, its detected media type and sha256 (the data version).", ["parquet"]),
        PAGE_OUTPUTS: ("What the reading ladder made of each page: text, status (ok/empty/failed/unreadable), reader.", ["parquet"]),
        CHUNK_MAP: ("The chunker chain's cut of every page into ordered pieces. Code version = chain fingerprint.", ["parquet"]),
        CHUNK_EMBEDDINGS: ("One vector per chunk from the embedder INDX_EMBEDDER names. Code version = its identity.", ["parquet", "pytorch"]),
        CHUNKS_TABLE: ("The LanceDB `chunks` table, upserted per source in one commit, plus its Parquet copy.", ["lancedb", "parquet"]),
    }
    return [
        dg.AssetSpec(
            key,
            deps=[PARENT[key]] if key in PARENT else [],
            description=described[key][0],
            kinds=set(described[key][1]),
            group_name="ingestion",
            code_version=code_versions[key],
            partitions_def=SOURCES,
            skippable=True,
            automation_condition=(automation or {}).get(key),
        )
        for key in ASSET_KEYS
    ]


def build_ingest_assets(
    chain_fingerprint: str, embedder_version: str, automation: dict[dg.AssetKey, dg.AutomationCondition] | None = None,
    readers_fingerprint: str = READERS_CODE_VERSION,
) -> dg.AssetsDefinition:
    """The five ingestion assets, with code versions fixed when definitions load (and, when
    given, their automation conditions: see `automation.conditions`). `readers_fingerprint`
    is the reading ladder's (`readers.ladder.ladder_fingerprint`)."""
    code_versions = {
        SOURCE_DOCUMENTS: SOURCE_CODE_VERSION,
        PAGE_OUTPUTS: readers_fingerprint,
        CHUNK_MAP: chain_fingerprint,
        CHUNK_EMBEDDINGS: embedder_version,
        CHUNKS_TABLE: TABLE_CODE_VERSION,
    }

    @dg.multi_asset(
        name="ingest_documents",
        specs=_specs(code_versions, automation),
        partitions_def=SOURCES,
        can_subset=True,
        backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=BATCH_SIZE),
        pool=INGEST_POOL,
    )
    def ingest_documents(
        context: dg.AssetExecutionContext,
        config: IngestConfig,
        corpus: CorpusResource,
        storage: StorageResource,
        chain: ChainResource,
        embedder: EmbedderResource,
        lancedb: LanceDBResource,
        readers: ReadersResource,
    ) -> Iterator[Any]:
        selected = context.selected_asset_keys
        partitions = list(context.partition_keys)
        # A Dagster backfill asks for every partition it selected to be materialized: skipping
        # the fresh ones would leave them without a materialization, and the backfill failed.
        force = config.force or BACKFILL_ID_TAG in context.run.tags
        batch = _Batch(context, code_versions, force)

        if CHUNK_MAP in selected and chain.chain.fingerprint != chain_fingerprint:
            raise dg.Failure(
                f"the installed chunker chain ({chain.chain.fingerprint}) differs from the one these definitions "
                f"declared ({chain_fingerprint}); reload the definitions before re-chunking"
            )
        in_use = embedder.loaded
        if CHUNK_EMBEDDINGS in selected and in_use.identity.code_version != embedder_version:
            raise dg.Failure(
                f"the embedder in use ({in_use.identity.code_version}) differs from the one these definitions "
                f"declared ({embedder_version}); reload the definitions before embedding"
            )

        if SOURCE_DOCUMENTS in selected:
            own = batch.records(SOURCE_DOCUMENTS, partitions)
            sources = []
            for pk in partitions:
                try:
                    path = corpus.locate(pk)
                    refused = corpus.refusal(path)  # a link out of its root, a file over the size bound
                    # Hashed only to tell whether a stored copy is still fresh: a source with none is
                    # copied (and hashed while copied, `store_source`) without reading it twice.
                    known = pk in own and not force
                    version = timed("read", sha256_file)(path) if known and not refused else None  # in steps, never whole
                except OSError as exc:
                    batch.fail(SOURCE_DOCUMENTS, [pk], exc)
                    continue
                if refused:
                    out = stages.store_refusal(pk, readable_name(path.name), path.stat().st_size, *refused, storage)
                    sources.append(batch.event(SOURCE_DOCUMENTS, pk, out))
                    continue
                if known and judge(own[pk], SOURCE_CODE_VERSION, seen_data_version=version).fresh:
                    continue
                try:
                    out = timed("read", stages.store_source)(pk, path, storage)  # its copy counts as writing
                except Exception as exc:
                    batch.fail(SOURCE_DOCUMENTS, [pk], exc)
                    continue
                sources.append(batch.event(SOURCE_DOCUMENTS, pk, out))
            yield from log_batch(context, sources)

        # Each stage's events are logged (and so stored) before the next stage asks for them.
        if PAGE_OUTPUTS in selected:
            yield from batch.read_then_cut(
                partitions,
                timed("read", lambda pk: stages.read_pages(pk, storage, readers.config)),
                timed("chunk", lambda pk, parsed: stages.cut_chunks(pk, storage, chain.chain, parsed))
                if CHUNK_MAP in selected else None,
            )
        if CHUNK_MAP in selected:  # the documents whose pages were fresh: cut from their stored pages
            rest = [pk for pk in partitions if pk not in batch.cut_here]
            yield from batch.per_partition(CHUNK_MAP, rest, timed("chunk", lambda pk: stages.cut_chunks(pk, storage, chain.chain)))
        if CHUNK_EMBEDDINGS in selected:
            yield from batch.batched(
                CHUNK_EMBEDDINGS,
                partitions,
                timed("embed", lambda todo, parents: stages.embed_chunks(
                    todo, storage, in_use, {pk: parents[pk].data_version or "" for pk in todo},
                    in_use.identity.code_version, readers.config
                ), trimmed=True),
            )
        if CHUNKS_TABLE in selected:
            yield from batch.batched(
                CHUNKS_TABLE,
                partitions,
                timed("write", lambda todo, parents: stages.write_rows(
                    todo, storage, lancedb, {pk: [parents[pk].data_version or "", TABLE_CODE_VERSION] for pk in todo}
                ), trimmed=True),
            )

        if batch.failed:
            listed = "; ".join(f"{pk}: {why}" for pk, why in sorted(batch.failed.items()))
            raise dg.Failure(f"{len(batch.failed)} of {len(partitions)} source(s) failed: {listed}",
                             metadata={FAILED_SOURCES: dg.MetadataValue.json(batch.failed)})

    return ingest_documents
