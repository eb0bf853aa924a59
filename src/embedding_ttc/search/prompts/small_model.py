"""A compact prompt for small local code models, within a token budget, with one directive.

A 1.5B-parameter code model reading the full prompt of
:mod:`~embedding_ttc.search.prompts.full` (about 4k tokens of prose) tends to copy an example
or to call helpers that do not exist. :func:`render_compact_prompt` gives it less to read and
more to copy from, in this order:

1. the task in two sentences and the discovery tasks' names;
2. the program interface, short, with shapes;
3. the six constraints, one line each (:data:`SHORT_CONSTRAINTS`);
4. the helper functions a program may import, one line each, with what each returns, as far
   as the budget allows (:mod:`~embedding_ttc.search.prompts.helper_list`);
5. two short worked example programs, valid and structurally different
   (:data:`~embedding_ttc.search.prompts.examples.EXAMPLES`);
6. the top frontier programs (P0 left out), abridged: docstrings and comments dropped, then
   the least good ones cut or dropped until they fit;
7. the history as a compact table (id, status, mean Δ, c, note cut to
   :data:`NOTE_CHARS`), the most recent rows that fit;
8. ONE concrete directive for this generation
   (:func:`~embedding_ttc.search.prompts.directives.choose_directive`).

Sections 1 to 5 depend only on the run (tasks, budget), never on the generation: they form a
prefix that stays the same from call to call, which llama.cpp keeps in its KV cache, so only
the frontier, the history and the directive are read again each generation.

Tokens are counted with ``count_tokens`` when given (the llama-cpp proposer passes its
tokenizer), else estimated at four characters a token
(:func:`~embedding_ttc.search.backends.base.estimate_tokens`).
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from collections.abc import Mapping

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.backends.base import estimate_tokens
from embedding_ttc.search.prompts import DEFAULT_CONTEXT_TOKENS
from embedding_ttc.search.prompts.common import (
    TokenCounter,
    clip,
    fenced,
    is_p0,
    numbered_constraints,
    section,
    status_counts,
    task_introduction,
)
from embedding_ttc.search.prompts.directives import Directive
from embedding_ttc.search.prompts.examples import EXAMPLES
from embedding_ttc.search.prompts.helper_list import MIN_HELPERS, fit_helpers, helper_section
from embedding_ttc.search.state import FrontierProgram, SearchState

NOTE_CHARS = 60
"""Longest note (novelty claim or failure reason) in the history table."""

HELPER_SHARE = 0.4
"""Share of the budget left after the fixed sections that the helper list may take."""

FRONTIER_SHARE = 0.6
"""Share of the budget left after the helpers that the frontier programs may take."""

DIRECTIVE_RESERVE = 220
"""Tokens kept for the directive section when the run-constant sections are sized."""

SHORT_CONSTRAINTS: Mapping[str, str] = {
    "task-universal": "never branch on the task (no dataset names, no size thresholds, no "
    "text sniffing).",
    "global-constants": "every constant is a fixed module-level value; nothing is tuned per task.",
    "deterministic": "same input, bit-identical output (no randomness without a fixed seed, no "
    "time, no set order).",
    "no-external-model": "only ctx.encode_fn; import only numpy, math, re, collections, "
    "itertools, functools, heapq, unicodedata, string and embedding_ttc.programs.primitives.*; "
    "no files, network or processes.",
    "novel": "structurally different from every registered program (not a copy with new "
    "constants or names).",
    "all-tasks": "run once as written on every task; the score is the mean ΔnDCG@10.",
}
"""The six constraints of the program-file contract, one line each."""

INTERFACE = """\
def program(Q, D, S, ctx):   # returns a NEW float32 array with S.shape
    Q: (n_q, d) float32 query embeddings, unit-norm rows
    D: (n_d, d) float32 document embeddings, unit-norm rows
    S: (n_q, n_d) float32 = Q @ D.T, cosine scores, higher is better; never modify S in place
    ctx.query_texts: n_q strings; ctx.doc_texts: n_d strings (rows / columns of S)
    ctx.encode_fn(texts, view="retrieval.query", dim=None) -> (len(texts), d) unit rows
        views: "retrieval.query", "retrieval.passage", "text-matching", "classification";
        every text encoded costs 1 unit: encode each text once
    with ctx.index_time(): put document-side encodes inside (index-time work)
    ctx.candidates: None, or per query an int array of the columns it ranks; build
        mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates) and pass mask="""


# ---------------------------------------------------------------------------------------------
# Rendering


def render_compact_prompt(
    state: SearchState,
    *,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    directive: Directive,
    count_tokens: TokenCounter | None = None,
) -> str:
    """Render the compact prompt for ``state`` within ``context_tokens`` (deterministic).

    Args:
        state: what the proposer may look at.
        context_tokens: the prompt's budget in tokens.
        directive: what this generation is asked to build.
        count_tokens: a tokenizer's counter; ``None`` estimates four characters a token.

    Returns:
        The prompt text, at most ``context_tokens`` tokens long.

    Raises:
        ValueError: if the budget cannot hold even the fixed sections.

    """
    count = count_tokens or estimate_tokens
    fixed_head = [
        task_introduction(
            state,
            "Write one retrieval program",
            "the baseline ranks documents by the cosine matrix S. Write a Python program that "
            "rescores S so that nDCG@10 rises on every task, using few extra encoder calls.",
        ),
        section("Interface", fenced(INTERFACE, "text"), spaced=False),
        _constraints(),
    ]
    examples = _examples()
    closing = _directive_section(state, directive)
    core = count(_join([*fixed_head, helper_section(MIN_HELPERS), examples, closing]))
    if core > context_tokens:
        raise ValueError(
            f"a compact prompt needs at least {core} tokens here; --context-tokens "
            f"{context_tokens} is too small"
        )
    # The helper list is sized from run constants only, so the prompt's head never changes.
    static = count(_join([*fixed_head, helper_section(MIN_HELPERS), examples]))
    spare = max(0, context_tokens - static - DIRECTIVE_RESERVE)
    helpers = fit_helpers(count, int(HELPER_SHARE * spare) + count(helper_section(MIN_HELPERS)))
    head = _join([*fixed_head, helpers, examples])
    left = context_tokens - count(_join([head, closing])) - 8  # separators
    frontier = _fit_frontier(state, count, int(FRONTIER_SHARE * left))
    history_budget = left - (count(frontier) + 2 if frontier else 0)
    history = _fit_history(state, count, history_budget)
    text = _join([head, frontier, history, closing]) + "\n"
    while count(text) > context_tokens and (history or frontier):
        # Tokenizers merge across section boundaries; trim until the whole text fits.
        if history:
            history = _fit_history(state, count, count(history) - 20)
        else:
            frontier = _fit_frontier(state, count, count(frontier) - 20)
        text = _join([head, frontier, history, closing]) + "\n"
    return text


def _join(parts: list[str]) -> str:
    return "\n\n".join(p for p in parts if p)


def _constraints() -> str:
    title = "Constraints (a program that breaks one is rejected)"
    return section(title, numbered_constraints(SHORT_CONSTRAINTS), spaced=False)


def _examples() -> str:
    parts = [
        f"### Example {chr(ord('A') + i)}: {e.title}\n{fenced(e.source)}"
        for i, e in enumerate(EXAMPLES)
    ]
    return section(
        "Two worked examples (valid programs; yours must be structurally different)",
        "\n".join(parts),
        spaced=False,
    )


def _directive_section(state: SearchState, directive: Directive) -> str:
    return section(
        f"Your task now (generation {state.generation})",
        f"{directive.text}\n"
        "Reply with ONE ```python block holding the whole file: a docstring with a "
        '"Novelty:" line and a "Hypothesis:" line, the imports, module-level constants, and '
        "def program(Q, D, S, ctx) returning a float32 array of shape S.shape. Use only the "
        "helpers listed above, with the arguments shown.",
        spaced=False,
    )


# Frontier -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def abridge(source: str) -> str:
    """The source without docstrings, comments and blank-line runs (still valid Python)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return _strip_comments(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return _strip_comments(ast.unparse(tree))


def _strip_comments(source: str) -> str:
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type != tokenize.COMMENT
        ]
        text = tokenize.untokenize(tokens)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        text = source
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")


def _frontier_entry(program: FrontierProgram, lines: int | None) -> str:
    record = program.record
    facts = []
    if record.mean_delta is not None:
        facts.append(f"mean Δ {record.mean_delta:+.4f}")
    if record.cost_ratio is not None:
        facts.append(f"c {record.cost_ratio:.2f}")
    code = abridge(program.source).splitlines()
    if lines is not None and lines < len(code):
        code = [*code[:lines], "    ...  # (truncated)"]
    note = clip(record.novelty, 100)
    head = f"### {record.program_id} ({', '.join(facts)})" + (f": {note}" if note else "")
    return f"{head}\n{fenced(chr(10).join(code))}"


def _fit_frontier(state: SearchState, count: TokenCounter, budget: int) -> str:
    """Best-first frontier programs; the least good are cut, then dropped, to fit."""
    shown = [p for p in state.frontier if not is_p0(p.record)]
    if not shown or budget <= 0:
        return ""
    title = "Frontier programs, best first (docstrings and comments removed)"
    limits: list[int | None] = [None] * len(shown)

    def render() -> str:
        entries = [_frontier_entry(p, n) for p, n in zip(shown, limits, strict=True)]
        return section(title, "\n".join(entries), spaced=False)

    while shown:
        text = render()
        if count(text) <= budget:
            return text
        # Cut the least good program in half; drop it once it is down to a few lines.
        last = len(shown) - 1
        full = len(abridge(shown[last].source).splitlines())
        current = limits[last] if limits[last] is not None else full
        if current is not None and current > 6:
            limits[last] = current // 2
        else:
            shown.pop()
            limits.pop()
    return ""


# History ------------------------------------------------------------------------------------


def _history_row(record: LedgerRecord) -> str:
    ok = record.status == Status.OK
    mean = f"{record.mean_delta:+.4f}" if ok and record.mean_delta is not None else "-"
    cost = f"{record.cost_ratio:.2f}" if ok and record.cost_ratio is not None else "-"
    note = record.novelty if ok else record.reason
    cells = [record.program_id, record.status.value, mean, cost, clip(note, NOTE_CHARS)]
    return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"


def _fit_history(state: SearchState, count: TokenCounter, budget: int) -> str:
    """The most recent rows of the history table that fit in ``budget``."""
    if not state.history or budget <= 0:
        return ""
    n = len(state.history)
    counts = status_counts(state.history)
    summary = ", ".join(f"{k} {v}" for k, v in counts.items())
    header = [
        "| id | status | mean Δ | c | note (novelty, or why it failed) |",
        "|---|---|---|---|---|",
    ]
    rows: list[str] = []
    for record in reversed(state.history):
        trial = [_history_row(record), *rows]
        text = _history_text(n, len(trial), summary, header, trial)
        if count(text) > budget:
            break
        rows = trial
    if not rows:
        return ""
    return _history_text(n, len(rows), summary, header, rows)


def _history_text(n: int, shown: int, summary: str, header: list[str], rows: list[str]) -> str:
    scope = f"the last {shown} of {n}" if shown < n else f"all {n}"
    body = (
        f"{n} programs so far ({summary}); {scope} "
        "(Δ: nDCG@10 minus the baseline's; c: cost ratio):"
    )
    return section("History", "\n".join([body, *header, *rows]), spaced=False)
