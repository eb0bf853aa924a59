"""OpenEvolve's evaluator for embedding-ttc's program search: our judge, our ledger.

OpenEvolve calls ``evaluate(program_path)`` once per candidate. The candidate is judged as one
generation of the same :class:`~embedding_ttc.search.loop.SearchLoop` that ``embedding-ttc
search`` builds (:func:`embedding_ttc.search.open.open_search`): the static checks, the
novelty test, the sandbox, the evaluation on every discovery task and the ledger line are the
loop's own (:func:`embedding_ttc.search.external.evaluate_external`), with ``openevolve`` as
the proposer. The run directory then reads like one of ours: ``embedding-ttc frontier RUN_DIR
--rule transfer`` admits OpenEvolve's programs by the same rule.

What goes back to OpenEvolve is what our proposers are guided by, nothing more:

* ``combined_score`` = 1 + the program's mean Δ nDCG@10 over tasks on the SEARCH part of each
  task's split, against the reference program (``LedgerRecord.seen_by_proposer("reference")``).
  The Δ lies in [-1, 1], so the score lies in [0, 2] and orders programs exactly as the Δ does;
  the offset keeps a failure's 0.0 (and OpenEvolve's own 0.0 for an evaluation that raised or
  timed out) below every evaluated program, P0 included (its Δ against the reference is
  negative: -0.10 on the discovery suite).
* ``search_delta`` (that Δ) and ``cost_ratio``, which our proposers also read.
* On a failure: ``combined_score`` 0.0, with ``status`` and ``reason`` (the loop's).

Nothing else: OpenEvolve shows every metric to its model, and a 0.5B model copied the names
of a smoke run's extra fields (``status``, ``program_id``) into its programs as variables. The
validation part's numbers are in the ledger and never returned here. OpenEvolve keeps each
program's code, and the ledger keeps each source: the two are joined by text.

OpenEvolve's initial program (``initial_program.py``, as written) is the run's reference,
BM25DenseRRF, in the search-program form our edit proposer starts from
(:data:`~embedding_ttc.search.strategies.edit.seeds.SEEDS`): both searches start from the same
program. It is given the reference's numbers (Δ 0 against itself, the reference's cost
ratio; :func:`~embedding_ttc.search.external.reference_seen`) and adds no ledger line, as the
edit proposer's seed adds none. Any other text goes through the loop, so a model's copy of
the seed is a rejected near-duplicate (the seed's structure is registered), as it would be
for our proposers.

Settings (those of ``results/search-transfer/search.json``): the discovery suite,
all-MiniLM-L6-v2, seed 0, validation share 0.3, reference BM25DenseRRF, objective reference.
The environment names the run:

* ``EMBEDDING_TTC_OE_RUN_DIR`` (required): the run directory (ledger, programs, search.json).
* ``EMBEDDING_TTC_OE_TASKS``: comma-separated tasks instead of the suite (``aila_statutes,
  limit-small`` for a smoke run; then no task is held aside whole).
* ``EMBEDDING_TTC_OE_ENCODER``: another encoder (default all-MiniLM-L6-v2).
* ``EMBEDDING_TTC_OE_DATA_DIR``: the data root the tasks are found in (default: the usual places).
* ``EMBEDDING_TTC_OE_MODEL``: the model OpenEvolve's LLM is, recorded in ``search.json`` and
  on each record.

The loop is built once per process (OpenEvolve evaluates its initial program in its
controller and the rest in worker processes) and kept for the process's life.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.config import ProposerSpec, RunConfig
from embedding_ttc.runs.split import SplitSettings
from embedding_ttc.search.external import (
    HandedOver,
    evaluate_external,
    recorded_p0,
    reference_seen,
)
from embedding_ttc.search.loop import SearchLoop
from embedding_ttc.search.open import SearchSetup, open_search
from embedding_ttc.tasks.catalog import suite_tasks, suite_validation_tasks

PROPOSER = "openevolve"
INITIAL_PROGRAM = Path(__file__).with_name("initial_program.py")
SUITE = "discovery"
ENCODER = "all-MiniLM-L6-v2"
VALIDATION_SHARE = 0.3
REFERENCE = "BM25DenseRRF"
SCORE_OFFSET = 1.0
FAILURE_SCORE = 0.0

_loop: SearchLoop | None = None
_stack = ExitStack()
atexit.register(_stack.close)


def search_settings(environ: Mapping[str, str]) -> tuple[RunConfig, SearchSetup]:
    """The configuration and setup of the run the environment names."""
    run_dir = environ.get("EMBEDDING_TTC_OE_RUN_DIR")
    if not run_dir:
        raise RuntimeError("EMBEDDING_TTC_OE_RUN_DIR is not set: name the run directory")
    named = [t.strip() for t in environ.get("EMBEDDING_TTC_OE_TASKS", "").split(",") if t.strip()]
    data_dir = environ.get("EMBEDDING_TTC_OE_DATA_DIR")
    config = RunConfig(
        suite=SUITE,
        tasks=named or suite_tasks(SUITE),
        encoder=environ.get("EMBEDDING_TTC_OE_ENCODER") or ENCODER,
        proposer=ProposerSpec(strategy="external", options={"peer": PROPOSER}),
        model=environ.get("EMBEDDING_TTC_OE_MODEL") or None,  # a resume must name the same
        seed=0,
        shortlist=None,
        split=SplitSettings(
            validation_share=VALIDATION_SHARE,
            validation_tasks=[] if named else suite_validation_tasks(SUITE),
        ),
        reference=REFERENCE,
        objective="reference",
        limits=None,  # as recorded, else the defaults
    )
    setup = SearchSetup(run_dir=Path(run_dir), data_dir=Path(data_dir) if data_dir else None)
    return config, setup


def _the_loop() -> SearchLoop:
    global _loop
    if _loop is None:
        config, setup = search_settings(os.environ)
        _loop = _stack.enter_context(
            open_search(
                config, setup, make_proposer=lambda _precheck: HandedOver(PROPOSER), say=print
            )
        )
    return _loop


def evaluate(program_path: str) -> dict[str, Any]:
    """Judge one candidate through the loop; what OpenEvolve may see of its outcome."""
    loop = _the_loop()
    source = Path(program_path).read_text(encoding="utf-8")
    if source == INITIAL_PROGRAM.read_text(encoding="utf-8"):
        recorded_p0(loop)  # generation 0 first, as in every run directory
        delta, cost_ratio = reference_seen(loop)
        return {
            "combined_score": SCORE_OFFSET + delta,
            "search_delta": delta,
            "cost_ratio": cost_ratio,
        }
    model = os.environ.get("EMBEDDING_TTC_OE_MODEL", "")
    record = evaluate_external(loop, source, proposer=PROPOSER, model=model)
    if record.status is not Status.OK:
        return {
            "combined_score": FAILURE_SCORE,
            "status": record.status.value,
            "reason": record.reason,
        }
    seen = record.seen_by_proposer(loop.objective)
    delta = float(seen.mean_delta or 0.0)
    return {
        "combined_score": SCORE_OFFSET + delta,
        "search_delta": delta,
        "cost_ratio": float(seen.cost_ratio or 1.0),
    }
