"""The proposer seam: a :class:`Proposer` writes one program per generation.

A proposer reads the :class:`~embedding_ttc.search.state.SearchState` (history, frontier with
sources, task names) and returns a :class:`~embedding_ttc.search.state.Proposal`. Its two
outcomes are kept apart (house style: status apart from metrics):

* a reply, with or without code: a ``Proposal`` (``source=None`` when the reply holds no
  program; the loop rejects it with a reason);
* no usable reply at all (API error, timeout, rate limit after the client's retries,
  malformed answer, empty reply): :class:`ProposerError`, carrying what the call cost so far;
  the loop records it as ``Status.PROPOSER_ERROR`` and goes on.

How a proposer writes its program is its strategy (:mod:`embedding_ttc.search.strategies`);
which model answers is its chat backend (:mod:`embedding_ttc.search.backends`). This module
also holds what the strategies share about a model's reply: turning it into a ``Proposal``
(:func:`proposal_from_reply`) and resolving the parent it names (:func:`resolve_parent`).
"""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.program_files.parse import parse_reply
from embedding_ttc.search.state import Proposal, SearchState, Usage


@runtime_checkable
class Proposer(Protocol):
    """Writes one candidate program per call.

    Attributes:
        name: what the ledger records as the candidate's proposer (``"structural"``,
            ``"draft:openai"``, ``"edit:llama-cpp"`` ...).

    """

    name: str

    def propose(self, state: SearchState) -> Proposal:
        """Write one program for ``state.generation``.

        Raises:
            ProposerError: when no usable reply could be obtained.

        """
        ...


class ProposerError(EmbeddingTTCError):
    """A proposer call failed; nothing was proposed.

    Attributes:
        usage: what the failed call cost (tokens may be 0, seconds are measured), or ``None``.

    """

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class ProposerConfigError(EmbeddingTTCError):
    """A proposer cannot be built as configured (no model name, no API key, no model file)."""


def base_seed(backend: object, state: SearchState) -> int:
    """A backend's base seed (the one it was built with), else the run's."""
    seed = getattr(backend, "seed", None)
    return seed if isinstance(seed, int) else state.seed


def proposal_from_reply(reply: str, *, usage: Usage, proposer: str, state: SearchState) -> Proposal:
    """Parse a model's reply into a :class:`Proposal`.

    A reply without code is a proposal with ``source=None`` (the loop rejects it); an empty
    reply is an error.

    Args:
        reply: the model's whole reply.
        usage: what the call cost.
        proposer: the proposer's name.
        state: the state the reply answers (to resolve the ``Parent:`` id).

    Returns:
        The proposal.

    Raises:
        ProposerError: if the reply is empty.

    """
    if not reply.strip():
        raise ProposerError("the model returned an empty reply", usage)
    parsed = parse_reply(reply)
    return Proposal(
        source=parsed.source,
        novelty=parsed.novelty,
        hypothesis=parsed.hypothesis,
        usage=usage,
        proposer=proposer,
        parent_id=resolve_parent(parsed.parent_id, state),
        raw_reply=reply,
    )


def resolve_parent(parent_id: str | None, state: SearchState) -> str | None:
    """Map a claimed parent id onto a recorded program id where one matches.

    Models write ids loosely (``G0004``, ``g4``, ``P0``); an id that matches a recorded one
    exactly, case-insensitively, or by generation number becomes that id. Anything else is
    kept as written: the claim stays in the ledger for forensics.
    """
    if parent_id is None:
        return None
    known = [r.program_id for r in state.history]
    if parent_id in known:
        return parent_id
    lowered = {k.lower(): k for k in known}
    if parent_id.lower() in lowered:
        return lowered[parent_id.lower()]
    generation = _generation_of(parent_id.lower())
    if generation is not None:
        same = [r.program_id for r in state.history if r.generation == generation]
        if len(same) == 1:
            return same[0]
    return parent_id


def _generation_of(program_id: str) -> int | None:
    """The generation a loosely written id names (``g0004``, ``g4``, ``4``, ``p0``), if any."""
    if program_id == "p0":
        return 0
    match = re.fullmatch(r"g?(\d+)(?:-\w+)?", program_id)
    return int(match.group(1)) if match else None
