"""What a transfer study left on disk, read without writing anything.

* ``DIR/cells/**.json`` — every cell found (:func:`scan_cells`,
  :class:`~embedding_ttc.analysis.cells.Cell`);
* a search run's ``ledger.jsonl`` and ``search.json`` (:func:`load_search_run`), for the Pareto
  and trajectory figures;
* ``DIR/heads/<encoder>.json`` — learned-head records (:func:`load_heads`), for the
  training-time panel.

The manifest, ``DIR/transfer.json``, has its own module (:mod:`~embedding_ttc.analysis.manifest`).
A missing or malformed input is a :class:`ReportError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from embedding_ttc.analysis.cells import Cell
from embedding_ttc.analysis.heads import HEADS_DIR, HeadRecord
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.config import RunConfig, RunConfigError, read_run_config
from embedding_ttc.runs.ledger import LEDGER_FILE
from embedding_ttc.runs.records import LedgerRecord


class ReportError(EmbeddingTTCError):
    """An input of the report is missing or malformed (the message names the file)."""


def scan_cells(out: Path) -> list[Cell]:
    """Every cell under ``out/cells``, in path order."""
    cells = []
    for path in sorted((out / "cells").glob("*/*/*.json")):
        try:
            cells.append(Cell.model_validate_json(path.read_text(encoding="utf-8")))
        except ValidationError as exc:
            raise ReportError(f"{path} is not a valid transfer cell: {exc}") from None
    return cells


@dataclass(frozen=True)
class SearchRun:
    """A search run directory read without touching it."""

    path: Path
    records: tuple[LedgerRecord, ...]
    config: RunConfig | None

    def label(self) -> str:
        """What the search ran on, for titles."""
        c = self.config
        if c is None:
            return "? on the ? suite, ?"
        model = f" / {c.model}" if c.model else ""
        return f"{c.encoder} on the {c.suite} suite ({len(c.tasks)} tasks), {c.proposer}{model}"


def load_search_run(run: Path) -> SearchRun:
    """Read ``run/ledger.jsonl`` (and ``search.json``) without writing anything.

    A final line cut short by a kill is ignored, as :class:`~embedding_ttc.runs.ledger.
    Ledger` would; any other malformed line is an error naming the file and line.

    Raises:
        ReportError: when the ledger is missing or malformed, or ``search.json`` is not a
            :class:`~embedding_ttc.runs.config.RunConfig`.

    """
    path = run / LEDGER_FILE
    if not path.is_file():
        raise ReportError(
            f"{path} does not exist: --search-run must name a search run directory "
            "(the folder of ledger.jsonl, search.json and programs/)"
        )
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if text and not text.endswith("\n"):
        lines = lines[:-1]  # an append cut short by a kill
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(LedgerRecord.model_validate_json(line))
        except ValidationError as exc:
            raise ReportError(f"{path}:{number}: not a ledger record: {exc}") from None
    try:
        config = read_run_config(run)
    except RunConfigError as exc:
        raise ReportError(str(exc)) from None
    return SearchRun(run, tuple(records), config)


def load_heads(out: Path) -> tuple[tuple[HeadRecord, ...], str]:
    """The learned-head records under ``out/heads``, and a note on what is missing or unread."""
    folder = out / HEADS_DIR
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not paths:
        return (), f"no learned-head records ({folder}/<encoder>.json absent)"
    records, problems = [], []
    for path in paths:
        try:
            records.append(HeadRecord.model_validate_json(path.read_text(encoding="utf-8")))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            problems.append(f"{path.name} is not a head_training record ({where}: {first['msg']})")
    return tuple(records), "; ".join(problems)
