"""Programs that may fail, evaluated one at a time: a failure is an outcome, not the end.

``evaluate --program-file`` runs program files in the sandbox beside the library's programs.
A file that is rejected, crashes, times out or returns a bad matrix on one task must neither
end the command nor lose the results already written: :func:`run_guarded` evaluates each such
program on its own and yields either its run or a :class:`ProgramFailure` with the status and
reason of what went wrong (status apart from metrics).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.batches import FirstStage
from embedding_ttc.evaluation.evaluate import ProgramRun, run_programs
from embedding_ttc.evaluation.first_stage_run import FirstStageRun
from embedding_ttc.evaluation.measures import Measures
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.tasks.task import RetrievalTask


@dataclass(frozen=True)
class ProgramFailure:
    """A program that produced no result on a task, and why."""

    program: str
    status: Status
    reason: str


def run_guarded(
    programs: Sequence[Program],
    task: RetrievalTask,
    encoder: Encoder,
    *,
    shortlist: int | None = None,
    first_stage: FirstStage = "dense",
    first_stage_run: FirstStageRun | None = None,
    measures: Measures | None = None,
) -> Iterator[ProgramRun | ProgramFailure]:
    """Run each program alone on ``task``; yield its run, or its failure instead of raising.

    A :class:`~embedding_ttc.programs.outcome.CandidateError` keeps its status and reason;
    any other user-facing error of the run (its scores could not be used) is recorded as
    ``invalid_output`` with its message. Each program encodes the base embeddings through
    ``encoder`` again, so pass the cached encoder that scored the other programs. The keyword
    arguments are :func:`~embedding_ttc.evaluation.evaluate.run_programs`'.
    """
    for program in programs:
        try:
            run = next(
                run_programs(
                    [program],
                    task,
                    encoder,
                    shortlist=shortlist,
                    first_stage=first_stage,
                    first_stage_run=first_stage_run,
                    measures=measures,
                )
            )
        except CandidateError as exc:
            yield ProgramFailure(program.name, exc.status, exc.reason)
            continue
        except EmbeddingTTCError as exc:
            yield ProgramFailure(program.name, Status.INVALID_OUTPUT, str(exc))
            continue
        yield run
