"""What became of a program run: a status, and for a failure, one exception type with a reason.

A program file's run (in the search, or ``evaluate --program-file``) ends in one
:class:`Status`; metrics exist only when it is ``OK`` (house style: status apart from
metrics). Every failure is a :class:`CandidateError` (or a subclass naming where it came
from: a static check, the sandbox, the output check), so whoever records it reads ``status``
and ``reason`` without guessing.
"""

from __future__ import annotations

from enum import Enum

from embedding_ttc.errors import EmbeddingTTCError


class Status(str, Enum):
    """The outcome of one candidate program (metrics exist only for ``OK``).

    A ``str`` whose ``str()`` and f-string form are its value, as ``enum.StrEnum`` gives, which
    is written out here because ``StrEnum`` is new in Python 3.11 and the package supports 3.10.
    """

    OK = "ok"
    """Passed every check and was evaluated on every task of the suite."""
    REJECTED = "rejected"
    """Failed a constraint (parse, imports, determinism, novelty, ...); ``reason`` says which."""
    TIMEOUT = "timeout"
    """Exceeded its wall-time limit and was killed."""
    MEMORY = "memory"
    """Exceeded its memory limit."""
    BUDGET = "budget"
    """Asked the encoder for more texts, or more seconds of encoding, than its budget allows."""
    CRASHED = "crashed"
    """Raised, or its interpreter died (signal, non-zero exit, broken protocol)."""
    INVALID_OUTPUT = "invalid_output"
    """Returned something other than a finite |Q|×|D| float matrix."""
    PROPOSER_ERROR = "proposer_error"
    """The proposer failed (API error, empty reply); nothing was evaluated."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class CandidateError(EmbeddingTTCError):
    """A candidate program failed: a static check, the sandbox, or its evaluation.

    Every failure of a candidate is this type (or a subclass naming where it came from), so
    whoever records it reads ``status`` and ``reason`` without guessing.

    Attributes:
        status: the ledger status of the failure (never ``OK``).
        reason: a human sentence; a constraint violation starts with the constraint's name.

    """

    def __init__(self, status: Status, reason: str) -> None:
        super().__init__(f"{status.value}: {reason}")
        self.status = status
        self.reason = reason
