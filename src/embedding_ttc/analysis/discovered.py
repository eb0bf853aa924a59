"""The programs a search run discovered, as program files of the transfer matrix.

``transfer --search-run RUN --programs frontier`` evaluates the programs the search admitted
(``RUN/programs/<program_id>.py``, each under its program id) on the held-out cells. Which
ledger records are meant is decided in one place, a :data:`Selection`: a function from the
run's records to the selected ones: :class:`AdmittedBy` (a rule and an objective; default
:data:`admitted_programs`, the paper's compute rule against P0) is the frontier's admitted
sequence (:func:`embedding_ttc.runs.frontier.frontier`) without generation 0, which is P0
and already in every group. :func:`discovered_paths` turns a selection into the program
files, which :mod:`embedding_ttc.program_files.program_file` reads and checks like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.analysis.inputs import SearchRun
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.frontier import Rule, frontier
from embedding_ttc.runs.ledger import PROGRAMS_DIR
from embedding_ttc.runs.records import LedgerRecord, Objective

SEARCH_FRONTIER = "frontier"
"""The name in ``--programs`` that stands for a search run's selected programs (with a run)."""

Selection = Callable[[Sequence[LedgerRecord]], Sequence[LedgerRecord]]
"""Which ledger records of a search run are evaluated: the run's records in, the chosen out."""


@dataclass(frozen=True)
class AdmittedBy:
    """The programs an admission rule admits, in ledger order, P0 (generation 0) out.

    Attributes:
        rule: ``compute`` (the paper's) or ``transfer`` (validation split, no losing task);
            see :mod:`embedding_ttc.runs.frontier`.
        objective: the baseline of the rule's Δ, ``p0`` or the run's ``reference``.

    """

    rule: Rule = "compute"
    objective: Objective = "p0"

    def __call__(self, records: Sequence[LedgerRecord]) -> tuple[LedgerRecord, ...]:
        """The admitted records of ``records`` other than generation 0."""
        chosen = frontier(records, self.rule, self.objective).admitted
        return tuple(r for r in chosen if r.generation > 0)

    def __str__(self) -> str:
        return f"admitted by the {self.rule} rule against {self.objective}"


admitted_programs: Selection = AdmittedBy()
"""The paper's selection: the compute rule against P0."""


@dataclass(frozen=True)
class Discovered:
    """The programs a selection took from a search run.

    Attributes:
        run: the search run directory.
        program_ids: the selected records' program ids, in ledger order.
        paths: their program files, ``RUN/programs/<program_id>.py``.

    """

    run: Path
    program_ids: tuple[str, ...]
    paths: tuple[Path, ...]


def discovered_paths(run: SearchRun, select: Selection = admitted_programs) -> Discovered:
    """The program files of the records ``select`` takes from ``run``'s ledger.

    Raises:
        EmbeddingTTCError: a selected program's file is missing from ``RUN/programs``.

    """
    chosen = tuple(select(run.records))
    paths = tuple(run.path / PROGRAMS_DIR / f"{r.program_id}.py" for r in chosen)
    absent = [str(p) for p in paths if not p.is_file()]
    if absent:
        raise EmbeddingTTCError(
            f"the search run {run.path} has no source for its selected programs: "
            f"{', '.join(absent)}"
        )
    return Discovered(run.path, tuple(r.program_id for r in chosen), paths)


def validation_means(records: Sequence[LedgerRecord]) -> dict[str, float]:
    """Each evaluated program's mean Δ against P0 over the validation part of the run's split.

    Keyed by program id (the name its transfer cells carry); programs of a run without a split
    are absent. This is the number the transfer rule selected on, shown beside the held-out
    numbers it is meant to predict.
    """
    out = {}
    for record in records:
        mean = record.mean("p0", "validation")
        if mean is not None:
            out[record.program_id] = mean
    return out
