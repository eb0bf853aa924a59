"""The idea an edit is pointed at: one its parent does not realise yet.

Asked only to "change ONE idea" of the BM25DenseRRF seed, the 1.5B model mostly renamed or
reordered the seed's two channels: 11 of 20 generations were near-duplicates
(``results/proposers/edit``). Asked to build a named idea, it writes out what it is told (the
drafting proposer's directives). So each edit prompt names one idea to add to the parent as a
new channel of its fusion: an inspiration of
:data:`~embedding_ttc.search.prompts.inspirations.INSPIRATIONS` whose distinctive helpers
the parent does not call (the parent's other channels stay, so the child is the parent plus
one idea, a mutation rather than a rewrite).

:func:`suggest_idea` is deterministic in the run's seed, the generation and the history: among
the ideas the parent lacks (not the view ideas when the encoder's views collapse), the one its
children's novelty claims name least often (an idea's keywords, as the directives count
them), ties broken by a rotation starting at ``seed + generation``.
"""

from __future__ import annotations

import re

from embedding_ttc.search.prompts.directives import VIEW_IDEAS
from embedding_ttc.search.prompts.helper_list import PRIMITIVE_PRIORITY
from embedding_ttc.search.prompts.inspirations import INSPIRATIONS, Inspiration
from embedding_ttc.search.state import SearchState

GENERIC_HELPERS = frozenset({"fuse", "rrf", "candidate_mask", "mask_for", "zscore_rows"})
"""Helpers any program may call to combine channels: they do not mark an idea as realised."""


def idea_helpers(idea: Inspiration) -> frozenset[str]:
    """The helpers ``idea``'s instruction calls that mark it as realised in a program."""
    called = set(re.findall(r"\b([A-Za-z_]\w*)\(", idea.instruction))
    return frozenset(called & set(PRIMITIVE_PRIORITY)) - GENERIC_HELPERS


def realised(idea: Inspiration, source: str) -> bool:
    """Whether ``source`` calls one of ``idea``'s distinctive helpers."""
    return any(re.search(rf"\b{name}\s*\(", source) for name in idea_helpers(idea))


def suggest_idea(state: SearchState, parent_name: str, parent_source: str) -> Inspiration | None:
    """The idea to add to the parent this generation; ``None`` when it realises all of them."""
    ideas = [
        i
        for i in INSPIRATIONS
        if not (state.views_collapsed and i.key in VIEW_IDEAS) and not realised(i, parent_source)
    ]
    if not ideas:
        return None
    claims = [
        f"{r.novelty} {r.hypothesis}".lower() for r in state.history if r.parent_id == parent_name
    ]
    pointed = {i.key: sum(any(w in c for w in i.keywords) for c in claims) for i in ideas}
    start = (state.seed + state.generation) % len(ideas)
    rotated = ideas[start:] + ideas[:start]
    return min(rotated, key=lambda i: pointed[i.key])  # min keeps the first of equals
