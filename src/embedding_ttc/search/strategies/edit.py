"""The edit strategy: the model edits one parent program's source per generation.

The proposer is :class:`~embedding_ttc.search.editing.proposer.EditProposer` (search/replace
blocks on a parent, its lineage's lessons in the prompt). It starts from the run's reference
program while the frontier holds only P0, when the reference has a search-program form
(:mod:`embedding_ttc.search.editing.seeds`). The options are recorded in the run's
configuration, so a resumed run goes on as it began.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.search.population import EXPLORE
from embedding_ttc.search.prompts import DEFAULT_EDIT_CONTEXT_TOKENS
from embedding_ttc.search.strategies.base import (
    STRICT,
    Collaborators,
    Strategy,
    proposer_label,
    register,
)

if TYPE_CHECKING:
    from embedding_ttc.search.backends.base import ChatBackend
    from embedding_ttc.search.proposer import Proposer

EDIT_REPAIR_ROUNDS = 1
"""Repair turns of an edit (and of a guided choice) by default: one repair turn."""


@dataclass(frozen=True)
class EditOptions:
    """How the edit proposer runs; the defaults are a new run's.

    Attributes:
        repair_rounds: repair turns after a failed application or pre-check.
        explore: probability of a parent off the frontier.
        context_tokens: the edit prompt's budget.
        precheck: pre-check each edited program (else it only has to parse).
        ideas: name one idea the parent lacks in each prompt.

    """

    __pydantic_config__ = STRICT

    repair_rounds: int = EDIT_REPAIR_ROUNDS
    explore: float = EXPLORE
    context_tokens: int = DEFAULT_EDIT_CONTEXT_TOKENS
    precheck: bool = True
    ideas: bool = True


def build(backend: ChatBackend | None, options: EditOptions, given: Collaborators) -> Proposer:
    """The edit proposer around ``backend``, with the run's pre-check when the options use one."""
    from embedding_ttc.search.editing.proposer import EditProposer
    from embedding_ttc.search.editing.seeds import seeds_for

    assert backend is not None  # build_proposer checked the pair (needs="chat")
    return EditProposer(
        backend,
        explore=options.explore,
        repair_rounds=options.repair_rounds,
        precheck=given.precheck if options.precheck else None,
        context_tokens=options.context_tokens,
        seed=given.seed,
        seeds=seeds_for(given.reference),
        suggest=options.ideas,
        name=proposer_label("edit", backend.name),
    )


STRATEGY = register(Strategy("edit", EditOptions, "chat", build))


def resolve_edit(
    *,
    repair_rounds: int | None,
    context_tokens: int | None,
    precheck: bool | None,
    ideas: bool = True,
) -> EditOptions:
    """The edit options of a new run from the command line's (``None``: the default).

    Raises:
        EmbeddingTTCError: an option out of range.

    """
    repairs = EDIT_REPAIR_ROUNDS if repair_rounds is None else repair_rounds
    if repairs < 0:
        raise EmbeddingTTCError("--repair-rounds must be at least 0")
    return EditOptions(
        repair_rounds=repairs,
        context_tokens=context_tokens or DEFAULT_EDIT_CONTEXT_TOKENS,
        precheck=precheck is not False,
        ideas=ideas,
    )
