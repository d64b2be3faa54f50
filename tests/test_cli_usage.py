"""Everyday use of `indx`, run as a user runs it (a subprocess): a mistake is one line and a
non-zero exit, never a traceback; the data directory is found as git finds its repository;
search hits show the sentences that answer; the small things (`--version`, long options, typed
help)."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from indx_assets.wiring.settings import find_home

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample"
INDX = str(Path(sys.executable).parent / "indx")
QUESTION = "when may deep-draught ships cross the bar"  # the Quick start's


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`indx ARGS` in `cwd`, with INDX_HOME unset unless given, and the rest of this environment."""
    base = {k: v for k, v in os.environ.items() if k not in ("INDX_HOME", "INDX_CHAIN", "INDX_DEBUG", "INDX_SERVER")}
    return subprocess.run([INDX, *args], cwd=cwd, env={**base, **env}, capture_output=True, text=True, timeout=600,
                          check=False)


def one_line(done: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The one line a refused command printed on stderr (asserting its exit code and that there
    is no traceback)."""
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], done.stderr[-3000:])
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-3000:]
    return lines[0]


@pytest.fixture
def nowhere(tmp_path: Path) -> Path:
    """A folder with no data directory in it or above it."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    assert find_home(folder) is None, "a .indx above the temporary folder: these tests need a clean tree"
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where `indx ingest` ran (with two of the sample corpus's folders): it holds `.indx`."""
    folder = tmp_path_factory.mktemp("project")
    for name in ("handbooks", "notes"):
        shutil.copytree(SAMPLE / name, folder / "docs" / name)
    done = run(["ingest", "docs/handbooks", "docs/notes"], folder)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (folder / ".indx" / "lancedb").is_dir()
    return folder


# 1. A mistake is one line, a non-zero exit, and no traceback.

READ_ONLY = [["search", "ships"], ["status"], ["stats"], ["verify"], ["restore"], ["backfill"], ["forget", "notes"]]


@pytest.mark.parametrize("args", READ_ONLY, ids=lambda a: a[0])
def test_a_command_that_only_reads_says_where_it_looked_and_creates_nothing(args: list[str], nowhere: Path) -> None:
    line = one_line(run(args, nowhere))
    assert line.startswith(f"indx {args[0]}: no data directory: no .indx in {nowhere} or any folder above it")
    assert "run `indx ingest`" in line and "INDX_HOME" in line
    assert list(nowhere.iterdir()) == []
    missing = nowhere / "gone"
    line = one_line(run(args, nowhere, INDX_HOME=str(missing)))
    assert f"no data directory at {missing} (INDX_HOME)" in line and not missing.exists()


BROKEN_JSON, MISSING_CHUNKER = '{"order": [', '{"order": ["no-such-chunker"]}'
CHAIN_MISTAKES = [
    *[(command, BROKEN_JSON) for command in (["ingest"], ["status"], ["backfill"], ["search", "ships"], ["stats"],
                                             ["chunk", str(SAMPLE / "notes" / "tea-harvest.txt")],
                                             ["verify", str(SAMPLE / "notes" / "tea-harvest.txt")])],
    # a chain naming what is not installed is found where a chain is built (search and stats build none)
    *[(command, MISSING_CHUNKER) for command in (["ingest"], ["status"], ["backfill"],
                                                 ["chunk", str(SAMPLE / "notes" / "tea-harvest.txt")])],
]


@pytest.mark.parametrize(("command", "chain"), CHAIN_MISTAKES, ids=lambda a: a[0] if isinstance(a, list) else a[:12])
def test_a_malformed_chain_is_one_line_in_every_command(command: list[str], chain: str, tmp_path: Path) -> None:
    (tmp_path / ".indx").mkdir()  # a data directory, so that each command gets as far as the chain
    line = one_line(run(command, tmp_path, INDX_CHAIN=chain))
    assert line.startswith(f"indx {command[0]}: the chunker chain cannot be built: ") and "fix INDX_CHAIN" in line
    assert ("no-such-chunker" if chain == MISSING_CHUNKER else "neither a JSON object") in line


@pytest.mark.parametrize(("args", "said"), [
    (["search", ""], "the query is empty"),
    (["search", "   "], "the query is empty"),
    (["search", "ships", "--mode", "semantic"], "Invalid value for '--mode'"),
    (["search", "ships", "--top-k", "0"], "Invalid value for '--top-k' / '-k'"),
    (["search", "ships", "--page", "two"], "Invalid value for '--page'"),
    (["search"], "the query is empty"),  # QUERY may be left out for --image: check_search says it
    (["chunk", "no-such-file.md"], "Invalid value for 'file'"),
    (["show", "no-such-file.pdf"], "Invalid value for 'file'"),
    (["verify", "no-such-folder"], "Invalid value for 'paths': path 'no-such-folder' does not exist"),
    (["ingest", "no-such-folder"], "no such file or folder"),
    (["ingest", "--batch-size", "0"], "Invalid value for '--batch-size'"),
    (["backfill", "--assets", "chunks"], "unknown asset(s) chunks"),
    (["serch", "ships"], "No such command 'serch'"),
    (["search", "ships", "--bogus"], "No such option: --bogus"),
])
def test_a_mistake_on_the_command_line_is_one_line_with_exit_2(args: list[str], said: str, nowhere: Path) -> None:
    line = one_line(run(args, nowhere))
    assert said in line, line
    assert line.startswith("indx"), line


def test_debug_shows_the_traceback_of_a_mistake(nowhere: Path) -> None:
    for done in (run(["--debug", "status"], nowhere), run(["status"], nowhere, INDX_DEBUG="1")):
        assert done.returncode != 0 and "Traceback" in done.stderr and "NoDataDirectory" in done.stderr
    assert one_line(run(["status"], nowhere, INDX_DEBUG="0"))


def test_a_blank_query_is_refused_before_the_model_loads(project: Path) -> None:
    """In a data directory with an index, `indx search ""` used to load the model (15 s) and end
    in LanceDB's traceback; it is refused before anything is imported for the search."""
    code = "import sys; sys.argv = ['indx', 'search', '']; from indx_assets.app.cli import main; main()"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=project, capture_output=True,
                          text=True, timeout=300, check=False,
                          env={k: v for k, v in os.environ.items() if k != "INDX_HOME"})
    assert done.returncode == 2
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
    assert not imported & {"torch", "sentence_transformers", "lancedb", "dagster"}, imported & {"torch", "lancedb"}
    said = [line for line in done.stderr.splitlines() if not line.startswith("import time")]
    assert said == ['indx search: the query is empty: say what to look for, e.g. indx search "fresnel lens"']


# 2. The data directory is found like git finds its repository.

def test_the_nearest_data_directory_above_is_the_one_used(project: Path) -> None:
    below = project / "docs" / "handbooks" / "deeper"
    below.mkdir(exist_ok=True)
    status = run(["status", "--json"], below)
    assert status.returncode == 0, status.stderr[-3000:]
    assert json.loads(status.stdout)["partitions"] == 2
    hits = run(["search", "ships", "--json", "-k", "1"], below)
    assert hits.returncode == 0 and json.loads(hits.stdout)[0]["source_id"].startswith("handbooks/")
    assert not (below / ".indx").exists() and not (project / "docs" / ".indx").exists()
    # INDX_HOME wins over the folder's own
    other = run(["status"], below, INDX_HOME=str(project / "empty-home"))
    assert other.returncode == 2 and not (project / "empty-home").exists()


# 3. Search output people can read.

def test_a_hit_shows_the_sentence_that_answers_with_the_terms_marked(project: Path) -> None:
    done = run(["search", QUESTION, "-k", "2"], project / "docs")
    assert done.returncode == 0, done.stderr[-3000:]
    first = done.stdout.split("\n2. ")[0]
    # the answer sits 480 characters into its chunk: the first 160 characters never showed it
    header, excerpt = first.splitlines()[:2]
    assert re.fullmatch(r"1\. handbooks/harbour-pilot\.pdf  page 1  page:1:char:\d+-\d+  rrf 0\.03\d+", header), header
    assert ("**Deep**-**draught** **ships** **cross** the **bar** only within two hours of high water." in excerpt), excerpt


@pytest.mark.parametrize(("mode", "scale"), [("hybrid", "rrf"), ("vector", "cosine"), ("fts", "bm25")])
def test_each_mode_labels_its_score_and_filters_as_the_server_does(project: Path, mode: str, scale: str) -> None:
    shown = run(["search", "tug bollard pull", "--mode", mode, "--top-k", "3", "--type", "table", "--page", "1",
                 "--source", "handbooks/"], project)
    assert shown.returncode == 0, shown.stderr[-3000:]
    headers = [line for line in shown.stdout.splitlines() if re.match(r"\d+\. ", line)]
    assert headers and all(re.fullmatch(rf"\d\. handbooks/\S+  page 1  \S+  {scale} -?[\d.]+  \(table\)", h)
                           for h in headers), shown.stdout
    assert "**Tug** | **Bollard** **pull** (t)" in shown.stdout, shown.stdout


def test_json_names_a_chunks_text_content(project: Path) -> None:
    hits = json.loads(run(["search", "tug bollard pull", "-k", "3", "--json"], project).stdout)
    assert hits and all("text" not in h and h["content"] and h["score_scale"] == "rrf" and h["excerpt"] for h in hits)
    assert {"id", "source_id", "locator", "chunk_type", "page", "bbox", "content", "score", "sentence"} <= set(hits[0])


# 4. The small things.

def test_version_long_options_and_typed_help(nowhere: Path) -> None:
    from importlib.metadata import version

    done = run(["--version"], nowhere)
    assert done.returncode == 0 and done.stdout.strip() == f"indx {version('indx-assets')}"
    bare = run([], nowhere)  # `indx` alone: its help, with every command
    assert "Usage: indx [OPTIONS] COMMAND" in bare.stderr and "  ui " in bare.stderr and "Traceback" not in bare.stderr
    usage = run(["search", "--help"], nowhere).stdout
    assert "-k, --top-k <int range>" in usage and "--mode <hybrid|vector|fts>" in usage
    for command in ("--help", "search --help", "ingest --help", "show --help", "ui --help", "forget --help"):
        shown = run(command.split(), nowhere).stdout
        assert "<bool>" not in shown and "--help" in shown, command


def test_every_option_has_a_long_form() -> None:
    import typer.main

    from indx_assets.app.cli import COMMAND_MODULES, app

    for name in COMMAND_MODULES:
        __import__(f"indx_assets.app.cli.{name}")
    group = typer.main.get_command(app)
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            if param.param_type_name == "option":
                assert any(o.startswith("--") for o in param.opts), (name, param.opts)
