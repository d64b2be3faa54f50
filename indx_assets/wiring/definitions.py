"""The Dagster definitions: `dagster dev` (with workspace.yaml) and `indx` load these.

The chunker chain is discovered here, when definitions load, and its fingerprint becomes
`chunk_map`'s code version: installing, upgrading, editing or reconfiguring a chunker marks
every chunk map stale and nothing upstream. Likewise the reading ladder's fingerprint
(`readers.ladder`) becomes `page_outputs`' code version, and the identity of the embedder
`INDX_EMBEDDER` names (`pipeline.embedders.registry`) `chunk_embeddings`'.
"""

import dagster as dg

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.embedders.registry import load_embedder
from indx_assets.pipeline.readers.ladder import ladder_fingerprint
from indx_assets.wiring.assets.ingest import ASSET_KEYS, build_ingest_assets
from indx_assets.wiring.assets.maintenance import chunks_table_maintenance, maintenance_job, maintenance_schedule
from indx_assets.wiring.automation.conditions import automation_sensor, ingest_condition
from indx_assets.wiring.automation.sensor import corpus_sensor
from indx_assets.wiring.executors import build_executor
from indx_assets.wiring.resources import (
    ChainResource,
    CorpusResource,
    EmbedderResource,
    LanceDBResource,
    ReadersResource,
    StorageResource,
)
from indx_assets.wiring.resources.source_index import INDEX_FILE
from indx_assets.wiring.settings import Settings


def build_resources(settings: Settings) -> dict[str, dg.ConfigurableResource]:
    return {
        "corpus": CorpusResource(roots=list(settings.corpus_roots), index=str(settings.home / INDEX_FILE),
                                 follow_symlinks=settings.bounds.follow_symlinks, max_file_mb=settings.bounds.max_file_mb),
        "storage": StorageResource(root=settings.storage_uri),
        "chain": ChainResource(config=settings.chain_config),
        "embedder": EmbedderResource(),
        "lancedb": LanceDBResource(uri=settings.lancedb_uri),
        "readers": ReadersResource(pdf_passwords=list(settings.pdf_passwords), max_ocr_pages=settings.bounds.max_ocr_pages),
    }


def build_definitions(settings: Settings) -> dg.Definitions:
    chain = load_chain(ChainConfig.parse(settings.chain_config))
    index = str(settings.home / INDEX_FILE)
    automation = {key: ingest_condition(key, index) for key in ASSET_KEYS}
    resources = build_resources(settings)
    readers = ladder_fingerprint(resources["readers"].config)  # type: ignore[attr-defined]
    ingest = build_ingest_assets(chain.fingerprint, load_embedder().identity.code_version, automation, readers)
    return dg.Definitions(
        assets=[ingest, chunks_table_maintenance],
        jobs=[maintenance_job],
        schedules=[maintenance_schedule],
        sensors=[corpus_sensor(settings, minimum_interval_seconds=settings.sensor_interval_s),
                 automation_sensor(minimum_interval_seconds=settings.sensor_interval_s)],
        resources=resources,
        executor=build_executor(settings.executor),
    )


defs = build_definitions(Settings.from_env())
