"""The guided strategy: the model chooses a parent genome's next edit, the renderer writes it.

The proposer is :class:`~embedding_ttc.search.guided.proposer.GuidedStructuralProposer`; it
needs a backend that constrains a reply to a JSON schema (llama-cpp, openai). The options are
recorded in the run's configuration, so a resumed run goes on as it began; their defaults are
a new run's, which :func:`resolve_guided` builds from the command line's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.search.population import EXPLORE
from embedding_ttc.search.strategies.base import (
    STRICT,
    Collaborators,
    Strategy,
    StrategyError,
    proposer_label,
    register,
)
from embedding_ttc.search.strategies.edit import EDIT_REPAIR_ROUNDS

if TYPE_CHECKING:
    from embedding_ttc.search.backends.base import ChatBackend
    from embedding_ttc.search.proposer import Proposer

GUIDED_OFFERS = 8
"""Open edits a new guided run offers per generation: as many as there are kinds of edit
(add, drop or swap a channel, change a normalisation or the fusion, add or drop a round,
change the refinement), so each kind the parent allows is on offer."""


@dataclass(frozen=True)
class GuidedOptions:
    """How the guided proposer runs; the defaults are a new run's.

    Attributes:
        repair_rounds: repair turns after an unusable reply.
        explore: probability of a parent off the frontier.
        offers: the sample of open edits per generation (``0``: every open edit).
        keep: channels never dropped or swapped out.
        share: the reply also sets the convex fusion's share.

    """

    __pydantic_config__ = STRICT

    repair_rounds: int = EDIT_REPAIR_ROUNDS
    explore: float = EXPLORE
    offers: int = GUIDED_OFFERS
    keep: tuple[str, ...] = ()
    share: bool = True


def build(backend: ChatBackend | None, options: GuidedOptions, given: Collaborators) -> Proposer:
    """The guided proposer around a JSON-constraining ``backend``."""
    from embedding_ttc.search.backends.base import JsonChatBackend
    from embedding_ttc.search.guided.proposer import GuidedStructuralProposer

    # build_proposer checked the pair (needs="json"); the check narrows the type.
    if not isinstance(backend, JsonChatBackend):
        raise StrategyError("the guided strategy needs a JSON-constraining backend")
    return GuidedStructuralProposer(
        backend,
        explore=options.explore,
        repair_rounds=options.repair_rounds,
        seed=given.seed,
        offers=options.offers,
        keep=options.keep,
        share=options.share,
        name=proposer_label("guided", backend.name),
    )


STRATEGY = register(Strategy("guided", GuidedOptions, "json", build))


def resolve_guided(
    *,
    repair_rounds: int | None,
    offers: int | None = None,
    keep: Sequence[str] = (),
    share: bool | None = None,
) -> GuidedOptions:
    """The guided options of a new run from the command line's (``None``: the default).

    Raises:
        EmbeddingTTCError: an option out of range, or a channel to keep that is not one.

    """
    repairs = EDIT_REPAIR_ROUNDS if repair_rounds is None else repair_rounds
    if repairs < 0:
        raise EmbeddingTTCError("--repair-rounds must be at least 0")
    if offers is not None and offers < 0:
        raise EmbeddingTTCError("--guided-offers must be at least 0 (0: every open edit)")
    _check_channels(keep)
    return GuidedOptions(
        repair_rounds=repairs,
        offers=GUIDED_OFFERS if offers is None else offers,
        keep=tuple(dict.fromkeys(keep)),
        share=share is not False,
    )


def _check_channels(names: Sequence[str]) -> None:
    """Raise naming each of ``names`` that is not a structural channel, with close names."""
    from embedding_ttc.registry import closest
    from embedding_ttc.search.structural.catalogue import CHANNELS

    for name in names:
        if name not in CHANNELS:
            near = closest(name, list(CHANNELS))
            hint = f"; did you mean {' or '.join(near)}?" if near else ""
            raise EmbeddingTTCError(
                f"--guided-keep {name!r} is not a channel{hint} (channels: {', '.join(CHANNELS)})"
            )
