"""The corpus listing the sensor pages through: one order across roots, resumable, and lazy."""

import os
import uuid
from itertools import islice
from pathlib import Path

import pytest
from upath import UPath

from indx_assets.resources.corpus import CorpusResource

# Names that sort on either side of "/": a folder's files must come where "name/..." sorts.
TREE = ["a.txt", "a/b.txt", "a/c/d.txt", "a0.txt", "a-b/c.txt", "b.md", "z/y/x.txt", "ü.txt"]
HIDDEN = [".hidden.txt", ".git/config", "a/.cache/e.txt"]


def write(root: UPath, names: list[str]) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"contents of {name}\n")


@pytest.fixture(params=["local", "memory"])
def roots(request: pytest.FixtureRequest, tmp_path: Path) -> list[UPath]:
    # memory:// is fsspec's in-memory filesystem: the object-store code path without a network
    base = UPath(tmp_path) if request.param == "local" else UPath(f"memory://corpus-{uuid.uuid4().hex}")
    first, second = base / "first", base / "second"
    write(first, TREE + HIDDEN)
    write(second, ["a0.txt", "m.txt", "a/c/d.txt"])  # two shadowed by the first root
    return [first, second]


def test_files_come_in_path_order_across_roots_with_the_first_root_winning(roots: list[UPath]) -> None:
    files = list(CorpusResource(roots=[str(r) for r in roots]).iter_files())
    relative = [f[2] for f in files]
    assert relative == sorted([*TREE, "m.txt"])
    by_path = {f[2]: f[1] for f in files}
    assert by_path["a0.txt"] == by_path["a/c/d.txt"] == str(roots[0]) and by_path["m.txt"] == str(roots[1])


def test_a_listing_resumes_after_any_path(roots: list[UPath]) -> None:
    corpus = CorpusResource(roots=[str(r) for r in roots])
    everything = [f[2] for f in corpus.iter_files()]
    for after in [*everything, "", "a/", "a/c", "a/zzz", "a.zzz", "y", "zzz"]:
        assert [f[2] for f in corpus.iter_files(after=after)] == [r for r in everything if r > after], after


def test_a_linked_folder_is_not_followed_and_what_is_no_file_is_not_listed(tmp_path: Path) -> None:
    write(UPath(tmp_path), ["docs/one.txt"])
    os.symlink(tmp_path / "docs", tmp_path / "docs" / "loop")  # would recurse for ever if followed
    os.symlink(tmp_path / "docs" / "gone.txt", tmp_path / "docs" / "dangling.txt")
    os.mkfifo(tmp_path / "docs" / "pipe")
    os.symlink(tmp_path / "docs" / "one.txt", tmp_path / "docs" / "two.txt")  # a linked file is a file
    assert [f[2] for f in CorpusResource(roots=[str(tmp_path)]).iter_files()] == ["docs/one.txt", "docs/two.txt"]


def test_a_page_lists_only_the_folders_it_reaches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(UPath(tmp_path), [f"folder-{d:02d}/file-{f}.txt" for d in range(40) for f in range(5)])
    listed: list[str] = []
    local = type(UPath(tmp_path))
    iterdir = local.iterdir

    def counting(self: UPath):  # instrumentation: which folders the listing opens
        listed.append(self.name)
        return iterdir(self)

    monkeypatch.setattr(local, "iterdir", counting)
    corpus = CorpusResource(roots=[str(tmp_path)])
    page = list(islice(corpus.iter_files(after="folder-20/file-2.txt"), 6))
    assert [f[2] for f in page] == ["folder-20/file-3.txt", "folder-20/file-4.txt",
                                    *[f"folder-21/file-{i}.txt" for i in range(4)]]
    assert listed == [tmp_path.name, "folder-20", "folder-21"]  # not the 38 others
