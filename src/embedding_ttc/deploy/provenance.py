"""Where a program file comes from: its header's claims, and its search run's ledger line.

A search writes every candidate to ``RUN/programs/ID.py`` and its record to
``RUN/ledger.jsonl`` (:mod:`embedding_ttc.runs.ledger`). When a program file sits in such a
place and the ledger has a line for its id, the run, the generation, the proposer and the
parent are taken from that line. The file's own header (the ``Novelty:``, ``Hypothesis:`` and
``Parent:`` lines of its docstring, read as the search reads a proposer's reply,
:mod:`embedding_ttc.program_files.parse`) is used wherever it says something, so a file copied out
of its run keeps its claims.

Provenance is a record of what is known, never a condition of the build: a file outside a run,
or a ledger that cannot be read (a search still writing it), leaves those fields empty.
"""

from __future__ import annotations

from pathlib import Path

from embedding_ttc.deploy.program_records import Provenance
from embedding_ttc.durable import read_records
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.program_files.parse import parse_reply
from embedding_ttc.runs.ledger import LEDGER_FILE, PROGRAMS_DIR
from embedding_ttc.runs.records import LedgerRecord


def _ledger_line(path: Path) -> tuple[Path, LedgerRecord] | None:
    """The run directory and the ledger record of the program file at ``path``, if any."""
    if path.parent.name != PROGRAMS_DIR:
        return None
    run = path.parent.parent
    try:
        records = read_records(run / LEDGER_FILE, LedgerRecord, EmbeddingTTCError, "a record")
    except (EmbeddingTTCError, OSError):
        return None  # unreadable: the provenance says less, the build goes on
    for record in records:
        if record.program_id == path.stem:
            return run, record
    return None


def provenance_of(path: Path, source: str) -> Provenance:
    """What is known of where the program file at ``path`` (text ``source``) comes from."""
    header = parse_reply(source)
    found = _ledger_line(path)
    if found is None:
        return Provenance(
            file=str(path),
            parent_id=header.parent_id,
            novelty=header.novelty,
            hypothesis=header.hypothesis,
        )
    run, record = found
    return Provenance(
        file=str(path),
        search_run=str(run),
        generation=record.generation,
        proposer=record.proposer,
        parent_id=record.parent_id or header.parent_id,
        novelty=header.novelty or record.novelty,
        hypothesis=header.hypothesis or record.hypothesis,
    )
