"""The programs a tune run may pick besides the fusion it tunes and the programs it searches.

Every library program, as it is, and the selecting search's registered pick (a program file
of ``results/search-select``): with a few dozen tuning queries a tuned fusion can fit noise,
and a program chosen on other data can beat it. A program whose choice saw a task's queries is
no candidate on that task, or its numbers there would be in-sample: the paper's programs were
chosen on its discovery suite, the selecting search's programs on the tasks of its run, and the
library fusions' default weights on the discovery suite (``results/fusion-grid``; the tuned
fusions stand for them). :func:`candidates` lists each program with the reason it is left out,
if it is; a user's own data, on no list, leaves out none.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from embedding_ttc.programs.catalog import FRONTIER, PROGRAMS
from embedding_ttc.tasks.catalog import suite_tasks

REGISTERED_PICK = Path("results/search-select/programs/g0048.py")
"""The selecting search's registered pick, relative to a source checkout's root."""

SELECTING_RUN_TASKS: tuple[str, ...] = tuple(suite_tasks("discovery-wide"))
"""The tasks the selecting search ran on (``results/search-select/search.json``): its search
tasks chose its programs and its validation tasks chose its pick."""

PAPER_TASKS: tuple[str, ...] = tuple(suite_tasks("discovery"))
"""The discovery suite the paper's programs and the library fusions' defaults were chosen on."""

NOT_AS_THEY_ARE: frozenset[str] = frozenset({"RanxFusion"})
"""Library programs that are a family of tuned configurations, not one program: the tuned
fusions stand for them."""

CHOSEN_ON: Mapping[str, tuple[tuple[str, ...], str]] = {
    **{
        name: (PAPER_TASKS, "a paper program, chosen on the discovery suite")
        for name in (*FRONTIER, "SoftCentroid")
    },
    "ConvexHybrid": (PAPER_TASKS, "its default weight was chosen on the discovery suite"),
    "WeightedRRF": (PAPER_TASKS, "its default weight was chosen on the discovery suite"),
}
"""Library programs whose choice saw some tasks' queries: the tasks, and what chose them."""

Kind = Literal["library", "registered", "fusion", "searched"]


class Candidate(BaseModel):
    """A program the pick may name, or one left out with the reason.

    Attributes:
        name: the label in tables (a library program's name, a program file's stem).
        kind: ``library``, ``registered`` (the selecting search's pick), ``fusion`` (the tuned
            fusion) or ``searched`` (this run's search).
        program: the library program's name with its parameters, for library programs and
            the fusion.
        program_file: the program file, for registered and searched programs.
        excluded: why the candidate is left out (``None``: it is a candidate).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Kind
    program: str | None = None
    program_file: str | None = None
    excluded: str | None = None


def candidates(task: str, checkout: Path | None) -> list[Candidate]:
    """The library programs and the registered pick, each a candidate on ``task`` or not.

    Args:
        task: the task's name (a user's own folder matches no list).
        checkout: the source checkout holding ``results/`` (``None``: none, as in an
            installed package), where the registered pick is read from.

    """
    out = []
    for name in PROGRAMS.names():
        if name in NOT_AS_THEY_ARE:
            continue
        chosen = CHOSEN_ON.get(name)
        why = f"{chosen[1]}, which includes {task}" if chosen and task in chosen[0] else None
        out.append(Candidate(name=name, kind="library", program=name, excluded=why))
    path = None if checkout is None else checkout / REGISTERED_PICK
    if path is None or not path.is_file():
        why = f"{REGISTERED_PICK} is not in this installation (a source checkout has it)"
    elif task in SELECTING_RUN_TASKS:
        why = f"the selecting search's pick, chosen on discovery-wide, which includes {task}"
    else:
        why = None
    out.append(
        Candidate(
            name=REGISTERED_PICK.stem,
            kind="registered",
            program_file=str(path) if path is not None else str(REGISTERED_PICK),
            excluded=why,
        )
    )
    return out


def source_checkout() -> Path | None:
    """The source checkout this package runs from, if it runs from one (``results/`` beside)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "results").is_dir():
            return parent
    return None
