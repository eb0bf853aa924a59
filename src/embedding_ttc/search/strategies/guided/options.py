"""The guided strategy's options record; its defaults are a new run's."""

from __future__ import annotations

from dataclasses import dataclass

from embedding_ttc.search.population import EXPLORE
from embedding_ttc.search.strategies.base import STRICT, Ranged, StrategyError, ranged
from embedding_ttc.search.strategies.edit.options import EDIT_REPAIR_ROUNDS

GUIDED_OFFERS = 8
"""Open edits a new guided run offers per generation: as many as there are kinds of edit
(add, drop or swap a channel, change a normalisation or the fusion, add or drop a round,
change the refinement), so each kind the parent allows is on offer."""


@dataclass(frozen=True)
class GuidedOptions(Ranged):
    """How the guided proposer runs; the defaults are a new run's.

    Attributes:
        repair_rounds: repair turns after an unusable reply (at least 0).
        explore: probability of a parent off the frontier (0 to 1).
        offers: the sample of open edits per generation (``0``: every open edit).
        keep: channels never dropped or swapped out; each must be a structural channel.
        share: the reply also sets the convex fusion's share.

    """

    __pydantic_config__ = STRICT

    repair_rounds: int = ranged(EDIT_REPAIR_ROUNDS, low=0)
    explore: float = ranged(EXPLORE, low=0.0, high=1.0)
    offers: int = ranged(GUIDED_OFFERS, low=0)
    keep: tuple[str, ...] = ()
    share: bool = True

    def __post_init__(self) -> None:
        """Check the ranges, then that every channel to keep is one.

        Raises:
            StrategyError: a field out of its range, or a channel that is not one (with the
                closest names).

        """
        super().__post_init__()
        _check_channels(self.keep)


def _check_channels(names: tuple[str, ...]) -> None:
    """Raise naming the first of ``names`` that is not a structural channel, with close names."""
    from embedding_ttc.registry import closest
    from embedding_ttc.search.structural.catalogue import CHANNELS

    for name in names:
        if name not in CHANNELS:
            near = closest(name, list(CHANNELS))
            hint = f"; did you mean {' or '.join(near)}?" if near else ""
            raise StrategyError(
                f"keep: {name!r} is not a channel{hint} (channels: {', '.join(CHANNELS)})"
            )
