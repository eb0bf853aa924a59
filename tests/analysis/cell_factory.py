"""A hand-made transfer cell for the table, figure and report tests."""

from __future__ import annotations

from embedding_ttc.analysis.cells import BootstrapStats, Cell
from embedding_ttc.evaluation.comparison import WTL, Comparison


def cell(encoder, task, program, delta, sig=0, base=100, prog=0, baseline=0.5, p=None):
    """A one-query cell whose Δ is ``delta``; ``sig`` = +1 significant win, -1 loss.

    ``p`` is the bootstrap p-value (default 0.01 for a significant cell, else 0.5).
    """
    return Cell(
        encoder=encoder,
        encoder_revision="r",
        task=task,
        program=program,
        n_queries=1,
        comparison=Comparison(
            ndcg_at_10=baseline + delta,
            baseline_ndcg_at_10=baseline,
            delta_ndcg_at_10=delta,
            wtl=WTL.count([delta]),
        ),
        per_query={"q": baseline + delta},
        baseline_per_query={"q": baseline},
        cost_ratio=(base + prog) / base,
        query_time_cost_ratio=1.0,
        base_calls=base,
        program_calls=prog,
        index_calls=base,
        query_calls=prog,
        encode_seconds=1.0,
        forward_seconds=1.0,
        algebra_seconds=0.1,
        total_seconds=2.0,
        bootstrap=BootstrapStats(
            resamples=1000,
            base_seed=0,
            seed=1,
            ci_low=0.001 if sig > 0 else -0.5,
            ci_high=-0.001 if sig < 0 else 0.5,
            p_value=p if p is not None else (0.01 if sig else 0.5),
            significant_win=sig > 0,
            significant_loss=sig < 0,
        ),
    )


def smoke_transfer_argv(out, data, *extra, programs="P0,SoftCentroid"):
    """``transfer`` on the smoke suite's aila_statutes with the 64-d static encoder (seconds)."""
    return [
        "transfer",
        "--suite", "smoke",
        "--task", "aila_statutes",
        "--encoders", "tokenlearn-static-64",
        "--programs", programs,
        "--discovery-suite", "none",
        "--out", str(out),
        "--bootstrap", "100",
        "--data-dir", str(data),
        *extra,
    ]  # fmt: skip
