"""A run directory on disk: per-result JSON and TREC files, and a manifest to reproduce it.

Layout::

    DIR/manifest.json                      command, arguments, versions, schema version
    DIR/<encoder>/<task>/<program>.json    TaskResult (per-query nDCG@10, cost, timings)
    DIR/<encoder>/<task>/<program>.trec    TREC run file (best RUN_DEPTH documents per query, or
                                           as many as the extra measures needed)
    DIR/summary.jsonl                      one SummaryRow per result, appended as each finishes
    DIR/<encoder>/table.{md,csv,tex}       the suite table (program, c, mean Δ, W/T/L, per task)

Every file is written to a temporary name and renamed, so an interrupted run leaves whole files
only; results already written survive a later failure.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from embedding_ttc.durable import append_record, write_atomic
from embedding_ttc.evaluation.evaluate import ProgramRun
from embedding_ttc.evaluation.records import SummaryRow
from embedding_ttc.evaluation.table import DiscoveryTable
from embedding_ttc.evaluation.trec import write_run

RUN_DEPTH = 100
RUN_MANIFEST_SCHEMA_VERSION: Literal[1] = 1


class SandboxLimitsRecord(BaseModel):
    """The sandbox's limits the program files of a run ran under (``--timeout``, ...).

    Attributes:
        timeout_seconds: the wall time of a program file on a task, the encodes the parent
            served for it included (``timeout_covers``: ``run``).
        timeout_covers: what the wall time counted.
        encode_texts_per_item: the encoder budget in texts per query and document of a call.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_seconds: float
    timeout_covers: Literal["run", "program"]
    encode_texts_per_item: float


class RunManifest(BaseModel):
    """``DIR/manifest.json``: how a run directory was made.

    Attributes:
        command: the command line as given.
        encoders: the encoders evaluated, as named on the command line.
        tasks: the tasks, in order.
        programs: the programs, library names then program files' names.
        data_dir: the data root given with ``--data-dir`` (``None``: the default one).
        embedding_ttc: the package version that ran.
        sandbox_limits: the limits the program files ran under (``None``: no program file,
            or a manifest written before they were recorded).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = RUN_MANIFEST_SCHEMA_VERSION
    kind: Literal["run_manifest"] = "run_manifest"
    command: list[str]
    encoders: list[str]
    tasks: list[str]
    programs: list[str]
    data_dir: str | None
    embedding_ttc: str
    sandbox_limits: SandboxLimitsRecord | None = None


def safe_name(name: str) -> str:
    """A file-system-safe version of an encoder, task or program name."""
    return re.sub(r"[^A-Za-z0-9._=,+-]+", "_", name) or "_"


class RunDirectory:
    """Writes results into ``root`` as they are produced."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def write_manifest(self, manifest: RunManifest) -> None:
        """Record how the run was made."""
        # json.dumps, as before the record was typed: the same bytes for the same run.
        # A run without program files writes no sandbox_limits: its bytes stay as they were.
        unset = {"sandbox_limits"} if manifest.sandbox_limits is None else None
        body = json.dumps(manifest.model_dump(mode="json", exclude=unset), indent=2)
        write_atomic(self.root / "manifest.json", body + "\n")

    def result_path(self, encoder: str, task: str, program: str, suffix: str) -> Path:
        """Where one result file lives."""
        folder = self.root / safe_name(encoder) / safe_name(task)
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{safe_name(program)}{suffix}"

    def write_table(self, encoder: str, table: DiscoveryTable) -> None:
        """Write the suite table as Markdown, CSV and LaTeX beside the encoder's results."""
        folder = self.root / safe_name(encoder)
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / "table.md", table.to_markdown())
        write_atomic(folder / "table.csv", table.to_csv())
        write_atomic(folder / "table.tex", table.to_latex())

    def write(self, run: ProgramRun, summary: SummaryRow) -> None:
        """Write the result JSON, its TREC run file, and append the summary line."""
        r = run.result
        json_path = self.result_path(r.encoder.name, r.task.name, r.program, ".json")
        write_atomic(json_path, r.model_dump_json(indent=2) + "\n")
        trec_path = self.result_path(r.encoder.name, r.task.name, r.program, ".trec")
        # At least as deep as the ranking the extra measures were computed on, so trec_eval on
        # this file gives the recorded numbers.
        depth = max(RUN_DEPTH, r.metrics_depth or 0)
        write_run(trec_path, run.rankings(depth), tag=r.program)
        append_record(self.root / "summary.jsonl", summary)
