"""`indx ingest --profile` / `--json`'s `profile`: where an ingest's time went, stage by stage,
through real `indx` processes on the bundled sample corpus (which has a scanned page to OCR)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

INDX = str(Path(sys.executable).parent / "indx")
STAGES = ("startup", "read", "ocr", "chunk", "model_load", "embed", "write", "orchestration")


def indx(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "INDX_HOME": str(home)}
    env.pop("INDX_CORPUS", None)
    return subprocess.run([INDX, *args], env=env, capture_output=True, text=True, timeout=600)


def test_ingest_json_says_where_the_time_went_and_profile_prints_it(tmp_path: Path) -> None:
    done = indx(tmp_path / "home", "ingest", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    profile = summary["profile"]
    assert set(STAGES) <= set(profile), profile
    assert all(profile[s] >= 0 for s in STAGES), profile
    # Whole milliseconds add up exactly; their float sum (7.358 + 1e-15) need not.
    stage_ms = sum(round(profile[s] * 1000) for s in STAGES)
    assert stage_ms <= round(profile["wall"] * 1000), profile
    assert profile["wall"] <= summary["elapsed_s"] + 0.01, profile
    # Each stage that did work in this ingest was timed: a profile of zeros would tell nothing.
    for stage in ("startup", "read", "chunk", "embed", "write"):
        assert profile[stage] > 0, (stage, profile)
    # A first ingest loads the model while it reads: that load overlaps the stages, counted apart;
    # `model_load` is only what the embedding still waited for.
    assert profile["model_load_background"] > 0, profile
    assert profile["model_load"] < profile["model_load_background"], profile
    if importlib.util.find_spec("tesserocr") is not None:  # the sample PDF's scanned page is OCR'd, counted apart
        assert profile["ocr"] > 0, profile

    again = indx(tmp_path / "home", "ingest", "--profile")
    assert again.returncode == 0, again.stderr[-3000:]
    line = next(ln for ln in again.stdout.splitlines() if ln.startswith("time:"))
    for stage in STAGES:
        assert f"{stage} " in line, line
