"""Which stored cells a run must recompute, and which only need their statistics redone.

A cell records its ``shortlist``, its ``query_sample`` and its program's ``version``, or for a
program file (:mod:`embedding_ttc.program_files.program_file`) the sha256 of its source; a stored
cell made under another setting than the run's for its task, by another version of its
program than the installed one, or from another source than the file's now, is stale and is
recomputed (:func:`to_compute`); cells of unchanged sources are reused. A cell whose
bootstrap was made with another configuration keeps its per-query scores and only gets its
statistics recomputed (:func:`restat_existing`), without encoding anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from embedding_ttc.analysis.cells import BootstrapConfig, CellKey, CellStore
from embedding_ttc.analysis.heads import LEARNED_HEAD
from embedding_ttc.analysis.plan import Plan, QuerySample, ShortlistPolicy
from embedding_ttc.programs.base import program_version
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.programs.primitives.tokenizers import tokenizer_name


def current_version(name: str) -> int:
    """The ``version`` of registered program ``name`` as installed (``LearnedHead``: 1)."""
    if name == LEARNED_HEAD:
        return 1
    return program_version(get_program(name))


def to_compute(
    plan: Plan,
    store: CellStore,
    shortlist: ShortlistPolicy,
    version: Callable[[str], int] = current_version,
    sample: QuerySample | None = None,
    sources: Mapping[str, str] | None = None,
) -> tuple[list[CellKey], list[CellKey]]:
    """The cells of ``plan`` that a run computes: those absent, and those stale.

    A stored cell is stale when it was computed under another shortlist than ``shortlist``
    gives for its task, on another query sample than ``sample`` gives, or by another program
    than the run's: for a program file (a name in ``sources``, mapped to the sha256 of its
    source), from another source; for a library program, by another version than
    ``version(name)`` (the installed one by default), or from a file of the same name; and
    any cell made under another tokenizer than the active one (a cell that records none
    predates the tokenizer setting: the library's lexical programs raised their versions
    with it, and the other programs do not tokenise).
    """
    sample = sample or QuerySample()
    sources = sources or {}
    absent = store.missing(plan)
    gone = set(absent)
    present = list(store.present(k for k in plan if k not in gone))
    library = {c.program for c in present if c.program not in sources}
    versions = {name: version(name) for name in library}
    active = tokenizer_name()
    stale = [
        c.key
        for c in present
        if c.shortlist != shortlist.k_for(c.task)
        or c.query_sample != sample.n_for(c.task)
        or c.source_sha256 != sources.get(c.program)
        or (c.program in library and c.program_version != versions[c.program])
        or (c.tokenizer is not None and c.tokenizer != active)
    ]
    return absent, stale


def restat_existing(
    keys: Iterable[CellKey], store: CellStore, bootstrap: BootstrapConfig
) -> list[CellKey]:
    """Recompute the bootstrap of stored cells made with another configuration (no encoding)."""
    out = []
    for cell in store.present(keys):
        if not cell.bootstrap.matches(bootstrap):
            store.write(cell.restat(bootstrap))
            out.append(cell.key)
    return out
