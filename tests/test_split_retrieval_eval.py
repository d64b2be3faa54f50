"""The retrieval benchmark's metrics (bench/retrieval_eval.py) on hand-computed spans."""

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "bench" / "retrieval_eval.py"
_spec = importlib.util.spec_from_file_location("retrieval_eval", _PATH)
assert _spec and _spec.loader
ev = importlib.util.module_from_spec(_spec)
sys.modules["retrieval_eval"] = ev
_spec.loader.exec_module(ev)

Q = ev.Question("q", "a", ((10, 20), (30, 40)))


def test_recall_precision_iou_count_each_character_once_and_other_corpora_only_in_the_denominator() -> None:
    retrieved = [("a", (0, 15)), ("a", (35, 50)), ("b", (0, 100)), ("a", (12, 18))]
    recall, precision, iou = ev.retrieval_scores(Q, retrieved)
    # hits = (10,18) ∪ (35,40) = 13 characters; retrieved 15+15+100+6 = 136; missed (18,20),(30,35) = 7.
    assert recall == pytest.approx(13 / 20)
    assert precision == pytest.approx(13 / 136)
    assert iou == pytest.approx(13 / 143)


def test_a_chunk_of_another_corpus_at_the_same_offsets_is_no_hit() -> None:
    assert ev.retrieval_scores(Q, [("b", (10, 20))]) == (0.0, 0.0, 0.0)


def test_precision_omega_over_every_chunk_that_meets_a_reference() -> None:
    assert ev.precision_omega(Q, [(0, 15), (15, 25), (25, 35), (35, 50)]) == pytest.approx(20 / 50)
    # Touching is not meeting: only (10,20) and (30,40) count.
    assert ev.precision_omega(Q, [(0, 10), (10, 20), (20, 30), (30, 40)]) == pytest.approx(1.0)
    # Uncovered reference parts join the denominator: hits (10,12)+(30,40); (0,12)∪(12,20)∪(30,40).
    assert ev.precision_omega(Q, [(0, 12), (30, 40)]) == pytest.approx(12 / 30)
    assert ev.precision_omega(Q, [(50, 60)]) == 0.0


def test_interval_helpers_and_the_summary() -> None:
    assert ev.union([(5, 8), (0, 3), (2, 4), (8, 9), (7, 7)]) == [(0, 4), (5, 9)]
    assert ev.subtract([(0, 10)], [(2, 3), (5, 12)]) == [(0, 2), (3, 5)]
    assert ev.mean_std([0.5, 1.0]) == pytest.approx((75.0, 25.0))


def test_the_shared_benchmark_loads_and_its_references_match(eval_dir: Path) -> None:
    bench = ev.load_benchmark(eval_dir / "chroma")
    assert len(bench.questions) == 472
    assert set(bench.corpora) == {"state_of_the_union", "wikitexts", "chatlogs", "finance", "pubmed"}
    assert sum(len(q.references) for q in bench.questions) == 790
