"""The program registry: names -> program factories."""

from __future__ import annotations

from collections.abc import Callable

from embedding_ttc.programs.base import Program
from embedding_ttc.programs.p0 import P0
from embedding_ttc.registry import Registry

PROGRAMS: Registry[Callable[[], Program]] = Registry("program")
PROGRAMS.register("P0", P0)


def get_program(name: str) -> Program:
    """Build the program registered under ``name``."""
    return PROGRAMS.get(name)()


def resolve_program_names(names: list[str]) -> list[str]:
    """Expand ``all`` into every registered program; check the others exist."""
    out: list[str] = []
    for name in names:
        expanded = PROGRAMS.names() if name == "all" else [name]
        for n in expanded:
            PROGRAMS.get(n)
            if n not in out:
                out.append(n)
    return out
