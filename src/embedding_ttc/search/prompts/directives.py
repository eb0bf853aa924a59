"""The directive of a generation: ONE concrete thing a small model is asked to build.

:func:`choose_directive` picks, from the seed, the generation and the history, either an
inspiration not yet realised (:data:`~embedding_ttc.search.prompts.inspirations.INSPIRATIONS`),
a pair of realised ones, or the combination of two frontier programs (every
:data:`~embedding_ttc.search.population.COMBINE_EVERY` generations), the two chosen by
:func:`~embedding_ttc.search.population.combine_parents` like every other parent choice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.population import combine_parents
from embedding_ttc.search.prompts.common import is_p0
from embedding_ttc.search.prompts.inspirations import INSPIRATIONS, Inspiration
from embedding_ttc.search.state import SearchState

VIEW_IDEAS = frozenset({"views"})
"""Inspirations that need distinct views: never a directive for an encoder whose views collapse
(its other views reproduce S; measured, such programs scored Δ = 0 at c = 2.6)."""


@dataclass(frozen=True)
class Directive:
    """The one concrete thing a generation is asked to build.

    Attributes:
        key: the inspiration's key, or ``"combine"``.
        title: a short name of the idea.
        text: the instruction shown to the model.
        novelty: a fallback novelty claim (used when the reply states none).
        hypothesis: a fallback hypothesis.
        parents: the frontier programs a combination builds on (empty otherwise).

    """

    key: str
    title: str
    text: str
    novelty: str
    hypothesis: str
    parents: tuple[str, ...] = ()


def choose_directive(state: SearchState) -> Directive:
    """The directive for ``state.generation``: deterministic in seed, generation and history.

    When :func:`~embedding_ttc.search.population.combine_parents` names two frontier programs
    (every :data:`~embedding_ttc.search.population.COMBINE_EVERY`-th generation, when there
    are two besides P0), the directive
    is to combine them. Otherwise
    it is an inspiration (not one of :data:`VIEW_IDEAS` when ``state.views_collapsed``): the
    ideas not yet tried successfully (no evaluated program's novelty claim names them) come
    first; among them, the one tried least often so far, ties broken by a rotation that
    starts at ``seed + generation``. Once every idea has an evaluated program, the chosen idea
    comes paired with the least-tried other one, to be fused in one program.
    """
    pair = combine_parents(state)
    if pair is not None:
        first, second = pair
        return Directive(
            key="combine",
            title=f"combine {first} and {second}",
            text=(
                f"Combine frontier programs {first} and {second}: keep the main channel of "
                f"{first}, add the idea of {second} as a second channel, and fuse the two "
                "with row z-scores or rrf. Write one new program, not a copy of either."
            ),
            novelty=f"combines {first} and {second} (this generation's directive; the reply "
            "stated no novelty)",
            hypothesis=f"{first} and {second} win on different queries, so fusing them wins "
            "on more tasks.",
            parents=(first, second),
        )
    tried_ok = _tried(r for r in state.history if r.status == Status.OK and not is_p0(r))
    tried_any = _tried(r for r in state.history if not is_p0(r))
    ideas = [i for i in INSPIRATIONS if not (state.views_collapsed and i.key in VIEW_IDEAS)]
    attempts = {i.key: tried_any.count(i.key) for i in ideas}
    pool = [i for i in ideas if i.key not in tried_ok] or ideas
    start = (state.seed + state.generation) % len(pool)
    rotated = pool[start:] + pool[:start]
    idea = min(rotated, key=lambda i: attempts[i.key])  # min keeps the first of equals
    if idea.key in tried_ok and len(ideas) > 1:
        others = [i for i in rotated if i.key != idea.key]
        return _paired(idea, min(others, key=lambda i: attempts[i.key]))
    return Directive(
        key=idea.key,
        title=idea.title,
        text=f"{idea.title}. {idea.instruction}",
        novelty=f"{idea.title} (this generation's directive; the reply stated no novelty)",
        hypothesis=f"{idea.title} adds evidence that the single cosine S misses.",
    )


def _paired(idea: Inspiration, partner: Inspiration) -> Directive:
    """Two ideas in one program, once each has been realised alone.

    Measured with the 1.5B model: asked a second time for an idea an evaluated program already
    realises, it rewrote that program (3 of 20 generations rejected as near-duplicates).
    """
    title = f"{idea.title} with {partner.title.lower()}"
    return Directive(
        key=f"{idea.key}+{partner.key}",
        title=title,
        text=(
            f"{title}. Earlier programs already build each of these ideas alone and a copy is "
            "rejected, so write ONE program whose fuse call takes the channels of both. "
            f"First idea: {idea.instruction} Second idea: {partner.instruction}"
        ),
        novelty=f"{title} (this generation's directive; the reply stated no novelty)",
        hypothesis=f"{idea.title} and {partner.title.lower()} add different evidence that the "
        "single cosine S misses.",
    )


def _tried(records: Iterable[LedgerRecord]) -> list[str]:
    """The inspiration keys each record's novelty claim names (one entry per record and key)."""
    keys: list[str] = []
    for record in records:
        text = f"{record.novelty} {record.hypothesis}".lower()
        keys.extend(i.key for i in INSPIRATIONS if any(w in text for w in i.keywords))
    return keys
