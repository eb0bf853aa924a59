"""The search's memory: ``RUN_DIR/ledger.jsonl`` and the program sources beside it.

Layout::

    RUN_DIR/ledger.jsonl          one LedgerRecord per candidate, in generation order
    RUN_DIR/programs/<id>.py      the source of every candidate that had one
    RUN_DIR/search.json           the run's configuration (:mod:`~embedding_ttc.runs.config`)

Write order makes a SIGKILL at any moment harmless: the source is written to a temporary
name, fsynced and renamed first; then the record is appended as one line, flushed and fsynced.
A generation exists exactly when its line does. On open, a final line without its newline
(the only thing a kill can leave) is cut off, and that generation runs again; a source file
without a line is overwritten by the re-run. Any other malformed line is an error naming it
(:mod:`embedding_ttc.durable` does the writing and reading).
"""

from __future__ import annotations

from pathlib import Path

from embedding_ttc.durable import append_record, cut_torn_tail, read_records, write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.records import LedgerRecord

LEDGER_FILE = "ledger.jsonl"
PROGRAMS_DIR = "programs"


class LedgerError(EmbeddingTTCError):
    """The ledger file is malformed (not merely cut short by a kill)."""


class Ledger:
    """Append-only JSONL ledger of a search run; the single source of truth.

    Args:
        run_dir: the run directory (created if absent).

    """

    def __init__(self, run_dir: Path | str) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LEDGER_FILE
        self.programs_dir = self.run_dir / PROGRAMS_DIR
        self.programs_dir.mkdir(parents=True, exist_ok=True)
        self._records = self._load()

    def _load(self) -> list[LedgerRecord]:
        # A kill during an append leaves a final line without its newline: cut it, durably,
        # before anything else, so that generation runs again.
        cut_torn_tail(self.path)
        return read_records(self.path, LedgerRecord, LedgerError, "a ledger record")

    @property
    def records(self) -> tuple[LedgerRecord, ...]:
        """Every record, in the order appended."""
        return tuple(self._records)

    @property
    def last_generation(self) -> int:
        """The highest generation recorded (-1 for an empty ledger)."""
        return max((r.generation for r in self._records), default=-1)

    def source_path(self, program_id: str) -> Path:
        """Where a program's source lives."""
        return self.programs_dir / f"{program_id}.py"

    def save_source(self, program_id: str, source: str) -> Path:
        """Write a candidate's source durably (before its record is appended)."""
        path = self.source_path(program_id)
        write_atomic(path, source)
        return path

    def source(self, record: LedgerRecord) -> str | None:
        """A record's program source, if it had one."""
        if record.source_path is None:
            return None
        return (self.run_dir / record.source_path).read_text(encoding="utf-8")

    def append(self, record: LedgerRecord) -> None:
        """Append one record as one line; flushed and fsynced before returning."""
        if any(r.program_id == record.program_id for r in self._records):
            raise LedgerError(f"program id {record.program_id!r} is already in {self.path}")
        append_record(self.path, record)
        self._records.append(record)
