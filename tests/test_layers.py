"""The layers (README "Architecture"): integrations > app > wiring > pipeline, every import down.

The contract is `[tool.importlinter]` in pyproject.toml; `lint-imports` (import-linter, a real
process over the real package) checks it, and a broken contract fails here with the
offending import chain in the message.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` over the package and pyproject.toml under `root` (that copy, not the installed one)."""
    return subprocess.run([str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root,
                          env={"PYTHONPATH": str(root), "PATH": str(LINT_IMPORTS.parent)}, capture_output=True,
                          text=True, timeout=300)


def test_every_import_points_down_and_the_pipeline_needs_no_dagster() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "4 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(("module", "line", "names"), [
    # a pipeline module reaching up into the app
    ("pipeline/media.py", "from indx_assets.app import search", ["indx_assets.pipeline.media -> indx_assets.app.search"]),
    # a pipeline module importing Dagster
    ("pipeline/chunkers/lines.py", "import dagster", ["indx_assets.pipeline.chunkers.lines -> dagster"]),
    # the app reaching up into a framework adapter (they sit above it, over the Python API)
    ("app/search.py", "from indx_assets.integrations import records",
     ["indx_assets.app.search -> indx_assets.integrations.records"]),
    # the resources reaching into the automation (the cycle the partition keys used to make)
    ("wiring/resources/corpus.py", "from indx_assets.wiring.automation import sensor",
     ["indx_assets.wiring.resources.corpus -> indx_assets.wiring.automation.sensor"]),
])
def test_an_import_against_the_layers_fails_the_contract_and_is_named(tmp_path: Path, module: str, line: str,
                                                                      names: list[str]) -> None:
    shutil.copytree(ROOT / "indx_assets", tmp_path / "indx_assets", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / "indx_assets" / module, "a") as f:
        f.write(f"\n{line}  # an import against the layers\n")
    done = lint_imports(tmp_path)
    assert done.returncode == 1, done.stdout[-3000:]
    assert "BROKEN" in done.stdout
    for name in names:
        assert name in done.stdout, done.stdout[-6000:]


def test_the_pipeline_cuts_a_document_with_dagster_not_installed(tmp_path: Path) -> None:
    """What `indx chunk` and the HTTP chunk endpoint rely on: reading, the chain and the chunk
    map with every `dagster*` import refused (a finder stands in for an uninstalled package)."""
    code = """
import importlib.abc, sys
class NoDagster(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0].startswith("dagster"):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, NoDagster())
from pathlib import Path
from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.read_and_chunk import encode_file, to_document
doc = to_document(encode_file(Path(sys.argv[1]), chain=load_chain(ChainConfig())))
assert not [m for m in sys.modules if m.startswith("dagster")]
print(len(doc.chunks))
"""
    sample = ROOT / "data" / "sample" / "guides" / "chunking-primer.md"
    done = subprocess.run([sys.executable, "-c", code, str(sample)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout) > 0


def test_the_old_addresses_still_load(tmp_path: Path) -> None:
    """`indx_assets.cli:main` (console scripts installed before the move), `indx_assets.definitions`
    (workspace files) and `indx_assets.event_log` (dagster.yaml files) keep working: real
    processes, a real Dagster code location loaded from the old module name."""
    env = {"PATH": str(Path(sys.executable).parent), "INDX_HOME": str(tmp_path / "indx"), "HOME": str(tmp_path)}
    script = "import sys; from indx_assets.cli import main; sys.argv = ['indx', '--help']; main()"
    cli = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0 and "ingest" in cli.stdout, cli.stderr[-3000:]
    dagster = Path(sys.executable).parent / "dagster"
    done = subprocess.run([str(dagster), "definitions", "validate", "-m", "indx_assets.definitions"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    event_log = subprocess.run(
        [sys.executable, "-c", "from indx_assets.event_log import PooledSqliteEventLogStorage as S; print(S.__name__)"],
        env=env, capture_output=True, text=True, timeout=300)
    assert event_log.stdout.strip() == "PooledSqliteEventLogStorage", event_log.stderr[-3000:]
