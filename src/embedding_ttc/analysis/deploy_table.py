"""The table a search engineer reads first: what each second stage buys held out, and costs served.

The headline (:mod:`embedding_ttc.analysis.headline`: cells won against each fusion baseline,
median Δ, cells significantly below P0, deep losses, ``c`` with its index-time part and
``c_q``) with, per program, the median milliseconds of one ``/v1/rerank`` request at each
candidate count of the latency record measured beside the matrix
(:mod:`embedding_ttc.analysis.latency`). Present when the matrix has both. Its rows: the
headline's programs a user weighs first (P0, BM25, the fusion baselines, LexicalHybridRRF;
one the record did not time shows ``–``), then the matrix's other programs the record timed
(a search's pick); the rest of a search's frontier stays in the headline. Pure computation;
the grid renders as the report's other tables do.
"""

from __future__ import annotations

from embedding_ttc.analysis.headline import HEADLINE_PROGRAMS
from embedding_ttc.analysis.latency import LatencyRecord
from embedding_ttc.evaluation.grid import Grid


def deploy_grid(headline: Grid | None, latency: LatencyRecord | None) -> Grid | None:
    """The ``headline`` grid with ``latency``'s columns (``None`` without both)."""
    if headline is None or latency is None:
        return None
    sizes = latency.candidate_counts
    timed = {r.program for r in latency.rows}
    rows = tuple(
        (*row, *(latency.median_ms(str(row[0]), n) for n in sizes))
        for row in headline.rows
        if row[0] in HEADLINE_PROGRAMS or row[0] in timed
    )
    threads = f"{latency.threads} thread" + ("s" if latency.threads != 1 else "")
    return Grid(
        f"Which second stage to deploy: held out against every fusion baseline, and served "
        f"(median ms of one {latency.route} request over {latency.queries} queries of "
        f"{latency.task}, an index of {latency.docs:,} documents, {latency.encoder}, {threads})",
        (*headline.header, *(f"{latency.route} ms, {n:,} candidates" for n in sizes)),
        rows,
        (*headline.formats, *["{:.1f}"] * len(sizes)),
    )
