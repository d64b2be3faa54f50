"""A source stored and read as the ingest stages store and read it, for the tests of the chunk stage."""

from pathlib import Path

from upath import UPath

from indx_assets.pipeline.readers import ReaderConfig
from indx_assets.wiring.assets import stages
from indx_assets.wiring.resources.storage import StorageResource


def stored_text(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> tuple[str, StorageResource]:
    """`text` written to `name` in `encoding`, stored (`source_documents`) and read
    (`page_outputs`) under `tmp_path`: its source id and the storage, with no run cache, so
    every read is the file's."""
    path = tmp_path / name
    path.write_text(text, encoding=encoding)
    source = f"corpus/{name}"
    storage = StorageResource(root=str(tmp_path / "assets"), run_cache_mb=0)
    stages.store_source(source, UPath(path), storage)
    stages.read_pages(source, storage, ReaderConfig())
    return source, storage


#: The chain option that cuts `notes_with_an_image` into chunks whose words are not its exactly.
NOTES_CHAIN = '{"options": {"markdown": {"max_characters": 300}}}'


def notes_with_an_image() -> str:
    """A Markdown page with Windows line ends, a line-end hyphenation and an inline image, which
    the Markdown chunker cuts by `NOTES_CHAIN` into chunks whose words are not the page's
    exactly (a slice written with its whitespace collapsed: "hyphen- ated" on one line), one of
    them holding the image's alt text after its span (so the page is measured word by word)."""
    import random

    rnd = random.Random(5)
    vocabulary = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()

    def paragraph(n: int) -> str:
        said = [rnd.choice(vocabulary) for _ in range(n)]
        return "\r\n".join(" ".join(said[i : i + 8]) for i in range(0, n, 8))

    return (paragraph(40) + "\r\n\r\n" + paragraph(16) + " hyphen-\r\nated " + paragraph(16) + "\r\n\r\n## Results\r\n\r\n"
            + "![plot](data:image/png;base64," + "iVBORw0KGgo" * 10 + ")\r\n\r\n" + paragraph(60) + "\r\n")
