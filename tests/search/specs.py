"""Proposer specs and run configurations for tests (the defaults ``search`` would give)."""

from __future__ import annotations

from embedding_ttc.programs.catalog import REFERENCE_PROGRAM
from embedding_ttc.runs.config import ProposerSpec, RunConfig
from embedding_ttc.runs.split import VALIDATION_SHARE, SplitSettings
from embedding_ttc.search.strategies import get_strategy


def spec(strategy: str, backend: str | None = None, **options: object) -> ProposerSpec:
    """The spec of ``strategy`` over ``backend`` with ``options`` (the rest: the defaults)."""
    chosen = get_strategy(strategy)
    record = chosen.read_options(options)
    return ProposerSpec(strategy=strategy, backend=backend, options=chosen.write_options(record))


def run_config(
    tasks: list[str],
    proposer: ProposerSpec | None = None,
    *,
    encoder: str = "tokenlearn-static-64",
    **fields: object,
) -> RunConfig:
    """A run on ``tasks`` with ``search``'s defaults (seed 0, a 0.3 split, BM25DenseRRF)."""
    settings: dict[str, object] = {
        "suite": "discovery",
        "tasks": tasks,
        "encoder": encoder,
        "proposer": proposer or spec("structural"),
        "model": None,
        "seed": 0,
        "shortlist": None,
        "split": SplitSettings(validation_share=VALIDATION_SHARE),
        "reference": REFERENCE_PROGRAM,
        **fields,
    }
    return RunConfig.model_validate(settings)
