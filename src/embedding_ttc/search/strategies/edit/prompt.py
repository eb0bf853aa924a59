"""What the edit proposer's model reads: one parent program, its results, its lineage's lessons.

:func:`render_edit_prompt` writes, in this order:

1. the task in two sentences and the discovery tasks' names;
2. the program interface and the six constraints, short (as the compact prompt has them);
3. the helper functions a program may import, as many as the budget allows;
4. the parent program, whole, with its mean Δ on the search part;
5. the parent's result on each task against its own parent (the search part, the run's
   objective): where the last change helped and where it hurt;
6. the lessons of its lineage (:func:`~embedding_ttc.search.lessons.lineage`), newest first;
7. the idea to add, when the proposer names one (:mod:`.suggest`): its instruction, as a new
   channel of the parent's fusion;
8. what to return: search/replace blocks (:mod:`.blocks`) changing one idea, shown by an
   example made from the parent's own last line (:func:`format_example`), then a
   ``Novelty:`` and a ``Hypothesis:`` line.

Sections 1 to 3 depend only on the run, so llama.cpp keeps them in its KV cache from one
generation to the next.
"""

from __future__ import annotations

import ast

from embedding_ttc.search.backends.base import estimate_tokens
from embedding_ttc.search.population import Parent
from embedding_ttc.search.prompts import DEFAULT_EDIT_CONTEXT_TOKENS
from embedding_ttc.search.prompts.common import (
    TokenCounter,
    fenced,
    numbered_constraints,
    section,
    task_introduction,
)
from embedding_ttc.search.prompts.helper_list import MIN_HELPERS, fit_helpers, helper_section
from embedding_ttc.search.prompts.inspirations import Inspiration
from embedding_ttc.search.prompts.lineage import lessons_section, results_section
from embedding_ttc.search.prompts.small_model import INTERFACE, SHORT_CONSTRAINTS
from embedding_ttc.search.state import SearchState
from embedding_ttc.search.strategies.edit.blocks import strip_comment

HELPER_TOKENS = 900
"""Tokens the helper list may take beyond its minimum."""

EXAMPLE_COMMENT = "an example: this block changes only the comment"

FORMAT = """\
<<<<<<< SEARCH
    lines copied EXACTLY from the program above (a few lines around the change)
=======
    the lines that replace them
>>>>>>> REPLACE"""


def render_edit_prompt(
    state: SearchState,
    parent: Parent,
    *,
    context_tokens: int = DEFAULT_EDIT_CONTEXT_TOKENS,
    count_tokens: TokenCounter | None = None,
    idea: Inspiration | None = None,
) -> str:
    """The prompt of one edit of ``parent`` (see the module docstring); deterministic.

    Raises:
        ValueError: if the budget cannot hold the fixed sections and the parent program.

    """
    count = count_tokens or estimate_tokens
    head = [
        task_introduction(
            state,
            "Improve one retrieval program by editing it",
            "a program rescores their cosine matrix S so that nDCG@10 rises on every task. You "
            "change ONE idea of the program below with a small edit.",
        ),
        section("Interface", fenced(INTERFACE, "text"), spaced=False),
        section(
            "Constraints (a program that breaks one is rejected)",
            numbered_constraints(SHORT_CONSTRAINTS),
            spaced=False,
        ),
    ]
    body = [
        _parent_section(parent),
        results_section(state, parent.record) if parent.record is not None else "",
        lessons_section(state, parent.name),
        _idea_section(idea) if idea is not None else "",
        _reply_section(state, parent, idea),
    ]
    minimum = _join([*head, helper_section(MIN_HELPERS), *body])
    if count(minimum) > context_tokens:
        raise ValueError(
            f"an edit prompt of {parent.name} needs {count(minimum)} tokens; "
            f"the budget of {context_tokens} is too small"
        )
    spare = min(HELPER_TOKENS, context_tokens - count(minimum))
    helpers = fit_helpers(count, count(helper_section(MIN_HELPERS)) + spare)
    return _join([*head, helpers, *body]) + "\n"


def _join(parts: list[str]) -> str:
    return "\n\n".join(p for p in parts if p)


def _parent_section(parent: Parent) -> str:
    r = parent.record
    if r is None:
        title = (
            f"The program to edit: {parent.name}, the library program this run is compared "
            "with (every Δ of the run is against it or P0)"
        )
        return section(title, fenced(parent.source.rstrip()), spaced=False)
    mean = f"{r.mean_delta:+.4f}" if r.mean_delta is not None else "n/a"
    cost = f", c = {r.cost_ratio:.2f}" if r.cost_ratio is not None else ""
    return section(
        f"The program to edit: {r.program_id} (mean Δ {mean}{cost})",
        fenced(parent.source.rstrip()),
        spaced=False,
    )


def format_example(source: str) -> str:
    """A block in the reply format, made from one line of ``source``'s ``program``.

    A small model copies the shape it is shown, even its stand-in lines; an example whose
    SEARCH part is a real line of the program and whose change is only its comment (a copy
    of it is the parent's structure, which the novelty check refuses) shows the format
    without suggesting an idea. The line is the first one-line statement of ``program``'s
    body other than a ``return`` (an edit most often changes the last line, and a model mixes
    up an example made from the line it wants to change), else its last ``return``; without
    either, the generic :data:`FORMAT`.
    """
    try:
        module = ast.parse(source)
    except SyntaxError:
        return FORMAT
    program = next(
        (n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "program"), None
    )
    if program is None:
        return FORMAT
    lines = source.splitlines()
    whole = [  # one-line statements (a docstring is not one)
        n for n in program.body if n.lineno == n.end_lineno and not isinstance(n, ast.Expr)
    ]
    others = [n for n in whole if not isinstance(n, ast.Return)]
    returns = [n for n in whole if isinstance(n, ast.Return)]
    chosen = others[0] if others else (returns[-1] if returns else None)
    if chosen is None:
        return FORMAT
    line = lines[chosen.lineno - 1]
    indent = line[: len(line) - len(line.lstrip())]
    code = strip_comment(line).strip()
    return f"<<<<<<< SEARCH\n{line}\n=======\n{indent}{code}  # {EXAMPLE_COMMENT}\n>>>>>>> REPLACE"


def _idea_section(idea: Inspiration) -> str:
    return section(
        f"The idea to add: {idea.title}",
        f"{idea.instruction}\nKeep the program's channels and add this one to its fusion (a "
        "new line computing the channel, and the channel added to the list the program "
        "fuses).",
        spaced=False,
    )


def _reply_section(state: SearchState, parent: Parent, idea: Inspiration | None = None) -> str:
    what = (
        f"Add the idea above ({idea.title}) as ONE new channel"
        if idea is not None
        else "Change ONE idea: add, drop or swap one channel, normalisation, fusion or "
        "feedback step, guided by the results and lessons above"
    )
    return section(
        f"Your edit (generation {state.generation})",
        f"{what}. Reply with one or more blocks of "
        "search/replace, each SEARCH part copied exactly from the program. For example, "
        "this block only rewrites a comment (yours must change code):\n"
        f"{fenced(format_example(parent.source), 'text')}\n"
        "Then one line `Novelty: ...` (what you changed) and one line `Hypothesis: ...` "
        "(why it should raise nDCG@10). Do not repeat the whole program; use only the "
        "helpers listed above.",
        spaced=False,
    )
