"""Slow end-to-end reproduction of published numbers with the packaged all-MiniLM-L6-v2.

MTEB's published nDCG@10: SciFact .6451, AILACasedocs .1972, AILAStatutes .2052. Our
aila_statutes measures .2018 with the packaged model (the published number is 0.0034 higher; the
shared README reports the same measurement), inside the 0.01 tolerance.
"""

from pathlib import Path

import pytest

from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.evaluation.evaluate import evaluate
from embedding_ttc.programs.p0 import P0
from embedding_ttc.tasks.catalog import load_task


@pytest.mark.slow
@pytest.mark.parametrize(
    "task, published, tolerance",
    [("scifact", 0.6451, 0.004), ("aila_casedocs", 0.1972, 0.01), ("aila_statutes", 0.2052, 0.01)],
)
def test_p0_matches_published_mteb(shared_datasets: Path, task, published, tolerance):
    result = evaluate(P0(), load_task(task, shared_datasets), load_encoder("all-MiniLM-L6-v2"))
    assert result.ndcg_at_10 == pytest.approx(published, abs=tolerance)
