"""Install real third-party chunker distributions for a test, without pip.

A distribution, as `importlib.metadata` sees it, is a `<name>-<version>.dist-info` directory
(with `METADATA` and `entry_points.txt`) on `sys.path`. Writing one into a temporary
directory next to its module and prepending that directory to `sys.path` is exactly what an
installed wheel looks like to entry-point discovery, so `load_chain()` finds it the way it
finds any installed chunker. Module names are made unique per call so that `sys.modules`
never hands one test the module of another.
"""

import textwrap
import uuid
from pathlib import Path

import pytest

#: The chunker bodies tests install. Each is the `chunk` method of a class `C`; `{tag}` is the
#: entry-point name, so a test can see in the chunks which distribution cut them.
BODIES: dict[str, str] = {
    # claims every readable page with one piece naming itself
    "claims_all": """
        return tuple(
            PageChunks(o.page, (ChunkPiece(text="{tag}: " + o.text, bbox_reason="no_geometry"),))
            for o in outputs if o.readable and o.text.strip()
        )
    """,
    # claims plain-text pages only, so installing it changes the cut of .txt sources alone
    "plain_text_only": """
        if media_type != "text/plain":
            return ()
        return tuple(
            PageChunks(o.page, (ChunkPiece(text="{tag}: " + o.text, bbox_reason="no_geometry"),))
            for o in outputs if o.readable and o.text.strip()
        )
    """,
    "raises": """
        raise RuntimeError("{tag} is broken")
    """,
    # answers for page 99 only, with a well-formed claim
    "page_99": """
        return (PageChunks(99, (ChunkPiece(text="{tag} on a page that is not there", bbox_reason="no_geometry"),)),)
    """,
    # claims every page with text and an image, whatever the reader said
    "text_and_image": """
        return tuple(
            PageChunks(o.page, (
                ChunkPiece(text="{tag} text", bbox_reason="no_geometry"),
                ChunkPiece(image=b"\\x89PNG {tag}", bbox=(0.0, 0.0, 1.0, 1.0)),
            ))
            for o in outputs
        )
    """,
    # claims plain-text pages, dropping the fifth word of each: a chunker that loses text
    "drops_a_word": """
        if media_type != "text/plain":
            return ()
        return tuple(
            PageChunks(o.page, (ChunkPiece(text=" ".join(w for i, w in enumerate(o.text.split()) if i != 4),
                                           bbox_reason="no_geometry"),))
            for o in outputs if o.readable and o.text.strip()
        )
    """,
    # claims plain-text pages, running the second and third words together: a chunker that mangles text
    "glues_two_words": """
        if media_type != "text/plain":
            return ()
        def glued(words):
            return " ".join([words[0], words[1] + words[2], *words[3:]])
        return tuple(
            PageChunks(o.page, (ChunkPiece(text=glued(o.text.split()), bbox_reason="no_geometry"),))
            for o in outputs if o.readable and len(o.text.split()) > 3
        )
    """,
    # declines everything; notes how many PDF reader parses (`PdfParse`) are alive as it is
    # asked, one line per document, in the file INDX_PROBE_FILE names
    "counts_live_pdf_parses": """
        import gc, os
        live = sum(1 for o in gc.get_objects() if type(o).__name__ == "PdfParse")
        with open(os.environ["INDX_PROBE_FILE"], "a", encoding="utf-8") as out:
            out.write(media_type + " " + str(live) + "\\n")
        return ()
    """,
    # claims every page with text only, whatever the reader said
    "text_only": """
        return tuple(PageChunks(o.page, (ChunkPiece(text="{tag} text", bbox_reason="no_geometry"),)) for o in outputs)
    """,
}

PROVIDER = '''
class C{i}:
    builtin = {builtin}

    def chunk(self, content, media_type, outputs):
{body}


class Provider{i}:
    def __init__(self, **options):
        self.options = options

    def with_options(self, *, prefix=None):
        return Provider{i}(prefix=prefix)

    def chunkers(self):
        return (C{i}(),)
'''

def install(
    site: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    distribution: str,
    chunkers: dict[str, str],
    version: str = "1.0",
    module_source: str | None = None,
    builtin: bool = False,
) -> str:
    """Install distribution `distribution` registering one entry point per `chunkers` item.

    `chunkers` maps an entry-point name to a key of `BODIES`. `module_source`, when given,
    replaces the generated module (for providers that are broken in other ways). Returns the
    module name.
    """
    module = f"{distribution.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
    site.mkdir(parents=True, exist_ok=True)
    if module_source is None:
        parts = ["from indx_interfaces import ChunkPiece, PageChunks\n"]
        for i, (name, body_key) in enumerate(chunkers.items()):
            body = textwrap.indent(textwrap.dedent(BODIES[body_key]).format(tag=name).strip("\n"), " " * 8)
            parts.append(PROVIDER.format(i=i, builtin=builtin, body=body))
        module_source = "\n".join(parts)
        targets = {name: f"{module}:Provider{i}" for i, name in enumerate(chunkers)}
    else:
        targets = {name: f"{module}:{attr}" for name, attr in chunkers.items()}
    (site / f"{module}.py").write_text(module_source, encoding="utf-8")
    info = site / f"{distribution.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n", encoding="utf-8"
    )
    entries = "".join(f"{name} = {target}\n" for name, target in targets.items())
    (info / "entry_points.txt").write_text(f"[indx.chunkers]\n{entries}", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    return module
