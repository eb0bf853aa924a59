"""What a tune run deploys: its pick, read back as the arguments of an index build."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.tune.config import TaskSource, read_tune_config
from embedding_ttc.tune.records import PICK_FILE, TunePick, read_record


@dataclass(frozen=True)
class TuneDeployment:
    """The index a tune run's pick is served from.

    Attributes:
        program: the library program with its parameters, or ``None``.
        program_file: the program file (a path), or ``None``.
        encoder: the encoder the pick was chosen with.
        task: the task the run tuned on (its corpus is what the pick was chosen over).
        shortlist: the candidates per query the pick was chosen at.

    """

    program: str | None
    program_file: Path | None
    encoder: str
    task: TaskSource
    shortlist: int


def deployment(run_dir: Path) -> TuneDeployment:
    """The pick of the tune run in ``run_dir``.

    Raises:
        EmbeddingTTCError: the folder is not a tune run, or the run has not picked yet.

    """
    config = read_tune_config(run_dir)
    if config is None:
        raise EmbeddingTTCError(f"{run_dir} is not a tune run folder (it has no tune.json)")
    pick = read_record(run_dir / PICK_FILE, TunePick)
    if pick is None:
        raise EmbeddingTTCError(
            f"{run_dir} has no {PICK_FILE} yet: resume the run (embedding-ttc tune with the "
            "same options) until it picks"
        )
    program_file = None
    if pick.program_file is not None:
        program_file = run_dir / pick.program_file
        if not program_file.is_file():
            raise EmbeddingTTCError(f"{run_dir}: the pick's program file {program_file} is missing")
    return TuneDeployment(
        program=pick.program,
        program_file=program_file,
        encoder=pick.encoder,
        task=config.task,
        shortlist=pick.shortlist,
    )
