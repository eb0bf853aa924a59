"""What a transfer run reports as it goes: the events of its ``progress`` callback.

:func:`~embedding_ttc.analysis.transfer.run_transfer` calls ``progress`` with each
:data:`TransferEvent` as it happens, in order: tasks asked for outside the suite, the search
run's programs chosen, each learned head trained or reused, the matrix planned, then every
cell's :class:`~embedding_ttc.analysis.matrix.MatrixProgress`. The command line prints them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.analysis.matrix import MatrixProgress


@dataclass(frozen=True)
class TaskOutsideSuite:
    """A task asked for is not in the held-out suite (it is computed all the same)."""

    task: str
    suite: str


@dataclass(frozen=True)
class SearchProgramsChosen:
    """The programs of a search run that ``frontier`` names in this run (maybe none)."""

    run: Path
    program_ids: tuple[str, ...]


@dataclass(frozen=True)
class HeadTraining:
    """An encoder's learned head is about to be trained on the discovery tasks."""

    encoder: str
    n_tasks: int


@dataclass(frozen=True)
class HeadReady:
    """An encoder's learned head is ready: trained now or reused from its record.

    Attributes:
        encoder: the encoder.
        reused: whether the stored head was reused.
        record: where its record is.
        chosen: the chosen head family.
        validation_ndcg_at_10: the chosen family's validation nDCG@10 (nan without one).
        dropped: stale ``LearnedHead`` cells deleted because the head was retrained.

    """

    encoder: str
    reused: bool
    record: Path
    chosen: str
    validation_ndcg_at_10: float
    dropped: int


@dataclass(frozen=True)
class MatrixPlanned:
    """What the run is about to compute: planned cells, those present, those to compute."""

    planned: int
    to_compute: int
    stale: int
    executor: str

    @property
    def present(self) -> int:
        """Planned cells already stored and current."""
        return self.planned - self.to_compute


TransferEvent = (
    TaskOutsideSuite
    | SearchProgramsChosen
    | HeadTraining
    | HeadReady
    | MatrixPlanned
    | MatrixProgress
)
"""What :func:`~embedding_ttc.analysis.transfer.run_transfer` reports to its ``progress`` callback,
in order."""
