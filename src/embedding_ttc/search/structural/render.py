"""Rendering a genome as an ordinary program file (header docstring, imports, ``program``).

The body computes each channel under its normalisation (module ``normalise``), fuses them,
then runs the feedback rounds. After reciprocal rank fusion a round fuses the fused scores
and the rescored query by RRF again; after a score fusion (z-sum, weighted or convex) it adds
their row z-scores, so every fusion composes with every normalisation and round count.
"""

from __future__ import annotations

from collections.abc import Mapping

from embedding_ttc.search.structural.builder import ProgramBuilder, use_rocchio
from embedding_ttc.search.structural.catalogue import CHANNELS
from embedding_ttc.search.structural.genome import Genome, fusion_label
from embedding_ttc.search.structural.normalise import RENDERER, normalised

AUX_WEIGHT = 0.5
"""Weight of every channel after the first in the weighted-sum fusion."""

# Constants of the generated programs, global and never tuned per task (constraint 2).
CONSTANTS: Mapping[str, str] = {
    "FEEDBACK_K": "5",  # feedback documents per query (VPRF's and Rocchio's usual 3 to 10)
    "ROCCHIO_BETA": "0.6",  # weight of the positive centroid (Rocchio 1971: beta > gamma)
    "ROCCHIO_GAMMA": "0.2",  # weight of the negative centroid
    "VPRF_BETA": "0.3",  # VPRF interpolation (inside the paper's App. D grid 0.1..0.7)
    "SOFT_ALPHA": "0.5",  # SoftCentroid's centroid weight (paper App. D default)
    "SOFT_TAU": "1.0",  # softmax temperature over row z-scores (unit spread)
    "NORM_FLOOR": "1e-12",  # smallest norm divided by when renormalising a prefix
    "LOCAL_K": "20",  # the dense head a candidate-local z-score takes its statistics from
    "CONSENSUS_K": "10",  # the dense head a document's consensus is measured against
}


def _fuse(genome: Genome, b: ProgramBuilder) -> None:
    if genome.fusion == "rrf":
        b.need("scores", "rrf", "RRF_K")
        b.lines("fused = rrf(channels, mask=mask, k=RRF_K)")
    elif genome.fusion == "zsum":
        b.need("scores", "zscore_rows")
        b.lines(
            "fused = np.zeros((n_q, n_d), dtype=np.float32)",
            "for channel in channels:",
            "    fused += zscore_rows(channel, mask)",
        )
    elif genome.fusion == "wsum":
        weights = ", ".join(["1.0"] + [str(AUX_WEIGHT)] * (len(genome.channels) - 1))
        b.constants.append(f"CHANNEL_WEIGHTS = ({weights})")
        b.lines(
            "fused = np.zeros((n_q, n_d), dtype=np.float32)",
            "for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):",
            "    fused += np.float32(weight) * channel",
        )
    else:
        # A convex combination (Bruch et al. 2023 find it beats RRF once the channels are
        # normalised): the first channel weighs 1 - FUSION_SHARE, the others split the share.
        b.constants.append(f"FUSION_SHARE = {genome.share}")
        b.lines(
            "fused = np.float32(1.0 - FUSION_SHARE) * channels[0]",
            "for channel in channels[1:]:",
            "    fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel",
        )


def _feedback_round(genome: Genome, round_no: int, b: ProgramBuilder) -> None:
    b.lines(f"# feedback round {round_no}: refine the query from the fused top-K, rescore D")
    if genome.refine == "rocchio":
        b.lines(f"query = {use_rocchio(b)}(query, D, fused, mask)")
    elif genome.refine == "softcentroid":
        b.need("feedback", "soft_centroid_query")
        b.need("scores", "zscore_rows")
        b.constant("FEEDBACK_K", "SOFT_TAU", "SOFT_ALPHA")
        b.lines(
            "query = soft_centroid_query(",
            "    query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, "
            "alpha=SOFT_ALPHA, mask=mask",
            ")",
        )
    else:
        b.need("feedback", "vprf_update")
        b.need("scores", "top_k_indices")
        b.constant("FEEDBACK_K", "VPRF_BETA")
        b.lines("query = vprf_update(query, D, top_k_indices(fused, FEEDBACK_K, mask), VPRF_BETA)")
    if genome.fusion == "rrf":
        b.lines("fused = rrf([fused, query @ D.T], mask=mask, k=RRF_K)")
    else:
        b.need("scores", "zscore_rows")
        b.lines("fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)")


def render_program(
    genome: Genome,
    *,
    novelty: str = "",
    hypothesis: str = "",
    parent_id: str | None = None,
    renderer: int = RENDERER,
) -> str:
    """The program file of ``genome``, with its header docstring.

    Args:
        genome: the genome.
        novelty: the header's ``Novelty:`` sentence.
        hypothesis: the header's ``Hypothesis:`` sentence.
        parent_id: the header's ``Parent:`` id (``None`` renders ``none``).
        renderer: the renderer's version (``normalise.RENDERERS``): the current one for a new
            program, 1 to re-render a genome committed under version 1 as it was written.

    Returns:
        Python source defining ``program(Q, D, S, ctx)``.

    """
    b = ProgramBuilder()
    b.need("scores", "candidate_mask")
    b.lines("n_q, n_d = S.shape", "mask = candidate_mask(n_q, n_d, ctx.candidates)")
    exprs = []
    for name, norm in genome.channels:
        exprs.append(normalised(CHANNELS[name].emit(b), norm, b, renderer))
    b.lines("channels = [", *(f"    {e}," for e in exprs), "]")
    _fuse(genome, b)
    if genome.rounds:
        b.lines("query = Q")
    for round_no in range(1, genome.rounds + 1):
        _feedback_round(genome, round_no, b)
    b.lines(
        "if mask is not None:",
        "    fused = np.where(mask, fused, 0.0)",
        "return fused.astype(np.float32)",
    )
    return _assemble(genome, b, novelty, hypothesis, parent_id)


def _assemble(
    genome: Genome, b: ProgramBuilder, novelty: str, hypothesis: str, parent_id: str | None
) -> str:
    title = (
        f"Structural program: {' + '.join(genome.names)} by {fusion_label(genome)}, "
        f"{genome.rounds} feedback round{'s' if genome.rounds != 1 else ''}."
    )
    header = [
        '"""' + title,
        "",
        f"Novelty: {novelty}",
        f"Hypothesis: {hypothesis}",
        f"Parent: {parent_id or 'none'}",
        f"Genome: {genome.to_json()}",
        '"""',
    ]
    out = [*header, "", "import numpy as np", ""]
    for module in sorted(b.imports):
        names = sorted(b.imports[module], key=lambda n: (not n.isupper(), n.lower()))
        line = f"from {module} import {', '.join(names)}"
        if len(line) <= 100:
            out.append(line)
        else:
            out += [f"from {module} import (", *(f"    {n}," for n in names), ")"]
    constants = [f"{n} = {CONSTANTS[n]}" for n in b.constants if n in CONSTANTS]
    constants += [c for c in b.constants if c not in CONSTANTS]
    if constants:
        out += ["", *constants]
    for helper in sorted(b.helpers):
        out += ["", "", b.helpers[helper].rstrip()]
    out += ["", "", "def program(Q, D, S, ctx):"]
    out += [f"    {line}" if line else "" for line in b.body]
    return "\n".join(out) + "\n"
