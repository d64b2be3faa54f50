"""The chunk stage of one large text page (`stages.cut_chunks`): what it holds while it cuts.

A text file's page is its text, so the file's bytes beside it would be a second copy that no
built-in chunker of a text type reads: they are handed over only to a chain that may read them
(`chain_runner.reads_content`). Real stored source, real chain, real Parquet files.
"""

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from indx_interfaces import PageChunks, PageOutput
from stored_sources import stored_text

from indx_assets.pipeline.chain import Chain, ChainConfig, ChainLink, load_chain
from indx_assets.pipeline.chain_runner import maps_content, reads_content
from indx_assets.wiring.assets import stages


class _Recorder:
    """A third-party chunker (of `media_types`, or of all) that says nothing of what it reads or
    how: it is handed the bytes, which it records."""

    def __init__(self, media_types: frozenset[str] | None = None) -> None:
        if media_types is not None:
            self.media_types = media_types
        self.seen: list[tuple[type, int]] = []

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple[PageChunks, ...]:
        self.seen.append((type(content), len(content)))
        return ()


def test_the_bytes_of_a_text_file_go_only_to_a_chain_that_may_read_them(tmp_path: Path) -> None:
    chain = load_chain()
    assert not reads_content(chain, "text/plain") and not reads_content(chain, "text/markdown")
    assert reads_content(chain, "text/html") and reads_content(chain, "application/pdf")  # they reopen the bytes
    assert reads_content(chain, "message/rfc822")  # a container's parts are in its bytes

    source, storage = stored_text(tmp_path, "tide.txt", "The harbour wall held the tide back.\n" * 200)
    recorder = _Recorder()
    stages.cut_chunks(source, storage, Chain((ChainLink("recorder", recorder, "inline", "", ""), *chain.links)))
    assert recorder.seen == [(bytes, len("The harbour wall held the tide back.\n") * 200)]
    cut = stages.cut_chunks(source, storage, chain)
    assert cut.metadata["chunks"] > 1 and cut.metadata["fidelity"]["passes"]


def _page(name: str, size: int) -> str:
    """About `size` characters of prose paragraphs, as a text, Markdown or HTML file writes them."""
    paragraph = "The harbour wall held the tide back. The town slept behind it, and the boats rode at anchor."
    count = size // (len(paragraph) + 9)
    if name.endswith(".html"):
        return "<html><body>" + "".join(f"<p>{paragraph}</p>\n" for _ in range(count)) + "</body></html>"
    if name.endswith(".md"):
        return "".join((f"## Part {n}\n\n" if n % 40 == 0 else "") + paragraph + "\n\n" for n in range(count))
    return "".join(paragraph + "\n\n" for _ in range(count))


def test_an_html_file_is_walked_from_a_map_of_its_stored_file_only_by_chunkers_that_take_one(tmp_path: Path) -> None:
    """The `html` chunker takes its bytes as a read-only map of the stored file and lets its pages
    go as it walks them (`chain_runner.maps_content`); a chunker that declares nothing gets the
    bytes, and then so does every other."""
    chain = load_chain()
    assert maps_content(chain, "text/html") and not maps_content(chain, "application/pdf")
    html = _page("page.html", 64 << 10)
    source, storage = stored_text(tmp_path, "page.html", html)
    recorder = _Recorder(frozenset({"text/html"}))
    third = Chain((ChainLink("recorder", recorder, "inline", "", ""), *chain.links))
    assert not maps_content(third, "text/html")
    stages.cut_chunks(source, storage, third)
    assert recorder.seen == [(bytes, len(html))]
    by_bytes = storage.read(stages.CHUNK_MAP, source).to_pylist()
    cut = stages.cut_chunks(source, storage, chain)
    assert storage.read(stages.CHUNK_MAP, source).to_pylist() == by_bytes and cut.metadata["fidelity"]["passes"]
    assert {c["chunker"] for c in by_bytes} == {"html"}


def _traced_cut(tmp_path: Path, name: str, text: str, chain: Chain) -> tuple[stages.StageOutput, int]:
    """`text` stored as `name` and cut by `chain` twice, the second time traced (the tokenizer's
    and the measure's word caches filled by the first): its output and its traced peak."""
    source, storage = stored_text(tmp_path, name, text)
    stages.cut_chunks(source, storage, chain)
    tracemalloc.start()
    try:
        cut = stages.cut_chunks(source, storage, chain)
        return cut, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


#: Small chunks, each also cut into its sentences, overlapping: a chunk every 30 characters.
SENTENCES = {"text": {"max_characters": 300, "overlap": 120, "overlap_all": True, "sentences": True}}


@pytest.mark.parametrize(("name", "mib", "options"), [
    ("prose.txt", 4, {}), ("notes.md", 4, {}), ("page.html", 4, {}), ("prose.txt", 1, SENTENCES)])
def test_a_large_page_is_cut_holding_its_text_not_its_chunks(tmp_path: Path, name: str, mib: int,
                                                             options: dict[str, dict[str, object]]) -> None:
    """A page of prose, cut and stored: the page's chunks are streamed from the chunker to the
    spool (`chain_runner.stream_page`), never all held, so the cut holds the page text and little
    beside it: 2.2x at most, when the page's file is read, its bytes then decoded (1.5x prose and
    1.8x Markdown while cut; 4.0x and more when a page's pieces and chunks were held whole). An
    HTML page's chunker walks a map of the stored file, whose pages are no traced memory (2.96x
    when it walked the bytes read whole; 4.9x before its walk compared its text with the page's
    rather than kept it, and kept its blocks as arrays). Cut in sentences of a chunk every 30
    characters, the page's spans are kept 8 bytes each to keep its chunks' ids apart
    (`read_and_chunk.PageSpans`; 6.4x when every locator of the document was kept)."""
    text = _page(name, mib << 20)
    cut, peak = _traced_cut(tmp_path, name, text, load_chain(ChainConfig(options=options)))
    assert cut.metadata["chunks"] > 5_000 and cut.metadata["fidelity"]["passes"]
    assert peak < 2.2 * len(text), f"{peak / len(text):.2f}x the page"


def test_a_long_html_table_is_cut_a_piece_of_its_markup_at_a_time(tmp_path: Path) -> None:
    """4 MiB of one HTML table: its rows are read from its markup a piece at a time
    (`readers.html.table_trees`) and packed into chunks as they come, so the cut holds the page
    text, the table's text and one piece's tree, its markup spooled to a scratch file by the
    walk (2.9x traced; 4.4x when the walk held the markup's parts and joined them, 26x when the
    markup was parsed whole and its rows all held)."""
    row = "<tr><td>harbour wall</td><td>held the tide</td><td>1887</td></tr>\n"
    html = ("<html><body><table><thead><tr><th>Place</th><th>What</th><th>Year</th></tr></thead><tbody>\n"
            + row * ((4 << 20) // len(row)) + "</tbody></table></body></html>")
    cut, peak = _traced_cut(tmp_path, "table.html", html, load_chain())
    assert cut.metadata["chunks_by_type"] == {"table": cut.metadata["chunks"]} and cut.metadata["chunks"] > 1_000
    assert cut.metadata["fidelity"]["passes"]
    assert peak < 3.3 * len(html), f"{peak / len(html):.2f}x the page"


@pytest.mark.parametrize("name, heading", [("wrapped.txt", ""), ("wrapped.md", ""), ("wrapped.md", "# The harbour\n")])
def test_a_page_of_one_hard_wrapped_paragraph_is_cut_a_batch_of_sentences_at_a_time(
        tmp_path: Path, name: str, heading: str) -> None:
    """4 MiB of prose wrapped at 72 characters with no blank line (text dumped from a PDF, an
    old e-text): one paragraph of 60,000 lines and 90,000 sentences. Its text is cut from the
    page with its whitespace collapsed (`collapse_whitespace` of a stretch, grown in place) and
    its sentences made and measured a batch at a time (`sentence_units`), so the cut holds the
    page and the paragraph once: 2.2x traced, as its read (12.7x when its sentences were all
    made at once, each with its metadata; 3.6x when the paragraph was cut from the page, then
    collapsed into a copy, which took a copy more while it grew). As Markdown, the paragraph's
    end is found a window at a time and its lines read from the page (`LongParagraph`): 2.3x, 6.9x
    when markdown-it parsed it whole; under a heading with no blank line between, too."""
    import textwrap

    paragraph = "The harbour wall held the tide back. The town slept behind it, and the boats rode at anchor."
    block = "\n".join(textwrap.wrap(" ".join([paragraph] * 40), 72)) + "\n"
    text = heading + block * ((4 << 20) // len(block))
    cut, peak = _traced_cut(tmp_path, name, text, load_chain())
    assert cut.metadata["chunks"] > 5_000 and cut.metadata["fidelity"]["passes"]
    assert peak < 2.4 * len(text), f"{peak / len(text):.2f}x the page"


def test_a_paragraph_of_a_million_lines_is_read_a_line_at_a_time_and_held_a_segment_at_a_time() -> None:
    """A word list (or a log) is one paragraph of short lines: the text chunker reads its lines
    and their runs a line at a time (`paragraphs.iter_line_runs`; 16x the text when the paragraph
    was split into its lines, their offsets listed and the lines joined again), and holds the run
    a segment of at most a MiB at a time (`paragraphs.run_segments`), each cut at a line end:
    3.1 MiB for a text of 6.8 MB, whatever its size (7.0 MiB, 1.1x, when the whole run was one
    element, collapsed beside the page)."""
    import random

    from indx_assets.pipeline.chunkers.text import text_elements
    from indx_assets.pipeline.chunking.paragraphs import SEGMENT

    rnd = random.Random(5)
    text = "".join("".join(rnd.choices("abcdefghijklmnopqrstuvwxyz", k=rnd.randrange(4, 12))) + "\n"
                   for _ in range(800_000))
    tracemalloc.start()
    try:
        spans = [(e.metadata.start, e.metadata.end) for e in text_elements(text)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert spans[0][0] == 0 and spans[-1][1] == len(text) - 1 and len(spans) == 6
    assert all(text[end] == "\n" and after == end + 1 for (_, end), (after, _) in zip(spans, spans[1:]))
    assert all(SEGMENT // 2 < end - start <= SEGMENT for start, end in spans[:-1])
    assert [e.text for e in text_elements(text)] == [" ".join(text[a:b].split()) for a, b in spans]
    assert peak < 4 * SEGMENT, f"{peak / SEGMENT:.2f} MiB"


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252"])
def test_a_long_html_page_s_temporary_files_are_under_the_data_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str) -> None:
    """A system temporary directory that takes no file (full, or gone, or a small tmpfs): the
    HTML reader's page text, the page decoded into UTF-8 and a long table's markup, by the
    reader and by the chunker, are spooled under the storage root (`scratch.scratch_in`), so the
    page is read and cut as from its bytes, and nothing is left there."""
    import tempfile

    from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
    from indx_assets.pipeline.schema import chunks_table

    row = "<tr><td>harbour wall</td><td>held the tide, caf\u00e9</td></tr>\n"
    html = ("<html><body>" + "<p>The harbour wall held the tide back, cr\u00e8me.</p>\n" * 8000
            + "<table>" + row * 8000 + "</table></body></html>")
    whole = encode_bytes(html.encode(encoding), source_id="corpus/page.html", name="page.html")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-tmp"))
    source, storage = stored_text(tmp_path, "page.html", html, encoding)
    cut = stages.cut_chunks(source, storage, load_chain())
    assert cut.metadata["chunks_by_type"]["table"] > 10 and cut.metadata["fidelity"]["passes"]
    assert storage.read(stages.CHUNK_MAP, source).equals(chunks_table(to_document(whole)))
    assert list(Path(storage.scratch_dir()).iterdir()) == [], "a scratch file has no name: none is left behind"


#: Cuts one stored HTML page in a process of its own and prints the rise of its resident memory
#: during the cut (the map's pages and the C heap are resident memory no trace sees).
_RESIDENT_CUT = """
import json, re, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from stored_sources import stored_text
from indx_assets.pipeline.chain import load_chain
from indx_assets.wiring.assets import stages

def status(key):
    return int(re.search(key + r":\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)) << 10

folder, text, encoding, name = Path(sys.argv[1]), Path(sys.argv[2]).read_text(), sys.argv[4], sys.argv[5]
chain = load_chain()
stages.cut_chunks(*stored_text(folder, "small-" + name, text[:4096] + "</p>", encoding), chain)  # its imports and caches
source, storage = stored_text(folder, name, text, encoding)
del text
open("/proc/self/clear_refs", "w").write("5")  # the peak from here
before = status("VmRSS")
cut = stages.cut_chunks(source, storage, chain)
print(json.dumps({"rise": status("VmHWM") - before, "passes": cut.metadata["fidelity"]["passes"]}))
"""


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc to reset the peak")
@pytest.mark.parametrize("encoding", ["utf-8", "cp1252"])
def test_an_html_page_is_cut_in_resident_memory_of_little_more_than_its_text(tmp_path: Path, encoding: str) -> None:
    """16 MiB of HTML paragraphs, cut in a process of its own: the scans before the walk (is it
    UTF-8, how deep does it nest, has it a frameset) let the map's pages go behind them, and the
    walk hands the parser's freed trees back to the system, so the cut's resident memory rises by
    about the file (1.12x; 1.94x when each scan held the whole map beside the page text and the
    chunks landed beside the freed trees). A page in another encoding is decoded into a file in
    UTF-8 a step at a time, whose map is walked (1.05x; 4.81x when its bytes, its text and their
    UTF-8 were held whole)."""
    html = _page("page.html", 16 << 20).replace("anchor", "ancre \u00e0 caf\u00e9")
    result = _resident_cut(tmp_path, html, encoding)
    assert result["passes"]
    assert result["rise"] < 1.3 * len(html), f"{result['rise'] / len(html):.2f}x the file"


def _resident_cut(tmp_path: Path, html: str, encoding: str = "utf-8", name: str = "page.html") -> dict[str, int]:
    """`_RESIDENT_CUT` of `html` stored in `encoding` as `name`: the rise of the cut's resident memory."""
    (tmp_path / "source").write_text(html)
    done = subprocess.run([sys.executable, "-c", _RESIDENT_CUT, str(tmp_path), str(tmp_path / "source"),
                           str(Path(__file__).parent), encoding, name], capture_output=True, text=True, check=True,
                          cwd=tmp_path)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc to reset the peak")
def test_a_long_html_table_is_cut_in_resident_memory_without_its_markup_held(tmp_path: Path) -> None:
    """8 MiB of one HTML table, cut in a process of its own: the walk spools the table's markup
    to a scratch file as it goes (`readers.html._Walker._table_markup`), and the chunker reads
    its rows from a map of that file a piece at a time, handing the pieces' freed trees back
    to the system, so the cut's resident memory rises by 1.85x the file (3.4x when the walk held
    the markup's parts, joined them, and the chunker wrote the joined markup to a file again;
    2.4x when the chunks were spooled to Parquet, whose writer holds each row group's metadata)."""
    row = "<tr><td>harbour wall</td><td>held the tide</td><td>1887</td></tr>\n"
    html = ("<html><body><table><thead><tr><th>Place</th><th>What</th><th>Year</th></tr></thead><tbody>\n"
            + row * ((8 << 20) // len(row)) + "</tbody></table></body></html>")
    result = _resident_cut(tmp_path, html)
    assert result["passes"]
    assert result["rise"] < 2.2 * len(html), f"{result['rise'] / len(html):.2f}x the file"


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc to reset the peak")
def test_a_page_laid_out_in_one_table_cell_is_cut_a_piece_of_that_cell_at_a_time(tmp_path: Path) -> None:
    """8 MiB of a page laid out in a table, as old sites and mail write it: a column of links,
    then all its text in one cell. The page is one table block whose one long row is read from
    the table's markup cut in that cell, a piece at a time, and its text given a part at a time
    (`chunking.tables._CutRow.given`; not its markup, as the row is over any chunk), so the cut
    holds the page's text and markup, not the row's tree nor its text (2.19x the file; 2.83x
    when the row's parts were joined, 5.9x when its markup was joined too, 30x when no cut fell
    in a cell and the row was parsed whole)."""
    section = ("<h2>The harbour</h2>\n" + "<p>The harbour wall held the <b>tide</b> back, and the town"
               " <font color=navy>slept</font>.</p>\n" * 4)
    html = ("<html><body><center><table width=728 border=0><tr><td valign=top class=nav><a href=/>Home</a><br>"
            "<a href=/news>News</a></td><td class=content><font face=Arial size=2>"
            + section * ((8 << 20) // len(section)) + "</font></td></tr></table></center></body></html>")
    result = _resident_cut(tmp_path, html)
    assert result["passes"]
    assert result["rise"] < 2.6 * len(html), f"{result['rise'] / len(html):.2f}x the file"


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc to reset the peak")
def test_a_page_of_many_small_tables_is_cut_with_their_markup_spooled(tmp_path: Path) -> None:
    """8 MiB of sections each laid out in a small table, as old sites and templates write them
    (a note in a `div` among a table's rows, which the parser puts before it): some 50,000
    tables, whose markup the chunker takes in page order. The walk spools each one's markup to
    one scratch file (`scratch.SpooledTexts`), so the cut's resident memory rises by 3.0x the
    file, the tokenizer's word cache among it (4.0x when each table's markup was a string held
    until the page was cut)."""
    section = ("<table border=0><tr><td>harbour wall</td><td>held the tide</td></tr><div class=note>"
               "Noted in <b>1887</b></div></table>\n<p>The harbour wall held the <b>tide</b> back.</p>\n")
    html = "<html><body>" + section * ((8 << 20) // len(section)) + "</body></html>"
    result = _resident_cut(tmp_path, html)
    assert result["passes"]
    assert result["rise"] < 3.5 * len(html), f"{result['rise'] / len(html):.2f}x the file"


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc to reset the peak")
def test_a_log_with_blobs_longer_than_a_chunk_is_cut_in_resident_memory_of_a_log(tmp_path: Path) -> None:
    """8 MiB of a server log with a blob (a payload dumped whole, longer than a chunk) in one
    line of 500, cut in a process of its own, rises by no more than the same log without them
    (0.85x of it; 1.61x before). Its new words are counted in encodings of at most 16 KiB
    (`tokenizer.ENCODED_CHARS`): 8,192 of them at once, blobs among them, had the tokenizer
    hold some 30 MiB more. Each blob's pieces are foreign words (cut inside a word), so the page
    is measured word by word, a stretch at a time (`fidelity._stretches`), with no cache of its
    words (one held 12 MiB of them)."""
    import random

    rnd = random.Random(8)

    def log(blobs: bool) -> str:
        lines, size = [], 0
        while size < 8 << 20:
            size += len(lines[-1]) if lines else 0
            lines.append(f"2026-12-05T12:{rnd.randrange(60):02d}:{rnd.randrange(60):02d}Z INFO [worker-{rnd.randrange(8)}]"
                         f" GET /api/v1/items/{rnd.randrange(10**6)}?session={rnd.getrandbits(32):08x} 200"
                         + (" payload=" + rnd.randbytes(4_500).hex() if blobs and rnd.random() < 0.002 else "") + "\n")
        return "".join(lines)

    plain, blobs = log(False), log(True)
    (tmp_path / "blobs").mkdir()
    (tmp_path / "plain").mkdir()
    with_blobs = _resident_cut(tmp_path / "blobs", blobs, name="page.txt")
    without = _resident_cut(tmp_path / "plain", plain, name="page.txt")
    assert not with_blobs["passes"] and without["passes"]  # the blobs' pieces are foreign
    assert with_blobs["rise"] < 1.15 * without["rise"], (
        f"{with_blobs['rise'] / len(blobs):.2f}x the file, against {without['rise'] / len(plain):.2f}x without blobs")
