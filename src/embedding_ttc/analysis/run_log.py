"""The run log of a transfer matrix: one record per ``embedding-ttc transfer`` invocation.

``OUT/transfer.json`` is rewritten by every run, so it describes only the last one. A study
run in pieces (``--task``, ``--encoders``, ``--discovery-suite none``) into one ``--out`` keeps
the whole story in ``OUT/runs.jsonl``: each run appends one :class:`TransferRun` when it ends,
completed, failed or interrupted, with its command, start time, wall seconds and how many cells
it computed. The report sums the wall time over the log (the study's wall time) and lists the
commands, so the directory says how it was made.

Lines are appended and read by :mod:`embedding_ttc.durable`: whole and fsynced; a torn last
line (a run killed while writing it) is skipped on reading and cut before the next append, and
any other malformed line is an error naming the file and the line.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from embedding_ttc.durable import append_record, read_records
from embedding_ttc.errors import EmbeddingTTCError

RUN_LOG = "runs.jsonl"
RUN_SCHEMA_VERSION: Literal[1] = 1
RunStatus = Literal["complete", "incomplete", "interrupted", "error"]


class RunLogError(EmbeddingTTCError):
    """A line of the run log is malformed (the message names the file and the line)."""


class TransferRun(BaseModel):
    """One ``transfer`` invocation.

    Attributes:
        command: the command line as given.
        started_at: ISO 8601 start time (UTC).
        wall_seconds: from the start of the run to its end, training of heads included.
        status: ``complete`` (every planned cell present), ``incomplete`` (cells missing or
            failed), ``interrupted`` (Ctrl-C) or ``error`` (the run stopped on an error).
        planned: cells in the run's plan.
        computed: cells this run computed (written to the store).
        failed: cells that failed this time (they stay missing).
        already: cells present at the start.
        executor: ``inprocess`` or ``ray``.
        embedding_ttc: the package version that ran.
        cpus: the machine's CPU count (``os.cpu_count()``).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = RUN_SCHEMA_VERSION
    kind: Literal["transfer_run"] = "transfer_run"
    command: list[str]
    started_at: str
    wall_seconds: float
    status: RunStatus
    planned: int
    computed: int
    failed: int
    already: int
    executor: str
    embedding_ttc: str
    cpus: int | None = None


def append_run(out: Path, run: TransferRun) -> None:
    """Append ``run`` to ``out/runs.jsonl`` as one line, flushed and fsynced."""
    append_record(out / RUN_LOG, run)


def read_runs(out: Path) -> list[TransferRun]:
    """Every run logged in ``out`` (none when there is no log), oldest first.

    Raises:
        RunLogError: on a malformed line other than a torn last one.

    """
    return read_records(out / RUN_LOG, TransferRun, RunLogError, "a transfer run record")


def total_wall_seconds(runs: Sequence[TransferRun]) -> float:
    """The study's wall time: the length of the union of the runs' time spans.

    Pieces run one after another add up; pieces run side by side (say one encoder per core)
    count once for the time they overlap.
    """
    spans = sorted(
        (start, start + r.wall_seconds)
        for r in runs
        for start in [datetime.fromisoformat(r.started_at).timestamp()]
    )
    total = 0.0
    end = float("-inf")
    for a, b in spans:
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def summed_run_seconds(runs: Sequence[TransferRun]) -> float:
    """The runs' wall seconds added up (more than the wall time when pieces overlapped)."""
    return sum(r.wall_seconds for r in runs)


def format_duration(seconds: float) -> str:
    """``3 h 05 min``, ``12 min 40 s`` or ``9.3 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
