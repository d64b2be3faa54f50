"""The corpus sensor on a real instance: new, changed and vanished files; paging; odd names."""

from dataclasses import replace
from pathlib import Path

import dagster as dg

from indx_assets.app.daemon_tick import AutomationState, tick
from indx_assets.wiring.assets.removal import SourceStores
from indx_assets.wiring.assets.status import code_versions, corpus_status
from indx_assets.wiring.automation.sensor import Cursor, corpus_sensor, scan
from indx_assets.wiring.definitions import build_definitions, build_resources
from indx_assets.wiring.resources.source_index import MAX_KEY_LENGTH, SourceIndex, partition_key
from indx_assets.wiring.settings import Settings


def run_sensor(instance: dg.DagsterInstance, settings: Settings, cursor: str | None = None,
               page_size: int = 500) -> dg.SensorResult:
    sensor = corpus_sensor(settings, page_size=page_size)
    with dg.build_sensor_context(instance=instance, cursor=cursor, resources=build_resources(settings)) as context:
        result = sensor(context)
    for request in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
    return result


def test_the_sensor_adds_new_files_and_a_second_sweep_hashes_nothing(instance, settings) -> None:
    result = run_sensor(instance, settings)
    corpus = Path(settings.corpus_roots[0])
    files = {f"corpus/{p.relative_to(corpus).as_posix()}" for p in corpus.rglob("*") if p.is_file()}
    assert set(instance.get_dynamic_partitions("sources")) == files
    assert not result.run_requests, "the sensor registers partitions; automation decides runs"
    again = scan(instance, SourceStores.of(build_resources(settings)), Cursor.parse(result.cursor))
    assert again.hashed == 0 and again.changed == [] and again.removed == []


def test_a_changed_file_is_detected_by_its_hash_and_a_touched_one_is_not(instance, settings) -> None:
    state = AutomationState()
    tick(instance, settings, state)
    corpus = Path(settings.corpus_roots[0])
    touched = corpus / "articles" / "zurich-trams.md"
    touched.write_bytes(touched.read_bytes())  # new mtime, same bytes
    edited = corpus / "notes" / "tea-harvest.txt"
    edited.write_text("Different tea.\n", encoding="utf-8")
    found = scan(instance, SourceStores.of(build_resources(settings)), state.sensor)
    assert found.hashed == 2, "size/mtime moved for two files: both are hashed"
    assert found.changed == ["corpus/notes/tea-harvest.txt"], "only a different sha256 counts as a change"


def test_a_vanished_file_loses_its_partition_rows_and_outputs(instance, settings) -> None:
    state = AutomationState()
    tick(instance, settings, state)
    gone = "corpus/guides/chunking-primer.md"
    (Path(settings.corpus_roots[0]).parent / gone).unlink()  # ids are label/path; the label is the folder
    found = scan(instance, SourceStores.of(build_resources(settings)), state.sensor)
    assert found.removed == [gone]
    assert gone not in instance.get_dynamic_partitions("sources")
    resources = build_resources(settings)
    assert gone not in set(resources["lancedb"].table().to_arrow().column("source_id").to_pylist())  # type: ignore[attr-defined]
    assert not resources["storage"].path("chunk_map", gone).exists()  # type: ignore[attr-defined]
    assert SourceIndex(resources["corpus"].index).get([gone]) == {}  # type: ignore[attr-defined]


def test_a_file_that_vanished_and_came_back_is_ingested_again_by_automation(instance, settings, tmp_path: Path) -> None:
    state = AutomationState()
    tick(instance, settings, state)
    back = "corpus/notes/tea-harvest.txt"
    rows = sorted(r["id"] for r in _rows(settings) if r["source_id"] == back)
    (Path(settings.corpus_roots[0]).parent / back).rename(tmp_path / "away.txt")
    assert tick(instance, settings, state).sensor.removed == [back]
    (tmp_path / "away.txt").rename(Path(settings.corpus_roots[0]).parent / back)
    for _ in range(3):  # the sensor registers it again; automation asks for it as missing
        tick(instance, settings, state)
    assert sorted(r["id"] for r in _rows(settings) if r["source_id"] == back) == rows
    status = corpus_status(instance, code_versions(build_definitions(settings)), SourceIndex(build_resources(settings)["corpus"].index))  # type: ignore[attr-defined]
    assert all(s.fresh == status.partitions and not s.missing and not s.stale for s in status.assets.values())


def _rows(settings: Settings) -> list[dict]:
    return build_resources(settings)["lancedb"].table().to_arrow().select(["id", "source_id"]).to_pylist()  # type: ignore[attr-defined]


def test_a_missing_corpus_root_deletes_nothing(instance, settings, tmp_path: Path) -> None:
    run_sensor(instance, settings)
    before = set(instance.get_dynamic_partitions("sources"))
    Path(settings.corpus_roots[0]).rename(tmp_path / "unmounted")
    found = scan(instance, SourceStores.of(build_resources(settings)), Cursor())
    assert found.removed == []
    assert set(instance.get_dynamic_partitions("sources")) == before


def test_a_missing_root_keeps_its_sources_while_the_other_roots_are_swept(instance, settings, tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    (disk / "far").mkdir(parents=True)
    (disk / "far" / "c.txt").write_text("Harbour pilots board at the bar buoy.\n", encoding="utf-8")
    settings = replace(settings, corpus_roots=(*settings.corpus_roots, str(disk)))
    run_sensor(instance, settings)
    assert "disk/far/c.txt" in instance.get_dynamic_partitions("sources")
    disk.rename(tmp_path / "unmounted")
    gone = "corpus/guides/chunking-primer.md"
    (Path(settings.corpus_roots[0]).parent / gone).unlink()
    found = scan(instance, SourceStores.of(build_resources(settings)), Cursor())
    assert found.removed == [gone], "the present root is swept; the missing one's source is kept"
    assert "disk/far/c.txt" in instance.get_dynamic_partitions("sources")


def test_the_sensor_pages_through_files_and_partitions(instance, settings) -> None:
    cursor, seen, ticks = None, set(), 0
    while True:
        result = run_sensor(instance, settings, cursor, page_size=4)
        ticks += 1
        cursor = result.cursor
        seen |= {k for r in result.dynamic_partitions_requests for k in r.partition_keys}
        assert all(len(r.partition_keys) <= 4 for r in result.dynamic_partitions_requests)
        if Cursor.parse(cursor).sweeps:
            break
    files = sum(1 for p in Path(settings.corpus_roots[0]).rglob("*") if p.is_file())
    assert ticks == -(-files // 4)  # 4 files per tick
    assert len(seen) == files


def test_names_that_are_not_partition_keys_get_a_stable_mapped_key(instance, settings) -> None:
    corpus = Path(settings.corpus_roots[0])
    odd = "tab\there...and a bell\a.txt"
    deep = "/".join(["a-rather-long-folder-name"] * 10) + "/leaf.txt"
    (corpus / odd).write_text("A file whose name holds control characters.\n", encoding="utf-8")
    (corpus / deep).parent.mkdir(parents=True)
    (corpus / deep).write_text("A file far down a long path.\n", encoding="utf-8")
    assert len(deep) > MAX_KEY_LENGTH

    state = AutomationState()
    result = tick(instance, settings, state)
    assert all(r.success for r in result.runs)
    keys = set(instance.get_dynamic_partitions("sources"))
    for name in (odd, deep):
        key = partition_key(f"corpus/{name}")
        assert key != name and key == partition_key(f"corpus/{name}") and key in keys
        assert "\t" not in key and "..." not in key and len(key) <= MAX_KEY_LENGTH
        assert build_resources(settings)["corpus"].locate(key).read_bytes() == (corpus / name).read_bytes()  # type: ignore[attr-defined]
    texts = build_resources(settings)["lancedb"].table().to_arrow().column("text").to_pylist()  # type: ignore[attr-defined]
    assert any("control characters" in t for t in texts) and any("far down a long path" in t for t in texts)
    # the mapping survives losing the index: a walk finds the file
    Path(build_resources(settings)["corpus"].index).unlink()  # type: ignore[attr-defined]
    assert build_resources(settings)["corpus"].locate(partition_key(f"corpus/{odd}")).name == odd  # type: ignore[attr-defined]


def test_a_sweep_completes_when_files_and_partitions_end_on_different_ticks(instance, settings) -> None:
    # Partitions are registered a tick after their files are seen, so the two listings come
    # round out of phase; with eight files in pages of two they never end on the same tick.
    corpus = Path(settings.corpus_roots[0])
    (corpus / "extra.txt").write_text("One more file, so the corpus pages evenly.\n", encoding="utf-8")
    files = sum(1 for p in corpus.rglob("*") if p.is_file())
    assert files == 8
    cursor, ticks = None, 0
    while not (cursor and Cursor.parse(cursor).sweeps):
        cursor = run_sensor(instance, settings, cursor, page_size=2).cursor
        ticks += 1
        assert ticks <= 12, "the sweep never completes"
    assert len(instance.get_dynamic_partitions("sources")) == files
