"""Structural mutations of a genome: add, remove or swap a channel, change a part.

A step of the convex fusion's share changes a constant only, which the novelty check
(constraint 5) abstracts away: alone it renders a duplicate of its parent's structure, so the
proposer keeps stacking mutations and the step lands together with a structural change.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from embedding_ttc.search.structural.catalogue import CHANNELS
from embedding_ttc.search.structural.edits import apply_share
from embedding_ttc.search.structural.genome import (
    FUSIONS,
    MAX_CHANNELS,
    MAX_ROUNDS,
    NORM_LABELS,
    NORMALISATIONS,
    REFINEMENTS,
    SHARES,
    Genome,
    fusion_label,
)

Mutation = Callable[[Genome, random.Random], tuple[Genome, str] | None]


def _with_channels(g: Genome, channels: dict[str, str]) -> Genome:
    return Genome.make(channels, g.fusion, g.rounds, g.refine, g.share)


def _add_channel(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    absent = [c for c in CHANNELS if c not in g.names]
    if len(g.channels) >= MAX_CHANNELS or not absent:
        return None
    name, norm = rng.choice(absent), rng.choice(NORMALISATIONS)
    label = f"adds {CHANNELS[name].label} ({NORM_LABELS[norm]})"
    return _with_channels(g, {**dict(g.channels), name: norm}), label


def _remove_channel(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    if len(g.channels) <= 2:
        return None
    name = rng.choice(g.names)
    kept = {c: n for c, n in g.channels if c != name}
    return _with_channels(g, kept), f"drops {CHANNELS[name].label}"


def _swap_channel(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    absent = [c for c in CHANNELS if c not in g.names]
    if not absent:
        return None
    old, new = rng.choice(g.names), rng.choice(absent)
    channels = {c: n for c, n in g.channels if c != old}
    channels[new] = dict(g.channels)[old]
    label = f"replaces {CHANNELS[old].label} with {CHANNELS[new].label}"
    return _with_channels(g, channels), label


def _change_granularity(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    chunked = [c for c in g.names if CHANNELS[c].family == "chunk"]
    if not chunked:
        return None
    old = rng.choice(chunked)
    options = [c for c in CHANNELS if CHANNELS[c].family == "chunk" and c not in g.names]
    if not options:
        return None
    new = rng.choice(options)
    channels = {c: n for c, n in g.channels if c != old}
    channels[new] = dict(g.channels)[old]
    label = f"changes {CHANNELS[old].label} to {CHANNELS[new].label}"
    return _with_channels(g, channels), label


def _change_fusion(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    fusion = rng.choice([f for f in FUSIONS if f != g.fusion])
    share = rng.choice(SHARES) if fusion == "convex" else g.share
    changed = Genome.make(dict(g.channels), fusion, g.rounds, g.refine, share)
    return changed, f"fuses by {fusion_label(changed)} instead of {fusion_label(g)}"


def _step_share(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    """Move the convex fusion's share one step along the grid :data:`SHARES`."""
    if g.fusion != "convex":
        return None
    at = SHARES.index(g.share)
    return apply_share(g, SHARES[rng.choice([i for i in (at - 1, at + 1) if 0 <= i < len(SHARES)])])


def _toggle_local(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    """Add a candidate-local statistic (``local`` family) if absent, else remove it."""
    name = rng.choice([c for c in CHANNELS if CHANNELS[c].family == "local"])
    if name in g.names:
        if len(g.channels) <= 2:
            return None
        kept = {c: n for c, n in g.channels if c != name}
        return _with_channels(g, kept), f"drops {CHANNELS[name].label}"
    if len(g.channels) >= MAX_CHANNELS:
        return None
    norm = rng.choice(NORMALISATIONS)
    label = f"adds {CHANNELS[name].label} ({NORM_LABELS[norm]})"
    return _with_channels(g, {**dict(g.channels), name: norm}), label


def _add_round(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    if g.rounds >= MAX_ROUNDS:
        return None
    refine = g.refine if g.rounds else rng.choice(REFINEMENTS)
    label = f"adds feedback round {g.rounds + 1} ({refine} refinement of the fused top-K)"
    return Genome.make(dict(g.channels), g.fusion, g.rounds + 1, refine, g.share), label


def _remove_round(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    if g.rounds == 0:
        return None
    label = f"drops feedback round {g.rounds}"
    return Genome.make(dict(g.channels), g.fusion, g.rounds - 1, g.refine, g.share), label


def _change_refine(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    if g.rounds == 0:
        return None
    refine = rng.choice([r for r in REFINEMENTS if r != g.refine])
    return replace(g, refine=refine), f"refines the query by {refine} instead of {g.refine}"


def _change_norm(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    name = rng.choice(g.names)
    old = dict(g.channels)[name]
    norm = rng.choice([n for n in NORMALISATIONS if n != old])
    label = f"switches {CHANNELS[name].label} to {NORM_LABELS[norm]} (was {NORM_LABELS[old]})"
    return _with_channels(g, {**dict(g.channels), name: norm}), label


MUTATIONS: tuple[Mutation, ...] = (
    _add_channel,
    _remove_channel,
    _swap_channel,
    _change_granularity,
    _change_fusion,
    _step_share,
    _add_round,
    _remove_round,
    _change_refine,
    _change_norm,
    _toggle_local,
)
"""The structural mutations: each returns ``(genome, description)``, or ``None`` if inapplicable."""


def mutate(genome: Genome, rng: random.Random) -> tuple[Genome, str]:
    """One applicable mutation of ``genome``, chosen by ``rng``."""
    options = list(MUTATIONS)
    rng.shuffle(options)
    for mutation in options:
        result = mutation(genome, rng)
        if result is not None and result[0] != genome:
            return result
    raise RuntimeError("no mutation applies")  # unreachable: the fusion can always change
