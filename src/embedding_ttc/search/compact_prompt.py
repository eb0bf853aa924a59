"""A compact prompt for small local code models, within a token budget, with one directive.

A 1.5B-parameter code model reading the full prompt of :mod:`~embedding_ttc.search.prompt`
(about 4k tokens of prose) tends to copy an example or to call helpers that do not exist.
:func:`render_compact_prompt` gives it less to read and more to copy from, in this order:

1. the task in two sentences and the discovery tasks' names;
2. the program interface, short, with shapes;
3. the six constraints, one line each (:data:`SHORT_CONSTRAINTS`);
4. the helper functions a program may import, one line each, taken from
   :func:`~embedding_ttc.search.prompt.primitive_reference` so they never drift from the code,
   with what each returns (:data:`RETURNS`: shapes are what small models get wrong), grouped
   under the import line to copy, the most useful first (:data:`PRIMITIVE_PRIORITY`) as far
   as the budget allows;
5. two short worked example programs, valid and structurally different (:data:`EXAMPLES`);
6. the top frontier programs (P0 left out), abridged: docstrings and comments dropped, then
   the least good ones cut or dropped until they fit;
7. the history as a compact table (id, status, mean Δ, c, note cut to
   :data:`NOTE_CHARS`), the most recent rows that fit;
8. ONE concrete :class:`Directive` for this generation (:func:`choose_directive`).

Sections 1 to 5 depend only on the run (tasks, budget), never on the generation: they form a
prefix that stays the same from call to call, which llama.cpp keeps in its KV cache, so only
the frontier, the history and the directive are read again each generation.

Tokens are counted with ``count_tokens`` when given (the llama-cpp proposer passes its
tokenizer), else estimated at four characters a token
(:func:`~embedding_ttc.search.proposers.base.estimate_tokens`).
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from embedding_ttc.search.interface import CONSTRAINTS, Status
from embedding_ttc.search.novelty import structure
from embedding_ttc.search.prompt import primitive_reference
from embedding_ttc.search.proposers.base import estimate_tokens
from embedding_ttc.search.records import FrontierProgram, LedgerRecord, SearchState

__all__ = [
    "COMPACT_INSPIRATIONS",
    "EXAMPLES",
    "Directive",
    "choose_directive",
    "example_structures",
    "helper_modules",
    "helper_signature",
    "render_compact_prompt",
]

TokenCounter = Callable[[str], int]

DEFAULT_CONTEXT_TOKENS = 3000
"""The default budget of the compact prompt (``--context-tokens``)."""

NOTE_CHARS = 60
"""Longest note (novelty claim or failure reason) in the history table."""

HELPER_SHARE = 0.4
"""Share of the budget left after the fixed sections that the helper list may take."""

FRONTIER_SHARE = 0.6
"""Share of the budget left after the helpers that the frontier programs may take."""

DIRECTIVE_RESERVE = 220
"""Tokens kept for the directive section when the run-constant sections are sized."""

MIN_HELPERS = 10
"""Helpers always listed, budget or not (the first of :data:`PRIMITIVE_PRIORITY`)."""

HELPER_LINE_CHARS = 130
"""Longest helper line (signature and summary), then ``…``."""

COMBINE_EVERY = 3
"""Every this many generations, when two frontier programs exist, the directive combines them."""

PRIMITIVE_PACKAGE = "embedding_ttc.programs.primitives"

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
"""The six constraints of :data:`~embedding_ttc.search.interface.CONSTRAINTS`, one line each."""

PRIMITIVE_PRIORITY: tuple[str, ...] = (
    "fuse",
    "chunk_scores",
    "bm25_scores",
    "view_scores",
    "query_view_scores",
    "prf_scores",
    "prefix_scores",
    "candidate_mask",
    "zscore_rows",
    "zscore_cols",
    "rrf",
    "top_k_indices",
    "chunk_documents",
    "split_sentences",
    "maxsim",
    "Chunks",
    "soft_centroid_query",
    "BM25",
    "query_term_coverage",
    "split_paragraphs",
    "ranks",
    "bottom_k_indices",
    "sentence_pairs",
    "topmeansim",
    "tokenize",
    "rare_term_idf",
    "bigram_overlap",
    "fisher_direction",
    "median_split",
    "vprf_update",
    "softmax_centroid",
    "query_residual",
    "rank_stability",
    "idf",
    "centroid",
    "rocchio",
)
"""Helpers in the order they are listed while the budget allows; the rest follow in the
reference's order. Constants are never listed (the examples show the few that matter).
``centroid`` and ``rocchio`` come last: they take one query's vector and one set of rows, and
the 1.5B model called them on whole matrices in most of the drafts that used them."""

RETURNS: Mapping[str, str] = {
    "fuse": "(n_q, n_d)",
    "chunk_scores": "(n_q, n_d)",
    "bm25_scores": "(n_q, n_d)",
    "view_scores": "(n_q, n_d)",
    "query_view_scores": "(n_q, n_d)",
    "prf_scores": "(n_q, n_d)",
    "prefix_scores": "(n_q, n_d)",
    "candidate_mask": "None or (n_q, n_d) bool",
    "zscore_rows": "(n_q, n_d)",
    "zscore_cols": "(n_q, n_d)",
    "ranks": "(n_q, n_d)",
    "rrf": "(n_q, n_d)",
    "top_k_indices": "list of n_q int arrays",
    "bottom_k_indices": "list of n_q int arrays",
    "median_split": "(above, below), two (n_q, n_d) bool masks",
    "centroid": "(d,)",
    "rocchio": "shape of q",
    "vprf_update": "(n_q, d)",
    "softmax_centroid": "(n_q, d)",
    "soft_centroid_query": "(n_q, d)",
    "query_residual": "shape of q",
    "fisher_direction": "(d,)",
    "fisher_lda_direction": "(d,)",
    "rank_stability": "(n_q, n_d)",
    "maxsim": "(n_q, n_d)",
    "topmeansim": "(n_q, n_d)",
    "chunk_documents": "Chunks with .texts (list of str), .owner (int array), .n_docs",
    "split_sentences": "list of str",
    "split_paragraphs": "list of str",
    "sentence_pairs": "list of str",
    "tokenize": "list of str",
    "query_term_coverage": "(n_q, n_d)",
    "bigram_overlap": "(n_q, n_d)",
    "rare_term_idf": "(n_q, n_d)",
    ".fit": "an index: BM25.fit(ctx.doc_texts).scores(ctx.query_texts)",
    ".scores": "(n_q, n_d)",
}
"""What a helper returns, shown after its signature: most small-model errors are shapes."""

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


@dataclass(frozen=True)
class Example:
    """A worked example program shown in the compact prompt."""

    name: str
    title: str
    source: str


EXAMPLES: tuple[Example, ...] = (
    Example(
        name="example:reversed_view_fusion",
        title="a reversed-view channel fused with S by row z-scores",
        source='''\
"""Novelty: fuses S with the documents re-encoded as queries (a reversed view).
Hypothesis: a second view of each document corrects the passage view's bias."""
from embedding_ttc.programs.primitives.channels import fuse, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask

W_S = 1.0
W_REV = 0.5


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # None or (n_q, n_d) bool
    S_rev = view_scores(Q, ctx, "retrieval.query")  # (n_q, n_d); documents encoded once
    return fuse([S, S_rev], [W_S, W_REV], mask)  # float32 (n_q, n_d)
''',
    ),
    Example(
        name="example:rocchio_refine",
        title="Rocchio refinement of each query with its top documents",
        source='''\
"""Novelty: moves each query toward the mean of its top-3 documents, then rescores.
Hypothesis: the best documents share the vocabulary the query lacks."""
import numpy as np
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices

K = 3
ALPHA = 0.7


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    top = top_k_indices(S, K, mask)  # list: per query, an int array of <= K columns
    Q_new = Q.copy()
    for i in range(Q.shape[0]):
        if len(top[i]) > 0:
            q = ALPHA * Q[i] + (1.0 - ALPHA) * D[top[i]].mean(axis=0)
            Q_new[i] = q / np.linalg.norm(q)
    out = 0.5 * S + 0.5 * (Q_new @ D.T)  # (n_q, n_d)
    return out.astype(np.float32)
''',
    ),
)
"""Two valid programs of different structure: a ready-made channel fused by z-scores, and a
feedback loop written with numpy over the query vectors."""


@functools.cache
def example_structures() -> dict[str, tuple[str, ...]]:
    """The examples' structures, so a pre-check can refuse a copy of an example."""
    return {e.name: structure(e.source) for e in EXAMPLES}


# ---------------------------------------------------------------------------------------------
# Directives


@dataclass(frozen=True)
class Inspiration:
    """A research idea a directive can point at.

    Attributes:
        key: short identifier.
        title: the idea's name.
        instruction: what to build, concretely, naming the helpers to use.
        keywords: lower-case words whose presence in a novelty claim means the idea was tried.

    """

    key: str
    title: str
    instruction: str
    keywords: tuple[str, ...]


COMPACT_INSPIRATIONS: tuple[Inspiration, ...] = (
    Inspiration(
        "rocchio",
        "Rocchio pseudo-relevance feedback",
        "Move each query toward its top-ranked documents: P = prf_scores(Q, D, S, k=K, "
        "alpha=ALPHA, mask=mask) is the moved query's cosine matrix. Add a second round fed "
        "by the first one's ranking, P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2, mask=mask), "
        "and fuse the channels with S: fuse([S, P, P2], [weights], mask).",
        ("rocchio", "feedback", "prf", "centroid"),
    ),
    Inspiration(
        "maxsim",
        "ColBERT MaxSim over sentences",
        "Score each document by its best sentence: M = chunk_scores(Q, ctx, "
        '"sentence", "max", mask). Fuse M with S and with a second granularity '
        '(chunk_scores(Q, ctx, "paragraph", "topmean", mask)): fuse([S, M, M2], '
        "[weights], mask).",
        ("maxsim", "sentence", "colbert", "chunk"),
    ),
    Inspiration(
        "views",
        "Cross-view voting",
        'Score the documents under other views: view_scores(Q, ctx, "text-matching"), '
        'view_scores(Q, ctx, "classification"), and the queries under another view: '
        'query_view_scores(D, ctx, "text-matching"). Let S and these views vote by rank: '
        'fuse([S, V1, V2, V3], None, mask, "rrf").',
        ("view", "voting", "vote", "adapter", "text-matching", "classification"),
    ),
    Inspiration(
        "matryoshka",
        "Matryoshka cascading (dimension truncation)",
        "Score with prefixes of the dimensions as coarse channels, P1 = prefix_scores(Q, D, "
        "Q.shape[1] // 4) and P2 = prefix_scores(Q, D, Q.shape[1] // 2); keep S as the fine "
        "channel, and fuse them: fuse([S, P2, P1], [weights], mask), the coarser the "
        "smaller the weight.",
        ("matryoshka", "truncat", "prefix", "dimension", "cascad"),
    ),
    Inspiration(
        "substructure",
        "Document substructure decomposition",
        "Score documents by their pieces at two granularities: chunk_scores(Q, ctx, "
        '"paragraph", "max", mask) and chunk_scores(Q, ctx, "sentence_pair", "topmean", '
        "mask); mix the best piece and the mean piece and fuse with S: fuse([S, A, B], "
        "[weights], mask).",
        ("paragraph", "substructure", "granularit", "decompos", "pair"),
    ),
    Inspiration(
        "distribution",
        "Score-distribution analysis",
        "Read each query's score distribution: zscore_rows(S, mask) and zscore_cols(S, mask) "
        "(which removes hub documents close to every query); measure how peaked each row is "
        "(gap between its best and 10th best score, with np.sort), and mix the two channels "
        "with per-query weights that depend on that gap.",
        ("distribution", "gap", "spread", "hub", "column", "zscore_cols", "peaked"),
    ),
    Inspiration(
        "lexical",
        "Lexical channels with reciprocal rank fusion",
        "Add lexical evidence: B = bm25_scores(ctx) and C = query_term_coverage("
        "ctx.query_texts, ctx.doc_texts); fuse them with S by rank: fuse([S, B, C], None, "
        'mask, "rrf") (Cormack et al. 2009), or by z-scores with weights.',
        ("bm25", "lexical", "term", "rrf", "reciprocal", "keyword"),
    ),
)
"""The ideas directives cycle through: the paper's six inspirations (§3.2, Matryoshka
cascading read as dimension truncation) and lexical channels fused by RRF."""


VIEW_IDEAS = frozenset({"views"})
"""Inspirations that need distinct views: never a directive for an encoder whose views collapse
(its other views reproduce S; measured, such programs scored Δ = 0 at c = 2.6)."""


@dataclass(frozen=True)
class Directive:
    """The one concrete thing a generation is asked to build.

    Attributes:
        key: the inspiration's key, or ``"combine"``.
        title: a short name of the idea.
        text: the instruction shown to the model.
        novelty: a fallback novelty claim (used when the reply states none).
        hypothesis: a fallback hypothesis.
        parents: the frontier programs a combination builds on (empty otherwise).

    """

    key: str
    title: str
    text: str
    novelty: str
    hypothesis: str
    parents: tuple[str, ...] = ()


def choose_directive(state: SearchState) -> Directive:
    """The directive for ``state.generation``: deterministic in seed, generation and history.

    Every :data:`COMBINE_EVERY`-th generation, when the frontier holds two programs besides P0,
    the directive is to combine two of them (the pair rotates with the generation). Otherwise
    it is an inspiration (not one of :data:`VIEW_IDEAS` when ``state.views_collapsed``): the
    ideas not yet tried successfully (no evaluated program's novelty claim names them) come
    first; among them, the one tried least often so far, ties broken by a rotation that
    starts at ``seed + generation``. Once every idea has an evaluated program, the chosen idea
    comes paired with the least-tried other one, to be fused in one program.
    """
    combinable = [p.record.program_id for p in state.frontier if not _is_p0(p.record)]
    if len(combinable) >= 2 and state.generation % COMBINE_EVERY == 0:
        pairs = [(a, b) for i, a in enumerate(combinable) for b in combinable[i + 1 :]]
        first, second = pairs[(state.generation // COMBINE_EVERY + state.seed) % len(pairs)]
        return Directive(
            key="combine",
            title=f"combine {first} and {second}",
            text=(
                f"Combine frontier programs {first} and {second}: keep the main channel of "
                f"{first}, add the idea of {second} as a second channel, and fuse the two "
                "with row z-scores or rrf. Write one new program, not a copy of either."
            ),
            novelty=f"combines {first} and {second} (this generation's directive; the reply "
            "stated no novelty)",
            hypothesis=f"{first} and {second} win on different queries, so fusing them wins "
            "on more tasks.",
            parents=(first, second),
        )
    tried_ok = _tried(r for r in state.history if r.status == Status.OK and not _is_p0(r))
    tried_any = _tried(r for r in state.history if not _is_p0(r))
    ideas = [i for i in COMPACT_INSPIRATIONS if not (state.views_collapsed and i.key in VIEW_IDEAS)]
    attempts = {i.key: tried_any.count(i.key) for i in ideas}
    pool = [i for i in ideas if i.key not in tried_ok] or ideas
    start = (state.seed + state.generation) % len(pool)
    rotated = pool[start:] + pool[:start]
    idea = min(rotated, key=lambda i: attempts[i.key])  # min keeps the first of equals
    if idea.key in tried_ok and len(ideas) > 1:
        others = [i for i in rotated if i.key != idea.key]
        return _paired(idea, min(others, key=lambda i: attempts[i.key]))
    return Directive(
        key=idea.key,
        title=idea.title,
        text=f"{idea.title}. {idea.instruction}",
        novelty=f"{idea.title} (this generation's directive; the reply stated no novelty)",
        hypothesis=f"{idea.title} adds evidence that the single cosine S misses.",
    )


def _paired(idea: Inspiration, partner: Inspiration) -> Directive:
    """Two ideas in one program, once each has been realised alone.

    Measured with the 1.5B model: asked a second time for an idea an evaluated program already
    realises, it rewrote that program (3 of 20 generations rejected as near-duplicates).
    """
    title = f"{idea.title} with {partner.title.lower()}"
    return Directive(
        key=f"{idea.key}+{partner.key}",
        title=title,
        text=(
            f"{title}. Earlier programs already build each of these ideas alone and a copy is "
            "rejected, so write ONE program whose fuse call takes the channels of both. "
            f"First idea: {idea.instruction} Second idea: {partner.instruction}"
        ),
        novelty=f"{title} (this generation's directive; the reply stated no novelty)",
        hypothesis=f"{idea.title} and {partner.title.lower()} add different evidence that the "
        "single cosine S misses.",
    )


def _is_p0(record: LedgerRecord) -> bool:
    return record.generation == 0


def _tried(records: Iterable[LedgerRecord]) -> list[str]:
    """The inspiration keys each record's novelty claim names (one entry per record and key)."""
    keys: list[str] = []
    for record in records:
        text = f"{record.novelty} {record.hypothesis}".lower()
        keys.extend(i.key for i in COMPACT_INSPIRATIONS if any(w in text for w in i.keywords))
    return keys


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
    fixed_head = [_task(state), _section("Interface", _fenced(INTERFACE, "text")), _constraints()]
    examples = _examples()
    closing = _directive_section(state, directive)
    core = count(_join([*fixed_head, _helpers(MIN_HELPERS), examples, closing]))
    if core > context_tokens:
        raise ValueError(
            f"a compact prompt needs at least {core} tokens here; --context-tokens "
            f"{context_tokens} is too small"
        )
    # The helper list is sized from run constants only, so the prompt's head never changes.
    static = count(_join([*fixed_head, _helpers(MIN_HELPERS), examples]))
    spare = max(0, context_tokens - static - DIRECTIVE_RESERVE)
    helpers = _fit_helpers(count, int(HELPER_SHARE * spare) + count(_helpers(MIN_HELPERS)))
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


def _section(title: str, body: str) -> str:
    return f"## {title}\n{body.rstrip()}"


def _fenced(text: str, lang: str = "python") -> str:
    return f"```{lang}\n{text.rstrip()}\n```"


def _task(state: SearchState) -> str:
    tasks = ", ".join(state.tasks) if state.tasks else "(none)"
    return (
        "# Write one retrieval program\n"
        "A frozen text encoder embedded the queries and documents of several retrieval tasks; "
        "the baseline ranks documents by the cosine matrix S. Write a Python program that "
        "rescores S so that nDCG@10 rises on every task, using few extra encoder calls.\n"
        f"Tasks: {tasks}."
    )


def _constraints() -> str:
    lines = [
        f"{i}. {name}: {SHORT_CONSTRAINTS[name]}"
        for i, (name, _) in enumerate(CONSTRAINTS, start=1)
    ]
    return _section("Constraints (a program that breaks one is rejected)", "\n".join(lines))


def _examples() -> str:
    parts = [
        f"### Example {chr(ord('A') + i)}: {e.title}\n{_fenced(e.source)}"
        for i, e in enumerate(EXAMPLES)
    ]
    return _section(
        "Two worked examples (valid programs; yours must be structurally different)",
        "\n".join(parts),
    )


def _directive_section(state: SearchState, directive: Directive) -> str:
    return _section(
        f"Your task now (generation {state.generation})",
        f"{directive.text}\n"
        "Reply with ONE ```python block holding the whole file: a docstring with a "
        '"Novelty:" line and a "Hypothesis:" line, the imports, module-level constants, and '
        "def program(Q, D, S, ctx) returning a float32 array of shape S.shape. Use only the "
        "helpers listed above, with the arguments shown.",
    )


# Helpers ------------------------------------------------------------------------------------


@functools.cache
def _helper_entries() -> tuple[tuple[str, str, str], ...]:
    """``(module, name, text)`` per helper of the reference, in the reference's order.

    A class's member lines are folded into its entry; constants are left out.
    """
    entries: list[tuple[str, str, str]] = []
    module = ""
    for line in primitive_reference().splitlines():
        header = re.fullmatch(rf"{re.escape(PRIMITIVE_PACKAGE)}\.(\w+):", line)
        if header:
            module = header.group(1)
        elif module and line.startswith("    ") and entries:
            mod, name, text = entries[-1]
            member = _with_return(line.strip())
            entries[-1] = (mod, name, f"{text}\n  {_clip_line(member, '      ')}")
        elif module and line.startswith("  ") and " = " not in line.split("(")[0]:
            name = re.split(r"[(\s]", line.strip(), maxsplit=1)[0]
            entries.append((module, name, _clip_line(_with_return(line.strip()), "")))
    return tuple(entries)


def _with_return(entry: str) -> str:
    """``name(args) -> shape — summary`` when :data:`RETURNS` knows what ``name`` returns."""
    signature, dash, summary = entry.partition(" — ")
    name = re.split(r"[(\s]", signature, maxsplit=1)[0]
    if name not in RETURNS:
        return entry
    return f"{signature} -> {RETURNS[name]}{dash}{summary}"


def helper_modules() -> dict[str, str]:
    """Each helper's name and the module that defines it (``zscore_rows`` -> ``scores``)."""
    return {name: module for module, name, _ in _helper_entries()}


def helper_signature(name: str) -> str:
    """The listed signature of helper ``name`` (``""`` when it is not a helper)."""
    for module, helper, text in _helper_entries():
        if helper == name:
            return f"{text.split(' — ')[0]} (from {PRIMITIVE_PACKAGE}.{module})"
    return ""


def _clip_line(text: str, indent: str) -> str:
    limit = HELPER_LINE_CHARS - len(indent)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _ordered_helpers() -> list[tuple[str, str, str]]:
    entries = _helper_entries()
    rank = {name: i for i, name in enumerate(PRIMITIVE_PRIORITY)}
    return sorted(entries, key=lambda e: (rank.get(e[1], len(rank)), entries.index(e)))


def _helpers(n: int) -> str:
    """The first ``n`` helpers by priority, grouped by module in the reference's order."""
    chosen = _ordered_helpers()[:n]
    modules = list(dict.fromkeys(m for m, _, _ in _helper_entries()))
    lines = []
    for module in modules:
        mine = [(n, t) for m, n, t in _helper_entries() if m == module and (m, n, t) in chosen]
        if not mine:
            continue
        names = ", ".join(name for name, _ in mine)
        lines.append(f"from {PRIMITIVE_PACKAGE}.{module} import {names}")
        lines.extend(f"    {line}" for _, text in mine for line in text.split("\n"))
    return _section("Helpers (import exactly as shown; nothing else exists)", "\n".join(lines))


def _fit_helpers(count: TokenCounter, budget: int) -> str:
    best = _helpers(MIN_HELPERS)
    for n in range(MIN_HELPERS + 1, len(_helper_entries()) + 1):
        candidate = _helpers(n)
        if count(candidate) > budget:
            break
        best = candidate
    return best


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
    note = _clip(record.novelty, 100)
    head = f"### {record.program_id} ({', '.join(facts)})" + (f": {note}" if note else "")
    return f"{head}\n{_fenced(chr(10).join(code))}"


def _fit_frontier(state: SearchState, count: TokenCounter, budget: int) -> str:
    """Best-first frontier programs; the least good are cut, then dropped, to fit."""
    shown = [p for p in state.frontier if not _is_p0(p.record)]
    if not shown or budget <= 0:
        return ""
    title = "Frontier programs, best first (docstrings and comments removed)"
    limits: list[int | None] = [None] * len(shown)

    def render() -> str:
        entries = [_frontier_entry(p, n) for p, n in zip(shown, limits, strict=True)]
        return _section(title, "\n".join(entries))

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


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _history_row(record: LedgerRecord) -> str:
    ok = record.status == Status.OK
    mean = f"{record.mean_delta:+.4f}" if ok and record.mean_delta is not None else "-"
    cost = f"{record.cost_ratio:.2f}" if ok and record.cost_ratio is not None else "-"
    note = record.novelty if ok else record.reason
    cells = [record.program_id, record.status.value, mean, cost, _clip(note, NOTE_CHARS)]
    return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"


def _fit_history(state: SearchState, count: TokenCounter, budget: int) -> str:
    """The most recent rows of the history table that fit in ``budget``."""
    if not state.history or budget <= 0:
        return ""
    n = len(state.history)
    counts: dict[str, int] = {}
    for record in state.history:
        counts[record.status.value] = counts.get(record.status.value, 0) + 1
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
    return _section("History", "\n".join([body, *header, *rows]))
