"""What the guided structural proposer's model reads: one genome, its record, and the choices.

:func:`render_guided_prompt` writes the task, the parent program as its genome (channels with
their normalisations, fusion, feedback rounds), its per-task results against its own parent
and its lineage's lessons (:mod:`~embedding_ttc.search.prompts.lineage`), the catalogue of
parts (channels it lacks with why each might help, normalisations, fusions, refinements), and
the reply's JSON shape. The reply is decoded under the schema of
:func:`~embedding_ttc.search.structural.edits.edit_schema`, so the prompt explains
the choice and the grammar enforces its form.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.prompts.common import section, task_introduction
from embedding_ttc.search.prompts.lineage import lessons_section, results_section
from embedding_ttc.search.state import SearchState
from embedding_ttc.search.structural.catalogue import CHANNELS
from embedding_ttc.search.structural.edits import Edit
from embedding_ttc.search.structural.genome import (
    FUSION_LABELS,
    MAX_CHANNELS,
    MAX_ROUNDS,
    NORM_LABELS,
    REFINEMENTS,
    SHARES,
    Genome,
    fusion_label,
)

REPLY = """\
{"edit": {"op": "<op>", ...the op's fields},
 "hypothesis": "<one sentence: why this edit should raise nDCG@10, given the results above>"}
ops: add_channel {channel, normalisation} | drop_channel {channel} |
     swap_channel {channel, new_channel} | change_normalisation {channel, normalisation} |
     change_fusion {fusion} | add_round {refine} | drop_round {} | change_refine {refine}"""

REPLY_WITH_SHARE = REPLY.replace(
    '\n "hypothesis"', f'\n "share": <one of {", ".join(map(str, SHARES))}>,\n "hypothesis"', 1
)
"""The reply's shape when it also gives the convex fusion's share (between edit and reason)."""


def render_guided_prompt(
    state: SearchState,
    record: LedgerRecord,
    genome: Genome,
    offered: Sequence[str],
    open_edits: int | None = None,
    order_seed: int | None = None,
    menu: Sequence[tuple[Edit, str]] | None = None,
    keep: Sequence[str] = (),
    share: bool = False,
) -> str:
    """The prompt asking for one edit of ``genome``, the program of ``record``.

    ``offered``: the channels it may add (the catalogue lists those it lacks).
    ``open_edits``: how many edits the reply's schema admits, when it leaves out the edits
    that would repeat a program already tried (the prompt says so).
    ``order_seed``: shuffle the catalogue's channels with this seed, so that no channel is
    chosen for its place in the list (a small model favours the first options it reads);
    ``None`` keeps the registry's order.
    ``menu``: the edits on offer with their descriptions, when the reply's schema admits a
    sample of the open edits only (the prompt lists them; the reply chooses one).
    ``keep``: channels no edit may drop or swap out (the catalogue says so).
    ``share``: the reply also gives the convex fusion's share (the prompt says what it does).
    """
    if menu is not None:
        spent = f" Choose one of the {len(menu)} edits on offer."
    elif open_edits is not None:
        spent = (
            f" Edits that would repeat a program already tried are not offered ({open_edits} "
            "remain open)."
        )
    else:
        spent = ""
    parts = [
        task_introduction(
            state,
            "Choose the next change of one retrieval program",
            "a program fuses score channels (the cosine matrix S and others) so that nDCG@10 "
            "rises on every task. You choose one structural change; the program is written "
            "from it.",
        ),
        _genome_section(record, genome),
        results_section(state, record),
        lessons_section(state, record.program_id),
        _catalogue(genome, offered, state.views_collapsed, order_seed, keep),
        _menu(menu) if menu is not None else "",
        section(
            f"Your choice (generation {state.generation})",
            "Choose ONE edit of this program, guided by where its last change helped or hurt "
            f"and by the lessons.{spent}{_share_note(genome) if share else ''} Reply with JSON "
            "only:\n" + (REPLY_WITH_SHARE if share else REPLY),
            spaced=False,
        ),
    ]
    return "\n\n".join(p for p in parts if p) + "\n"


def _share_note(genome: Genome) -> str:
    now = f"it is now {genome.share}" if genome.fusion == "convex" else "it fuses otherwise now"
    return (
        " Also give the share: in a convex combination the channels after the first weigh "
        "`share` in all and the first weighs 1 - share. It sets the share of the program your "
        f"edit makes when that program fuses by a convex combination ({now}), and is ignored "
        "otherwise."
    )


def _genome_section(record: LedgerRecord, genome: Genome) -> str:
    mean = f"{record.mean_delta:+.4f}" if record.mean_delta is not None else "n/a"
    lines = [f"- {name}: {CHANNELS[name].label}, {NORM_LABELS[norm]} ({norm})"
             for name, norm in genome.channels]  # fmt: skip
    lines.append(f"fusion: {fusion_label(genome)} ({genome.fusion})")
    rounds = f"{genome.rounds} ({genome.refine})" if genome.rounds else "0"
    lines.append(f"feedback rounds: {rounds}")
    title = f"The program: {record.program_id} (mean Δ {mean}), channels and parts"
    return section(title, "\n".join(lines), spaced=False)


def _catalogue(
    genome: Genome,
    offered: Sequence[str],
    views_collapsed: bool,
    order_seed: int | None,
    keep: Sequence[str] = (),
) -> str:
    absent = [c for c in offered if c not in genome.names]
    if order_seed is not None:
        random.Random(order_seed).shuffle(absent)
    kept = f"; it always keeps {', '.join(keep)}" if keep else ""
    lines = [f"Channels it lacks (it may hold {MAX_CHANNELS}, and keeps at least 2{kept}):"]
    lines += [f"- {c}: {CHANNELS[c].label}; {CHANNELS[c].rationale}" for c in absent]
    if views_collapsed:
        lines.append("(This encoder has one realisation for every view: channels scored under "
                     "another view would equal S, so none is offered.)")  # fmt: skip
    lines.append("Normalisations: " + "; ".join(f"{k} = {v}" for k, v in NORM_LABELS.items()))
    lines.append("Fusions: " + "; ".join(f"{k} = {v}" for k, v in FUSION_LABELS.items()))
    lines.append(
        f"Feedback rounds (at most {MAX_ROUNDS}) refine each query from its fused top-K by "
        + ", ".join(REFINEMENTS)
    )
    return section("What it can change", "\n".join(lines), spaced=False)


def _menu(menu: Sequence[tuple[Edit, str]]) -> str:
    lines = [f"- {json.dumps(edit)}: {label}" for edit, label in menu]
    return section("The edits on offer", "\n".join(lines), spaced=False)
