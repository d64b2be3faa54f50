"""The corpus listing the sensor pages through: one order across roots (each under its label),
resumable, and lazy."""

import os
import uuid
from itertools import islice
from pathlib import Path

import pytest
from upath import UPath

from indx_assets.pipeline.roots import RootError
from indx_assets.wiring.resources.corpus import CorpusResource

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


def test_files_come_in_entry_order_across_roots_each_under_its_label(roots: list[UPath]) -> None:
    files = list(CorpusResource(roots=[str(r) for r in roots]).iter_files())
    assert [f.entry for f in files] == sorted([*(f"first/{t}" for t in TREE), "second/a0.txt", "second/m.txt",
                                               "second/a/c/d.txt"])
    assert [f.source_id for f in files] == [f.entry for f in files]  # every name here is a valid key
    # the same relative path under two roots is two sources, each read from its own root
    both = [f for f in files if f.relative == "a0.txt"]
    assert [(f.source_id, f.root) for f in both] == [("first/a0.txt", str(roots[0])), ("second/a0.txt", str(roots[1]))]
    corpus = CorpusResource(roots=[str(r) for r in roots])
    assert corpus.locate("second/a0.txt").read_text() == "contents of a0.txt\n" and corpus.locate("second/a0.txt").parent == roots[1]


def test_a_listing_resumes_after_any_entry(roots: list[UPath]) -> None:
    corpus = CorpusResource(roots=[str(r) for r in roots])
    everything = [f.entry for f in corpus.iter_files()]
    for after in [*everything, "", "first/a/", "first/a/c", "first/a/zzz", "first/a.zzz", "first/y", "first/zzz", "g",
                  "second/", "zzz"]:
        assert [f.entry for f in corpus.iter_files(after=after)] == [r for r in everything if r > after], after


def test_labels_name_roots_and_two_roots_with_one_label_are_refused(tmp_path: Path) -> None:
    write(UPath(tmp_path), ["x/docs/a.txt", "y/docs/a.txt"])
    labelled = CorpusResource(roots=[str(tmp_path / "x" / "docs"), f"other={tmp_path / 'y' / 'docs'}"])
    assert [f.source_id for f in labelled.iter_files()] == ["docs/a.txt", "other/a.txt"]
    with pytest.raises(RootError, match="two corpus roots are labelled 'docs'"):
        list(CorpusResource(roots=[str(tmp_path / "x" / "docs"), str(tmp_path / "y" / "docs")]).iter_files())


def test_overlapping_roots_are_refused_when_listed(tmp_path: Path) -> None:
    """The sensor and the assets list through the corpus resource: the same refusal as the CLI."""
    write(UPath(tmp_path), ["docs/a.txt", "docs/sub/b.txt"])
    for roots in ([str(tmp_path / "docs"), str(tmp_path / "docs" / "sub")],
                  [f"inner={tmp_path / 'docs' / 'sub'}", f"outer={tmp_path / 'docs'}"],
                  [f"one={tmp_path / 'docs'}", f"two={tmp_path / 'docs'}/"]):
        with pytest.raises(RootError, match="overlap"):
            list(CorpusResource(roots=roots).iter_files())
    # a sibling whose name starts the same is not inside
    write(UPath(tmp_path), ["docs2/c.txt"])
    listed = CorpusResource(roots=[str(tmp_path / "docs"), str(tmp_path / "docs2")]).iter_files()
    assert [f.entry for f in listed] == ["docs/a.txt", "docs/sub/b.txt", "docs2/c.txt"]


def test_a_linked_folder_is_not_followed_and_what_is_no_file_is_not_listed(tmp_path: Path) -> None:
    write(UPath(tmp_path), ["docs/one.txt"])
    os.symlink(tmp_path / "docs", tmp_path / "docs" / "loop")  # would recurse for ever if followed
    os.symlink(tmp_path / "docs" / "gone.txt", tmp_path / "docs" / "dangling.txt")
    os.mkfifo(tmp_path / "docs" / "pipe")
    os.symlink(tmp_path / "docs" / "one.txt", tmp_path / "docs" / "two.txt")  # a linked file is a file
    label = tmp_path.name
    assert [f.entry for f in CorpusResource(roots=[str(tmp_path)]).iter_files()] == [f"{label}/docs/one.txt", f"{label}/docs/two.txt"]


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
    page = list(islice(corpus.iter_files(after=f"{tmp_path.name}/folder-20/file-2.txt"), 6))
    assert [f.relative for f in page] == ["folder-20/file-3.txt", "folder-20/file-4.txt",
                                          *[f"folder-21/file-{i}.txt" for i in range(4)]]
    assert listed == [tmp_path.name, "folder-20", "folder-21"]  # not the 38 others
