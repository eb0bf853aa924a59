"""One chosen genome edit: the choices a parent genome allows, as a JSON schema, and applying one.

The guided structural proposer lets a language model choose the next structural change
instead of the random generator of :mod:`.mutate`. :func:`edit_schema` writes the JSON schema
of every edit the parent genome allows: an ``edit`` first, then a ``hypothesis`` sentence, so
the reason is written for the edit the grammar let through (written first, the 1.5B model's
reason kept naming an edit the schema no longer offered). The ``edit`` is one of

* ``add_channel`` (a channel the genome lacks, with a normalisation), when it has room;
* ``drop_channel`` (one it has), when it keeps two;
* ``swap_channel`` (one it has for one it lacks, keeping the normalisation);
* ``change_normalisation`` (of one it has, to another; one branch per channel);
* ``change_fusion`` (to another fusion; a convex one starts at the middle share);
* ``add_round`` (with a refinement when it has none), ``drop_round``, ``change_refine``.

Every value is a ``const`` or an ``enum`` of what applies, so a reply decoded under the schema's
grammar (llama.cpp turns JSON schemas into GBNF grammars) is an applicable edit by construction.
:func:`possible_edits` lists the edits one by one, so a caller can leave some out of the schema
(the guided proposer leaves out those whose result is a program already tried).
:func:`apply_edit` applies one and describes it as :mod:`.mutate` does; it checks the edit
again, for servers that do not enforce the schema. The convex share's grid step is not offered:
it changes a constant only, which the novelty check abstracts away. Instead, a schema made
with ``share=True`` asks for the convex share beside the edit (:func:`apply_share`): it sets the
share of the edited program when that program fuses by a convex combination, so a share moves
together with a structural change, as the structural proposer's stacked mutations move it.

``keep`` names channels no edit may drop or swap out (their normalisation may still change):
a guided run anchored on the dense cosine ``S`` keeps it in every program it writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from embedding_ttc.search.structural.catalogue import CHANNELS
from embedding_ttc.search.structural.genome import (
    DEFAULT_SHARE,
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

OPS: tuple[str, ...] = (
    "add_channel",
    "drop_channel",
    "swap_channel",
    "change_normalisation",
    "change_fusion",
    "add_round",
    "drop_round",
    "change_refine",
)

HYPOTHESIS_CHARS = 300
"""Longest hypothesis the schema admits (a sentence; it also bounds the decoding)."""


class GenomeEditError(ValueError):
    """An edit that the genome does not allow (the message says which part)."""


VIEW_FAMILY = "perspective"
"""The channels that score under another view (reversed perspective, cross-adapter view): with
an encoder whose views collapse they recompute S at the price of an index-time encode."""


def offered_channels(views_collapsed: bool) -> list[str]:
    """The channels an edit may add: all, less the view channels when the views collapse."""
    return [c for c in CHANNELS if not (views_collapsed and CHANNELS[c].family == VIEW_FAMILY)]


Edit = dict[str, str]
"""One edit as the model replies with it: ``{"op": ..., <the op's fields>}``."""


def possible_edits(
    genome: Genome, offered: Sequence[str] | None = None, keep: Sequence[str] = ()
) -> list[Edit]:
    """Every edit ``genome`` allows, one per distinct change (module docstring).

    ``offered``: the channels an edit may add or swap in (default every channel).
    ``keep``: channels no edit drops or swaps out.
    """
    present = list(genome.names)
    movable = [c for c in present if c not in keep]
    absent = [c for c in (offered if offered is not None else CHANNELS) if c not in present]
    edits: list[Edit] = []
    if absent and len(present) < MAX_CHANNELS:
        edits += [{"op": "add_channel", "channel": c, "normalisation": n}
                  for c in absent for n in NORMALISATIONS]  # fmt: skip
    if len(present) > 2:
        edits += [{"op": "drop_channel", "channel": c} for c in movable]
    if absent:
        edits += [{"op": "swap_channel", "channel": c, "new_channel": n}
                  for c in movable for n in absent]  # fmt: skip
    for name, norm in genome.channels:
        edits += [{"op": "change_normalisation", "channel": name, "normalisation": n}
                  for n in NORMALISATIONS if n != norm]  # fmt: skip
    edits += [{"op": "change_fusion", "fusion": f} for f in FUSIONS if f != genome.fusion]
    if genome.rounds < MAX_ROUNDS:
        refines = list(REFINEMENTS) if genome.rounds == 0 else [genome.refine]
        edits += [{"op": "add_round", "refine": r} for r in refines]
    if genome.rounds > 0:
        edits.append({"op": "drop_round"})
        edits += [{"op": "change_refine", "refine": r} for r in REFINEMENTS if r != genome.refine]
    return edits


def edit_schema(
    genome: Genome,
    offered: Sequence[str] | None = None,
    *,
    edits: Sequence[Edit] | None = None,
    keep: Sequence[str] = (),
    share: bool = False,
) -> dict[str, Any]:
    """The JSON schema of a reply choosing one of ``edits`` (module docstring).

    With ``share``, the reply also gives the convex fusion's ``share``, one of
    :data:`~embedding_ttc.search.structural.genome.SHARES`, between the edit and the
    hypothesis (:func:`apply_share`).

    ``edits`` defaults to every edit ``genome`` allows (:func:`possible_edits` with
    ``offered`` and ``keep``); a subset leaves the others out of the grammar, so a constrained
    reply cannot choose them. The edits are grouped into one branch per op and first field, the
    last field an ``enum``: a branch admits exactly the edits it was made from.

    Raises:
        ValueError: ``edits`` is empty (no reply could satisfy the schema).

    """
    chosen = possible_edits(genome, offered, keep) if edits is None else list(edits)
    if not chosen:
        raise ValueError("no edit to offer: the schema would admit no reply")
    branches: dict[tuple[str, ...], tuple[dict[str, Any], list[str]]] = {}
    for edit in chosen:
        fields = [k for k in edit if k != "op"]
        props: dict[str, Any] = {"op": {"const": edit["op"]}}
        props.update({k: {"const": edit[k]} for k in fields[:-1]})
        key = (edit["op"], *(edit[k] for k in fields[:-1]))
        branch, values = branches.setdefault(key, (props, []))
        if fields:
            values.append(edit[fields[-1]])
            branch[fields[-1]] = {"enum": values}
    options = [
        {"type": "object", "properties": props, "required": list(props)}
        for props, _ in branches.values()
    ]
    properties: dict[str, Any] = {"edit": {"anyOf": options}}
    if share:
        properties["share"] = {"enum": list(SHARES)}
    properties["hypothesis"] = {"type": "string", "maxLength": HYPOTHESIS_CHARS}
    return {"type": "object", "properties": properties, "required": list(properties)}


def apply_share(genome: Genome, share: Any) -> tuple[Genome, str]:
    """``genome`` with its convex fusion's share set to ``share``, and the change in words.

    A genome that does not fuse by a convex combination, or already has that share, comes back
    as it is, with no words.

    Raises:
        GenomeEditError: ``share`` is not on the grid
            :data:`~embedding_ttc.search.structural.genome.SHARES`.

    """
    if isinstance(share, bool) or not isinstance(share, int | float) or share not in SHARES:
        raise GenomeEditError(f"share must be one of {', '.join(map(str, SHARES))}, got {share!r}")
    if genome.fusion != "convex" or share == genome.share:
        return genome, ""
    changed = Genome.make(dict(genome.channels), "convex", genome.rounds, genome.refine, share)
    return changed, (
        f"moves the share of the channels after the first from {genome.share} to {changed.share}"
    )


def apply_edit(
    genome: Genome, edit: Mapping[str, Any], keep: Sequence[str] = ()
) -> tuple[Genome, str]:
    """``genome`` with ``edit`` applied, and the change in words.

    ``keep``: channels the edit may not drop or swap out.

    Raises:
        GenomeEditError: an unknown op, a missing or inapplicable value, or a kept channel
            dropped or swapped out.

    """
    op = edit.get("op")
    if op in ("drop_channel", "swap_channel") and edit.get("channel") in keep:
        raise GenomeEditError(
            f"{op}: the run keeps {edit.get('channel')!r} in every program; choose another channel"
        )
    if op in ("add_channel", "drop_channel", "swap_channel", "change_normalisation"):
        return _channel_edit(genome, str(op), edit)
    if op in ("change_fusion", "add_round", "drop_round", "change_refine"):
        applied = _shape_edit(genome, str(op), edit)
        if applied is not None:
            return applied
    raise GenomeEditError(f"the edit {op!r} does not apply to this genome; choose from {OPS}")


def _value(edit: Mapping[str, Any], op: str, key: str, allowed: list[str] | tuple[str, ...]) -> str:
    got = edit.get(key)
    if got not in allowed:
        raise GenomeEditError(f"{op}: {key} {got!r} is not one of {', '.join(allowed)}")
    return str(got)


def _made(op: str, genome: Genome, channels: Mapping[str, str], **changes: Any) -> Genome:
    parts: dict[str, Any] = {"fusion": genome.fusion, "rounds": genome.rounds,
                             "refine": genome.refine, "share": genome.share}  # fmt: skip
    parts.update(changes)
    try:
        return Genome.make(
            channels, parts["fusion"], parts["rounds"], parts["refine"], parts["share"]
        )
    except ValueError as exc:
        raise GenomeEditError(f"{op}: {exc}") from None


def _channel_edit(genome: Genome, op: str, edit: Mapping[str, Any]) -> tuple[Genome, str]:
    channels = dict(genome.channels)
    absent = [c for c in CHANNELS if c not in channels]
    if op == "add_channel":
        name = _value(edit, op, "channel", absent)
        norm = _value(edit, op, "normalisation", NORMALISATIONS)
        channels[name] = norm
        return _made(op, genome, channels), f"adds {CHANNELS[name].label} ({NORM_LABELS[norm]})"
    if op == "drop_channel":
        name = _value(edit, op, "channel", list(channels))
        del channels[name]
        return _made(op, genome, channels), f"drops {CHANNELS[name].label}"
    if op == "swap_channel":
        old = _value(edit, op, "channel", list(channels))
        new = _value(edit, op, "new_channel", absent)
        channels[new] = channels.pop(old)
        label = f"replaces {CHANNELS[old].label} with {CHANNELS[new].label}"
        return _made(op, genome, channels), label
    name = _value(edit, op, "channel", list(channels))
    norm = _value(edit, op, "normalisation", [n for n in NORMALISATIONS if n != channels[name]])
    was, channels[name] = channels[name], norm
    label = f"switches {CHANNELS[name].label} to {NORM_LABELS[norm]} (was {NORM_LABELS[was]})"
    return _made(op, genome, channels), label


def _shape_edit(genome: Genome, op: str, edit: Mapping[str, Any]) -> tuple[Genome, str] | None:
    channels = dict(genome.channels)
    if op == "change_fusion":
        fusion = _value(edit, op, "fusion", [f for f in FUSIONS if f != genome.fusion])
        changed = _made(op, genome, channels, fusion=fusion, share=DEFAULT_SHARE)
        return changed, f"fuses by {fusion_label(changed)} instead of {fusion_label(genome)}"
    if op == "add_round":
        allowed = list(REFINEMENTS) if genome.rounds == 0 else [genome.refine]
        refine = _value(edit, op, "refine", allowed)
        label = f"adds feedback round {genome.rounds + 1} ({refine} refinement of the fused top-K)"
        return _made(op, genome, channels, rounds=genome.rounds + 1, refine=refine), label
    if genome.rounds == 0:
        return None  # drop_round and change_refine need a round
    if op == "drop_round":
        changed = _made(op, genome, channels, rounds=genome.rounds - 1)
        return changed, f"drops feedback round {genome.rounds}"
    refine = _value(edit, op, "refine", [r for r in REFINEMENTS if r != genome.refine])
    label = f"refines the query by {refine} instead of {genome.refine}"
    return _made(op, genome, channels, refine=refine), label
