"""Texts each library program asks the encoder for, per query and document of a task.

The sandbox's encoder budget (``--encode-budget``, :class:`SandboxLimits.encode_texts_per_item`)
is sized from this: a call over |Q| queries and |D| documents may have the parent encode at most
``budget * (|Q| + |D|)`` texts. For each task and each library program this runs the program
through the evaluator (the on-disk embedding cache makes a second run cheap) and prints its
program-stage texts divided by the task's base texts ``|Q| + |D|``, then the largest, and the
default that the margin (:data:`MARGIN`) derives from it.

On the packaged tasks (the default) the largest is 9.3 (LexicalHybridRRF and CrossRoundRRF on
aila_statutes, measured 2026-11-28); the default budget is sized from the long AILA case
documents of a data root, where the same programs ask for 52.7 (measured again here on
2026-11-28: ``max_texts_per_item=52.66 program=LexicalHybridRRF task=aila_casedocs margin=2
default=112``):

    .venv/bin/python benchmarks/encode_budget.py
    .venv/bin/python benchmarks/encode_budget.py --tasks aila_casedocs --data-dir DATA
"""

from __future__ import annotations

import argparse
import math

from embedding_ttc.encoders.catalog import DEFAULT_ENCODER
from embedding_ttc.encoders.named import NamedEncoder
from embedding_ttc.evaluation.evaluate import evaluate_programs
from embedding_ttc.programs.catalog import PROGRAMS, get_program
from embedding_ttc.tasks.catalog import find_data_root, load_task
from embedding_ttc.tasks.packaged import PACKAGED_TASKS

MARGIN = 2.0
"""The default is the largest measured texts per item times this, rounded up to a multiple of 8."""


def main() -> None:
    """Print texts per item of every library program on each task, the largest, and the default."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(PACKAGED_TASKS))
    parser.add_argument("--encoder", default=DEFAULT_ENCODER)
    parser.add_argument("--data-dir", help="the data root (default: as the command line finds it)")
    args = parser.parse_args()
    encoder = NamedEncoder(args.encoder).load()
    programs = [get_program(name) for name in PROGRAMS.names()]
    root = find_data_root(args.data_dir)
    worst = (0.0, "", "")
    print("task\tprogram\tbase texts\tprogram texts\ttexts per item")
    for name in args.tasks:
        task = load_task(name, root)
        for result in evaluate_programs(programs, task, encoder):
            base, extra = result.cost.base_calls, result.cost.program_calls
            per_item = extra / base if base else 0.0
            print(f"{name}\t{result.program}\t{base}\t{extra}\t{per_item:.2f}")
            worst = max(worst, (per_item, result.program, name))
    default = 8 * math.ceil(worst[0] * MARGIN / 8)
    print(
        f"max_texts_per_item={worst[0]:.2f} program={worst[1]} task={worst[2]} "
        f"margin={MARGIN:g} default={default}"
    )


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
