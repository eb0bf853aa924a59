"""The compact prompt's helper list: the primitives a small model may import, with shapes.

Each helper's line is cut from the primitive reference of
:mod:`~embedding_ttc.search.prompts.primitives` (so it never drifts from the code), with what
it returns (:data:`RETURNS`: shapes are what small models get wrong), grouped under the import
line to copy, the most useful first (:data:`PRIMITIVE_PRIORITY`) as far as the budget allows.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from embedding_ttc.search.prompts.common import TokenCounter, section
from embedding_ttc.search.prompts.primitives import PRIMITIVE_PACKAGE, primitive_reference

MIN_HELPERS = 10
"""Helpers always listed, budget or not (the first of :data:`PRIMITIVE_PRIORITY`)."""

HELPER_LINE_CHARS = 130
"""Longest helper line (signature and summary), then ``…``."""

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


def helper_section(n: int) -> str:
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
    title = "Helpers (import exactly as shown; nothing else exists)"
    return section(title, "\n".join(lines), spaced=False)


def fit_helpers(count: TokenCounter, budget: int) -> str:
    """The longest helper section that fits ``budget`` tokens (at least :data:`MIN_HELPERS`)."""
    best = helper_section(MIN_HELPERS)
    for n in range(MIN_HELPERS + 1, len(_helper_entries()) + 1):
        candidate = helper_section(n)
        if count(candidate) > budget:
            break
        best = candidate
    return best
