"""The `indx-interfaces` distribution's contract: standard library only, the port that
indx-assets uses, and an embedder port the project's embedder satisfies."""

import ast
import json
import numbers
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import indx_interfaces

ROOT = Path(__file__).resolve().parents[1]
INTERFACES = ROOT / "interfaces"
PACKAGE = INTERFACES / "indx_interfaces"


def test_indx_interfaces_declares_no_dependency() -> None:
    project = tomllib.loads((INTERFACES / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "indx-interfaces"
    assert project.get("dependencies", []) == []
    assert not project.get("optional-dependencies")


def test_indx_interfaces_imports_only_the_standard_library() -> None:
    """Every import statement in the package, in functions too, names a standard-library
    module or the package itself."""
    foreign = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            top = {name.partition(".")[0] for name in names}
            foreign += [f"{path.name}:{node.lineno} {name}" for name in top
                        if name not in sys.stdlib_module_names and name != "indx_interfaces"]
    assert foreign == []


def test_importing_indx_interfaces_loads_no_module_outside_the_standard_library() -> None:
    # In a fresh interpreter (-I: no user site, no PYTHON* variables), from the source tree
    # (the venv holds an installed copy): what importing it loads, dynamic imports included,
    # which the statement scan above cannot see.
    probe = (
        f"import json, sys; sys.path.insert(0, {str(INTERFACES)!r}); before = set(sys.modules); "
        "import indx_interfaces, indx_interfaces.chunker, indx_interfaces.embedder; "
        "loaded = {m.partition('.')[0] for m in set(sys.modules) - before}; "
        "print(json.dumps([indx_interfaces.__file__, sorted(loaded - set(sys.stdlib_module_names))]))"
    )
    result = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    origin, foreign = json.loads(result.stdout)
    assert Path(origin).is_relative_to(PACKAGE)
    assert foreign == ["indx_interfaces"]


def test_the_project_uses_the_very_types_of_indx_interfaces() -> None:
    # One class, not a twin: a piece built from either import passes the other's isinstance.
    import indx_assets
    import indx_assets.pipeline.chunker_port as port

    for name in ("PageOutput", "PageChunks", "ChunkPiece", "Line", "Chunker", "ChunkerProvider", "validate_bbox"):
        assert getattr(port, name) is getattr(indx_interfaces, name)
        assert getattr(indx_assets, name) is getattr(indx_interfaces, name)


def test_the_project_embedder_satisfies_the_embedder_port() -> None:
    from indx_assets.pipeline.embedder import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    assert isinstance(embedder, indx_interfaces.Embedder)
    vectors = embedder.embed_texts(["Pilots board off the fairway buoy.", "The bar is crossed at high water."])
    assert len(vectors) == 2
    assert all(len(v) == embedder.dimension for v in vectors)
    assert all(isinstance(x, numbers.Real) for x in vectors[0])  # numpy float32 counts as a real number
    assert len(embedder.embed_texts([])) == 0
    assert "text" in embedder.modalities and embedder.model_version


def test_a_type_checker_accepts_the_port_and_the_project_embedder(tmp_path: Path) -> None:
    """`mypy --strict` finds the package typed and whole, and counts the project's embedder
    (vectors as a numpy array) as an `Embedder`, while refusing one that returns one flat
    list of floats: the check can tell them apart."""
    snippet = tmp_path / "uses_the_port.py"
    snippet.write_text(
        "from indx_assets.pipeline.embedder import MiniLMEmbedder\n"
        "from indx_interfaces import Embedder\n\n"
        "class Flat:\n"
        "    dimension = 3\n"
        "    modalities = frozenset({'text'})\n"
        "    model_version = 'flat'\n\n"
        "    def embed_texts(self, texts: list[str]) -> list[float]:\n"
        "        return [0.0, 0.0, 1.0]\n\n"
        "project: Embedder = MiniLMEmbedder()\n"
        "flat: Embedder = Flat()  # line 13: refused\n",
        encoding="utf-8",
    )
    # The sources, not installed copies: indx_assets has no py.typed and would be read as Any.
    env = {**os.environ, "MYPYPATH": os.pathsep.join([str(ROOT), str(INTERFACES)])}
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
         "--cache-dir", os.devnull, str(PACKAGE), snippet.name],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[:2] for line in errors] == [[snippet.name, "13"]], result.stdout
