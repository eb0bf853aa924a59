"""What ``embedding-ttc programs`` shows: every registered program, described from itself.

Each :class:`ProgramEntry` is read from the program, never written beside it: its name, the
groups that name it, its ``version``, the first line of its docstring and the cost recipe it
declares for deployment (what it precomputes per document at index time, what it encodes per
query at query time, how a batch of queries is answered).
"""

from __future__ import annotations

import inspect

from pydantic import BaseModel, ConfigDict

from embedding_ttc.programs.catalog import GROUPS, PROGRAMS, get_program, parse_name
from embedding_ttc.programs.recipe import recipe_of


class ProgramEntry(BaseModel):
    """One registered program as the listing shows it.

    Attributes:
        name: the registered name (what ``--program`` takes).
        groups: the groups whose members include it (by base name), in registration order.
        version: the program's ``version`` (raised whenever its scores change).
        description: the first line of its docstring.
        index_time: the document-side encodes an index precomputes, besides the documents.
        lexical: whether it has lexical channels (BM25 statistics kept by an index).
        query_encodes: texts encoded per query at query time besides the query itself, for an
            encoder with distinct views.
        query_encodes_collapsed: the same for an encoder whose views collapse.
        batch: how its scores depend on the batch of queries (``independent``,
            ``candidates`` or ``reference``).

    """

    model_config = ConfigDict(frozen=True)

    name: str
    groups: tuple[str, ...]
    version: int
    description: str
    index_time: tuple[str, ...]
    lexical: bool
    query_encodes: int
    query_encodes_collapsed: int
    batch: str


def _first_line(obj: object) -> str:
    doc = inspect.getdoc(type(obj)) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def program_entries() -> list[ProgramEntry]:
    """Every registered program, in registration order."""
    member_of: dict[str, list[str]] = {}
    for group, members in GROUPS.items():
        for member in members:
            base = parse_name(member)[0]
            if group not in member_of.setdefault(base, []):
                member_of[base].append(group)
    entries = []
    for name in PROGRAMS.names():
        program = get_program(name)
        recipe = recipe_of(program)
        entries.append(
            ProgramEntry(
                name=name,
                groups=tuple(member_of.get(name, ())),
                version=int(getattr(program, "version", 1)),
                description=_first_line(program),
                index_time=tuple(a.describe() for a in recipe.artifacts),
                lexical=recipe.lexical,
                query_encodes=recipe.query_encodes,
                query_encodes_collapsed=recipe.query_encodes_collapsed,
                batch=recipe.batch,
            )
        )
    return entries


def group_members() -> dict[str, list[str]]:
    """Every program group with its members (``all`` being every registered name)."""
    return {"all": PROGRAMS.names(), **{g: list(m) for g, m in GROUPS.items()}}
