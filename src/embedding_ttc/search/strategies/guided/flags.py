"""The guided strategy's command-line options, and a new run's options from those given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from embedding_ttc.search.strategies.base import REPAIR_ROUNDS, Flag
from embedding_ttc.search.strategies.edit.options import EDIT_REPAIR_ROUNDS
from embedding_ttc.search.strategies.guided.options import GUIDED_OFFERS, GuidedOptions

FLAGS: tuple[Flag, ...] = (
    REPAIR_ROUNDS,
    Flag(
        "--guided-offers",
        "offers",
        "int",
        "--strategy guided: offer a seeded sample of N open edits per generation, one of each "
        f"kind first (default {GUIDED_OFFERS}; 0: every open edit)",
        metavar="N",
    ),
    Flag(
        "--guided-keep",
        "keep",
        "list",
        "--strategy guided: never drop or swap out this channel (repeatable; e.g. dense, the "
        "cosine S, anchors every program on the encoder's own ranking)",
        metavar="CHANNEL",
    ),
    Flag(
        "--guided-share",
        "share",
        "switch",
        "--strategy guided: the reply also sets the convex fusion's share of the program it "
        "makes (default on for a new run; runs recorded before the option resume with "
        "--no-guided-share)",
    ),
)
"""What ``--strategy guided`` reads."""


def from_flags(given: Mapping[str, Any], backend: str | None) -> GuidedOptions:
    """A new run's guided options: those given, a new run's defaults for the rest.

    Raises:
        StrategyError: an option out of its range, or a channel to keep that is not one.

    """
    return GuidedOptions(
        repair_rounds=given.get("repair_rounds", EDIT_REPAIR_ROUNDS),
        offers=given.get("offers", GUIDED_OFFERS),
        keep=tuple(dict.fromkeys(given.get("keep") or ())),
        share=given.get("share") is not False,
    )
