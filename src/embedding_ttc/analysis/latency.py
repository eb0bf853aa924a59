"""Deployed latency beside a transfer matrix: ``DIR/latency.json``, one measured record.

A matrix says what a program buys in nDCG@10; a search engineer also asks what it costs per
request once served. ``benchmarks/rerank_latency.py --record DIR/latency.json`` times each
program's index on ``POST /v1/rerank`` (the query and its candidates given by text, as a
hybrid search stack's second stage is called) at several candidate counts and writes one
:class:`LatencyRecord`: the conditions (task, documents indexed, encoder, threads, CPUs, the
command) and per program and candidate count the median and mean milliseconds of a request.
The report reads it (:func:`read_latency`) into the deploy table
(:mod:`embedding_ttc.analysis.deploy_table`); a matrix without one has no such table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from embedding_ttc.analysis.inputs import ReportError
from embedding_ttc.durable import write_atomic

LATENCY_FILE = "latency.json"
LATENCY_SCHEMA_VERSION: Literal[1] = 1
V1_RERANK: Literal["/v1/rerank"] = "/v1/rerank"


class LatencyRow(BaseModel):
    """One program at one candidate count: milliseconds per request, over the timed queries."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    program: str
    candidates: int = Field(gt=0)
    median_ms: float = Field(ge=0)
    mean_ms: float = Field(ge=0)


class LatencyRecord(BaseModel):
    """Per-request latency of served programs, measured side by side in one run.

    Attributes:
        route: the route timed (``/v1/rerank``).
        task: the task whose documents were indexed and whose queries were sent.
        docs: how many of its documents the indexes hold (its first ``docs``).
        encoder: the encoder of every index; the query is encoded live, uncached.
        queries: requests timed per row (after two untimed ones).
        threads: torch intra-op threads.
        cpus: the machine's CPU count.
        command: the command line that measured it.
        measured_at: ISO 8601 time (UTC) the measurement ended.
        rows: per program and candidate count, in the order measured.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = LATENCY_SCHEMA_VERSION
    kind: Literal["deploy_latency"] = "deploy_latency"
    route: Literal["/v1/rerank"] = V1_RERANK
    task: str
    docs: int
    encoder: str
    queries: int
    threads: int
    cpus: int | None
    command: list[str]
    measured_at: str
    rows: list[LatencyRow]

    @property
    def candidate_counts(self) -> tuple[int, ...]:
        """The candidate counts measured, ascending."""
        return tuple(sorted({r.candidates for r in self.rows}))

    def median_ms(self, program: str, candidates: int) -> float | None:
        """The median milliseconds of ``program`` at ``candidates`` (``None``: not measured)."""
        for row in self.rows:
            if row.program == program and row.candidates == candidates:
                return row.median_ms
        return None


def read_latency(out: Path) -> LatencyRecord | None:
    """The latency record of the matrix in ``out`` (``None`` when it has none).

    Raises:
        ReportError: when ``out/latency.json`` is not a valid record (naming the file).

    """
    path = out / LATENCY_FILE
    if not path.is_file():
        return None
    try:
        return LatencyRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise ReportError(f"{path} is not a valid latency record: {exc}") from None


def write_latency(out: Path, record: LatencyRecord) -> Path:
    """Write ``record`` as ``out/latency.json`` (atomically, replacing an older one)."""
    path = out / LATENCY_FILE
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(path, record.model_dump_json(indent=1) + "\n")
    return path
