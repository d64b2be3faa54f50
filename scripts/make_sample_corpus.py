"""Write the bundled sample corpus under data/sample/ (run: python scripts/make_sample_corpus.py).

Every file in data/sample/ comes from this script, so the corpus can be regenerated and
reviewed as code. Later capabilities add their own generated formats here.
"""

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "data" / "sample"

LIGHTHOUSE_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Lighthouses of the Atlantic coast</title>
  <style>body { font-family: serif; }</style>
  <script>window.analytics = {track: function () {}};</script>
</head>
<body>
  <nav hidden>Home | About | Contact</nav>
  <h1>Lighthouses of the Atlantic coast</h1>
  <p>The lighthouse at Cape Hatteras is the tallest brick lighthouse in the United States.
     In 1999 the whole tower was moved 2,900 feet inland on hydraulic jacks and rollers,
     because the shoreline had eroded to within 120 feet of its base.</p>
  <h2>How a Fresnel lens works</h2>
  <p>A Fresnel lens bends the light of a small flame into a horizontal beam using
     concentric rings of glass prisms. A first-order lens stands taller than a person and
     can be seen more than twenty nautical miles out to sea.</p>
  <div style="display:none">Newsletter sign-up: this text is hidden and must not be indexed.</div>
  <h2>Notable towers</h2>
  <table>
    <thead><tr><th>Lighthouse</th><th>State</th><th>Height (ft)</th><th>First lit</th></tr></thead>
    <tbody>
      <tr><td>Cape Hatteras</td><td>North Carolina</td><td>198</td><td>1870</td></tr>
      <tr><td>Portland Head</td><td>Maine</td><td>80</td><td>1791</td></tr>
      <tr><td>Barnegat</td><td>New Jersey</td><td>165</td><td>1859</td></tr>
    </tbody>
  </table>
  <h2>Keepers</h2>
  <ul>
    <li>Keepers trimmed the wick every four hours, which is why they were called wickies.</li>
    <li>Ida Lewis of Lime Rock, Rhode Island, was credited with saving eighteen lives.</li>
  </ul>
  <script>document.write("dynamic text that is not content");</script>
</body>
</html>
"""

MAINTENANCE_MD = """# Maintaining a vector index

A vector index degrades as rows are updated and deleted. This guide explains the three
routine jobs that keep an embedded LanceDB table fast: compaction, index rebuilds and
cleanup of old versions.

## Compaction

Every write creates a new data fragment. Thousands of small fragments make scans slow,
so a nightly job merges them into fewer, larger files. Compaction never changes query
results; it only rewrites how rows are laid out on disk.

## Rebuilding the ANN index

An approximate nearest-neighbour index (IVF-PQ) pays off once a table holds more than
about 100,000 vectors. Below that, a brute-force scan over all vectors is exact and
usually fast enough.

```python
table.optimize()
table.create_index(metric="cosine", num_partitions=256, num_sub_vectors=24)
```

## Retention

| Job | Schedule | Keeps |
| --- | --- | --- |
| compaction | daily 02:00 | all rows |
| index rebuild | weekly | current index |
| cleanup | daily 03:00 | versions newer than 7 days |

Old versions are what make time travel possible, so keep at least one week of them
before running cleanup.
"""

CHUNKING_MD = """# A short primer on chunking

Retrieval-augmented generation retrieves passages, not documents. How a document is cut
into passages decides what the retriever can ever find.

## Why size matters

Chunks that are too large dilute the embedding: a vector for a whole chapter is close to
everything and specific to nothing. Chunks that are too small lose the context that makes
a sentence answer a question.

## Structure first

Good chunkers respect structure. They start a new chunk at every heading, keep tables
whole or split them by rows with the header repeated, and never cut a code block in the
middle of a line.

## Overlap

Overlap repeats the end of one chunk at the start of the next. It helps when an answer
straddles a boundary, at the cost of storing and embedding some text twice.
"""

TRAMS_MD = """# Die Straßenbahn in Zürich

Zürich betreibt eines der dichtesten Straßenbahnnetze Europas. Die Verkehrsbetriebe
Zürich (VBZ) fahren auf 15 Linien mit mehr als 300 Fahrzeugen.

## Geschichte

Die erste Pferdebahn fuhr 1882 vom Hauptbahnhof zum Tiefenbrunnen. Ab 1894 wurde das
Netz elektrifiziert; die letzte Pferdebahn verschwand 1900.

## Fahrzeuge

Der „Cobra“-Niederflurwagen prägt seit 2001 das Stadtbild. Seine Nachfolger, die Flexity-
Wagen, sind 43 Meter lang und bieten Platz für 280 Fahrgäste.

Grüße aus Zürich – à bientôt, 再见!
"""

TEA_TXT = """Tea harvest notes, Darjeeling estates

The first flush is picked in March and April, after the winter dormancy. Its leaves are
light and floral, and the best lots sell at auction for several hundred dollars a
kilogram.

The second flush follows in May and June. The famous muscatel flavour comes from
leafhoppers that bite the leaves, which makes the plant produce protective terpenes.
\f
Monsoon and autumnal flushes

Monsoon tea, picked from July to September, is strong and cheap and mostly goes into
blends. The autumnal flush in October and November gives copper-coloured cups with a
smooth, woody taste.

Processing steps: withering (12-16 hours), rolling, oxidation, drying at 100-120 °C, and
sorting into grades such as SFTGFOP — Special Finest Tippy Golden Flowery Orange Pekoe.
"""

FILES: dict[str, str] = {
    "articles/lighthouses.html": LIGHTHOUSE_HTML,
    "guides/lancedb-maintenance.md": MAINTENANCE_MD,
    "guides/chunking-primer.md": CHUNKING_MD,
    "articles/zurich-trams.md": TRAMS_MD,
    "notes/tea-harvest.txt": TEA_TXT,
}


def lighthouse_deck() -> bytes:
    """A three-slide PowerPoint deck (python-pptx): title slide, a grouped diagram, a table with notes."""
    import io
    import zipfile

    from pptx import Presentation
    from pptx.util import Emu, Pt

    prs = Presentation()  # python-pptx's default 4:3 template, whose layouts give the title frames
    title = prs.slides.add_slide(prs.slide_layouts[0])
    title.shapes.title.text = "Keeping the light"
    title.placeholders[1].text = "A short history of lighthouse keepers"
    diagram = prs.slides.add_slide(prs.slide_layouts[5])
    diagram.shapes.title.text = "How a Fresnel lens bends light"
    group = diagram.shapes.add_group_shape()
    for i, label in enumerate(("Flame", "Prism rings", "Horizontal beam")):
        box = group.shapes.add_textbox(Emu(500_000 + i * 2_800_000), Emu(2_500_000), Emu(2_400_000), Emu(1_200_000))
        box.text_frame.text = label
        box.text_frame.paragraphs[0].runs[0].font.size = Pt(28)
    towers = prs.slides.add_slide(prs.slide_layouts[5])
    towers.shapes.title.text = "Notable towers"
    rows = (("Lighthouse", "Height (ft)", "First lit"), ("Cape Hatteras", "198", "1870"), ("Portland Head", "80", "1791"))
    table = towers.shapes.add_table(3, 3, Emu(800_000), Emu(1_800_000), Emu(7_500_000), Emu(2_000_000)).table
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    towers.notes_slide.notes_text_frame.text = "Cape Hatteras was moved 2,900 feet inland in 1999."
    saved = io.BytesIO()
    prs.save(saved)
    # Re-pack with fixed entry dates so regenerating the corpus gives the same bytes.
    out = io.BytesIO()
    with zipfile.ZipFile(saved) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0)), src.read(info), zipfile.ZIP_DEFLATED)
    return out.getvalue()


PILOT_PARAGRAPHS = (
    ("Boarding a vessel", "The pilot boards from the launch by a rope ladder on the lee side. The ladder must "
     "reach the water, and the master keeps the ship at six to eight knots with the wind on the other side."),
    ("Passage plan", "Before taking the con the pilot agrees the passage plan with the master: the channel, "
     "the tidal window, the tugs ordered for the turning basin and the berth."),
    ("Tidal window", "Deep-draught ships cross the bar only within two hours of high water. The window closes "
     "early when a swell above two metres runs across the entrance."),
)
SCANNED_NOTE = ("Harbour master's note", "Berth 4 is closed for dredging", "until the end of March.")


def _scanned_page() -> "object":
    """A picture of a typed note: a page with no text layer, as a scanner makes it."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=44)
    for i, line in enumerate(SCANNED_NOTE):
        draw.text((120, 160 + i * 80), line, fill=0, font=font)
    return image


def pilot_handbook() -> bytes:
    """A two-page PDF (reportlab): a text page with headings, paragraphs and a table, and a
    scanned page with no text layer (OCR reads it when installed; otherwise it becomes an
    image chunk)."""
    import io
    import textwrap

    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    out = io.BytesIO()
    canvas = Canvas(out, pagesize=A4, invariant=True)  # invariant: no dates or random ids, same bytes every time
    width, height = A4
    y = height - 72
    canvas.setFont("Helvetica-Bold", 20)
    canvas.drawString(72, y, "Harbour pilot handbook")
    y -= 36
    for heading, paragraph in PILOT_PARAGRAPHS:
        canvas.setFont("Helvetica-Bold", 13)
        canvas.drawString(72, y, heading)
        y -= 20
        canvas.setFont("Helvetica", 11)
        for line in textwrap.wrap(paragraph, 85):
            canvas.drawString(72, y, line)
            y -= 15
        y -= 14
    canvas.setFont("Helvetica-Bold", 11)
    for row, cells in enumerate((("Tug", "Bollard pull (t)", "Station"), ("Maren", "60", "North quay"),
                                 ("Hekla", "75", "Turning basin"))):
        canvas.setFont("Helvetica-Bold" if row == 0 else "Helvetica", 11)
        for col, cell in enumerate(cells):
            canvas.drawString(72 + col * 150, y, cell)
        y -= 18
    canvas.showPage()
    canvas.drawImage(ImageReader(_scanned_page()), 0, 0, width, height)
    canvas.showPage()
    canvas.save()
    return out.getvalue()


#: Generated binary files: relative path -> function returning the bytes.
BINARY_FILES = {"slides/lighthouse-keepers.pptx": lighthouse_deck, "handbooks/harbour-pilot.pdf": pilot_handbook}


def write_corpus(out: Path) -> list[Path]:
    """Write every sample file under `out`; return the paths written."""
    written = []
    for relative, text in FILES.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    for relative, make in BINARY_FILES.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(make())
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write (default: data/sample)")
    args = parser.parse_args()
    for path in write_corpus(args.out):
        print(path.relative_to(args.out))


if __name__ == "__main__":
    main()
