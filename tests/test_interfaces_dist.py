"""The README's third-party chunker, built as a real distribution that depends on
`indx-interfaces` alone, installed by pip twice: into a fresh virtual environment that holds
nothing but it and `interfaces/` (no indx-assets, no system site-packages), where its provider
must import and cut a `PageOutput`; and beside indx-assets, where `indx chunk` must find it
through the `indx.chunkers` entry points and let it cut.

Nothing needs the network: the two wheels are built from local paths with the hatchling of
the project's venv (`--no-index --no-build-isolation`: a fresh venv has no build backend), and
pip installs them with `--no-index` from that folder alone, so a dependency on anything but
`indx-interfaces` would fail to resolve. The fresh venv is made without pip (the project's pip
installs into it with `--python`). Measured on two loaded cores: wheels 2.6 s, fresh venv with
install and probe 3.2 s, the `indx chunk` half 6.4 s; 12 s for the module.
"""

import json
import os
import re
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INTERFACES = ROOT / "interfaces"
README = ROOT / "README.md"


def readme_chunker_example() -> tuple[str, str]:
    """The Python module and the `pyproject.toml` the README's chunker port section shows."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## The chunker port\n"):]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)
    python = next(body for lang, body in blocks if lang == "python")
    toml = next(body for lang, body in blocks if lang == "toml")
    return python, toml


def _pip_env() -> dict[str, str]:
    """The environment for pip: this machine's pip configuration (extra indexes, find-links)
    left out, so only the folder the test names can supply a distribution."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, f"{args} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wheels of `interfaces/` and of the README's chunker (distribution `my-chunker`)."""
    base = tmp_path_factory.mktemp("dists")
    python, toml = readme_chunker_example()
    chunker = base / "my-chunker"
    (chunker / "my_chunker").mkdir(parents=True)
    (chunker / "my_chunker" / "__init__.py").write_text(python, encoding="utf-8")
    (chunker / "pyproject.toml").write_text(toml, encoding="utf-8")
    out = base / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
          "--wheel-dir", str(out), str(INTERFACES), str(chunker)], env=_pip_env())
    return out


#: Run in the fresh venv: discover the chunker as indx would, cut three pages, report what is there.
PROBE = textwrap.dedent("""
    import importlib.metadata as md, importlib.util, json
    from indx_interfaces import ChunkerProvider, Chunker, PageOutput

    (ep,) = md.entry_points(group="indx.chunkers")
    provider = ep.load()()
    assert isinstance(provider, ChunkerProvider)
    (chunker,) = provider.chunkers()
    assert isinstance(chunker, Chunker)
    outputs = (
        PageOutput(1, text="Alpha beta gamma.", reader="probe"),
        PageOutput(2, text="", status="empty", reader="probe"),
        PageOutput(3, text="", status="unreadable", reader="probe"),
        PageOutput(4, text="Delta epsilon.", reader="probe"),
    )
    answer = chunker.chunk(b"", "text/plain", outputs)
    print(json.dumps({
        "entry_point": [ep.name, ep.value],
        "chunks": [[pc.page, [[p.text, p.bbox_reason] for p in pc.pieces]] for pc in answer],
        "distributions": sorted(d.metadata["Name"] for d in md.distributions()),
        "indx_assets": importlib.util.find_spec("indx_assets") is not None,
        "py_typed": (importlib.util.find_spec("indx_interfaces").submodule_search_locations[0] + "/py.typed"),
    }))
""")


def test_the_readme_chunker_installs_and_cuts_in_a_venv_with_only_the_interfaces(
    wheels: Path, tmp_path: Path
) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # Asking for my-chunker alone: pip must find its one dependency, indx-interfaces, in the folder.
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-index",
          "--find-links", str(wheels), "my-chunker"], env=_pip_env())

    probe = _run([str(python), "-I", "-c", PROBE], env=_pip_env(), cwd=tmp_path)
    found = json.loads(probe.stdout)

    assert found["distributions"] == ["indx-interfaces", "my-chunker"]  # nothing else came along
    assert found["indx_assets"] is False
    assert found["entry_point"] == ["mine", "my_chunker:MyProvider"]
    # The README's chunker claims each readable page with text as one piece of that text.
    assert found["chunks"] == [
        [1, [["Alpha beta gamma.", "no_geometry"]]],
        [4, [["Delta epsilon.", "no_geometry"]]],
    ]
    assert Path(found["py_typed"]).is_file()  # type checkers see the port's annotations


def test_the_readme_chunker_installed_beside_indx_assets_cuts_in_indx_chunk(wheels: Path, tmp_path: Path) -> None:
    # Installed by pip for the project's own interpreter into a folder on its path, not into
    # the venv itself: there it would be asked first by every other test until removed (and
    # stay there if this test were killed). Entry-point discovery reads the folder's
    # dist-info exactly as it reads site-packages.
    site = tmp_path / "site"
    (wheel,) = wheels.glob("my_chunker-*.whl")
    _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--target", str(site),
          str(wheel)], env=_pip_env())
    document = tmp_path / "notes.txt"
    document.write_text("The harbour bar is crossed at high water.\n\nPilots board off the fairway buoy.\n",
                        encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("INDX_CHAIN", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    indx = Path(sys.executable).parent / "indx"

    listing = _run([str(indx), "chunk", str(document), "--json"], env=env, cwd=tmp_path)

    chunks = json.loads(listing.stdout)["chunks"]
    assert [c["chunker"] for c in chunks] == ["mine"]
    assert chunks[0]["content"] == document.read_text(encoding="utf-8")  # the page's text, whole
