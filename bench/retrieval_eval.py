"""The metrics of Chroma's chunking-evaluation benchmark (`../shared/eval/chroma/README.md`).

Spans are half-open character ranges `(start, end)` into a corpus. For one question with
reference spans R and retrieved chunks C1..Ck (each tagged with its corpus):

- hits = the union of all intersections Ci ∩ r (only chunks of the question's corpus count);
- recall = |hits| / sum |r|;
- precision = |hits| / sum |Ci| over all k retrieved chunks, other corpora's included;
- IoU = |hits| / (sum |Ci| + |R without hits|);
- precision_Ω (no retrieval): over every chunk of the corpus that meets a reference,
  |union of C ∩ r| / |union of those chunks and the uncovered parts of R|; 0 when none meets.

Intersections count only when they are non-empty (a chunk that merely touches a reference at
its end point does not "meet" it).
"""

import csv
import json
import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

Span = tuple[int, int]


@dataclass(frozen=True)
class Question:
    text: str
    corpus_id: str
    references: tuple[Span, ...]


@dataclass(frozen=True)
class Benchmark:
    corpora: dict[str, str]
    questions: tuple[Question, ...]


def load_benchmark(folder: Path) -> Benchmark:
    """The five corpora and 472 questions; checks every reference against its corpus."""
    corpora = {p.stem: p.read_text(encoding="utf-8") for p in sorted((folder / "corpora").glob("*.md"))}
    questions: list[Question] = []
    with (folder / "questions_df.csv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            refs = json.loads(row["references"])
            corpus = corpora[row["corpus_id"]]
            spans = tuple((int(r["start_index"]), int(r["end_index"])) for r in refs)
            for (s, e), r in zip(spans, refs, strict=True):
                if corpus[s:e] != r["content"]:
                    raise ValueError(f"reference {s}:{e} of {row['corpus_id']} does not match its content")
            questions.append(Question(row["question"], row["corpus_id"], spans))
    return Benchmark(corpora, tuple(questions))


def union(spans: Iterable[Span]) -> list[Span]:
    """Sorted, merged, non-empty spans covering the same characters."""
    out: list[list[int]] = []
    for s, e in sorted(x for x in spans if x[0] < x[1]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def total(spans: Iterable[Span]) -> int:
    return sum(e - s for s, e in spans)


def intersect(a: Span, b: Span) -> Span | None:
    s, e = max(a[0], b[0]), min(a[1], b[1])
    return (s, e) if s < e else None


def subtract(spans: Sequence[Span], cut: Sequence[Span]) -> list[Span]:
    """The parts of `spans` outside `cut` (both taken as sets of characters)."""
    cut = union(cut)
    out: list[Span] = []
    for s, e in union(spans):
        pos = s
        for cs, ce in cut:
            if ce <= pos or cs >= e:
                continue
            if cs > pos:
                out.append((pos, cs))
            pos = max(pos, ce)
        if pos < e:
            out.append((pos, e))
    return out


def retrieval_scores(question: Question, retrieved: Sequence[tuple[str, Span]]) -> tuple[float, float, float]:
    """(recall, precision, IoU) of one question given its k retrieved (corpus_id, span) chunks."""
    hits = union(
        x
        for corpus_id, chunk in retrieved
        if corpus_id == question.corpus_id
        for ref in question.references
        if (x := intersect(chunk, ref)) is not None
    )
    found = total(hits)
    retrieved_size = sum(e - s for _, (s, e) in retrieved)
    missed = total(subtract(question.references, hits))
    recall = found / total(question.references)
    precision = found / retrieved_size if retrieved_size else 0.0
    iou = found / (retrieved_size + missed) if retrieved_size + missed else 0.0
    return recall, precision, iou


def precision_omega(question: Question, corpus_chunks: Sequence[Span]) -> float:
    """precision_Ω of one question over all chunks of its corpus (sorted by start)."""
    starts = [s for s, _ in corpus_chunks]
    met: list[Span] = []
    hits: list[Span] = []
    longest = max((e - s for s, e in corpus_chunks), default=0)
    for ref in question.references:
        # Chunks that can meet `ref` start before its end and no earlier than its start minus the longest chunk.
        lo = bisect_left(starts, ref[0] - longest)
        hi = bisect_left(starts, ref[1])
        for chunk in corpus_chunks[lo:hi]:
            if (x := intersect(chunk, ref)) is not None:
                met.append(chunk)
                hits.append(x)
    if not hits:
        return 0.0
    hits = union(hits)
    denominator = union(met + subtract(question.references, hits))
    return total(hits) / total(denominator)


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and population standard deviation, ×100 (the published tables' scale)."""
    n = len(values)
    mean = sum(values) / n
    return 100 * mean, 100 * math.sqrt(sum((v - mean) ** 2 for v in values) / n)
