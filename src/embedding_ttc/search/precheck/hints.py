"""Repair hints: one concrete fix for each failure a small model makes often.

A repair turn sends a draft's error back to the model; measured with the 1.5B local model,
the bare error mostly came back unchanged, while a one-line fix naming the right helper call
was taken. :func:`repair_hint` maps a pre-check failure to such a line (or ``""``).
"""

from __future__ import annotations

import re

from embedding_ttc.programs.outcome import Status
from embedding_ttc.search.precheck.check import PrecheckResult
from embedding_ttc.search.precheck.repairs import ARGUMENTS
from embedding_ttc.search.prompts.helper_list import helper_modules, helper_signature
from embedding_ttc.search.prompts.primitives import PRIMITIVE_PACKAGE

__all__ = ["repair_hint"]


_UNDEFINED = re.compile(r"NameError: name '(\w+)' is not defined")
_NOT_IN_MODULE = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_BAD_CALL = re.compile(
    r"(\w+)\(\) (?:missing \d+ required|got an unexpected keyword|takes \d+ positional|"
    r"got multiple values)"
)
_TEXT_HINTS: tuple[tuple[str, str], ...] = (
    (
        "near-duplicate",
        "it is almost a copy of that program: keep your idea and add one more kind of "
        'evidence it does not use, e.g. bm25_scores(ctx), chunk_scores(Q, ctx, "paragraph", '
        '"topmean", mask), view_scores(Q, ctx, "classification"), prf_scores(Q, D, S, '
        "mask=mask) or zscore_cols(S, mask), fused in with its own weight",
    ),
    (
        "unknown view",
        'the only views are "retrieval.query", "retrieval.passage", "text-matching" and '
        '"classification" (task names are not views)',
    ),
    (
        "owner must be",
        "maxsim and topmeansim need the chunks' owner array; chunk_scores(Q, ctx, unit, "
        "reduce, mask) does the chunking, encoding and pooling for you",
    ),
    (
        "not a single string",
        "ctx.encode_fn takes a list of strings: ctx.encode_fn([text], view), or "
        "ctx.encode_fn(list(ctx.doc_texts), view)",
    ),
    (
        "texts must be strings",
        "ctx.encode_fn encodes texts (strings), not arrays; the embeddings are already Q and D",
    ),
    (
        "'Chunks' object",
        "chunk_documents returns one Chunks object: use chunks.texts (list of str), "
        "chunks.owner (int array) and chunks.n_docs; or call chunk_scores(Q, ctx, unit, "
        "reduce, mask), which does the chunking, encoding and pooling",
    ),
    (
        "not aligned",
        "Q is (n_q, d) and D is (n_d, d): a score matrix like S is Q @ D.T",
    ),
    (
        "arrays used as indices must be of integer",
        "only integer arrays can index Q or D: top = top_k_indices(S, K, mask) gives, per "
        "query i, an int array top[i] of its best columns, so D[top[i]] are its best documents; "
        "score matrices such as prf_scores(...) or S are not indices",
    ),
    (
        "rows must be 1-D integer indices",
        "centroid(X, rows) averages the rows of ONE set of indices, e.g. centroid(D, top[i]) "
        "inside a loop over queries i with top = top_k_indices(S, K, mask); for every query at "
        "once use soft_centroid_query(Q, D, S, k=K, mask=mask), an (n_q, d) matrix",
    ),
    (
        "does not broadcast to",
        "rocchio(q, pos_centroid) updates ONE query vector q (d,) with ONE centroid (d,); for "
        "every query at once use soft_centroid_query(Q, D, S, k=K, mask=mask), or the channel "
        "prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)",
    ),
    (
        "channels differ in shape",
        "every channel passed to fuse must have S.shape (n_q, n_d): Q @ D.T is such a matrix, "
        "while D @ D.T is (n_d, n_d) and Q @ Q.T is (n_q, n_q)",
    ),
    (
        "only 0-dimensional arrays can be converted",
        "float() and int() take one number, not an array: weights and constants are plain "
        "numbers, and a per-query value is an array indexed by the query",
    ),
    (
        "operands could not be broadcast",
        "every channel must have S.shape (n_q, n_d); a per-query value needs [:, None], "
        "a per-document value [None, :]",
    ),
)


def repair_hint(check: PrecheckResult) -> str:
    """A concrete fix for the commonest small-model errors, or ``""``.

    An undefined or wrongly imported name that is a helper gets its import line; an unknown
    one is named as unknown; a helper called with the wrong arguments gets its signature; a
    misused encoder, chunk object or matrix product gets the right use; a wrong output shape
    gets the shape it must have.
    """
    modules = helper_modules()
    undefined = _UNDEFINED.search(check.reason)
    misplaced = _NOT_IN_MODULE.search(check.reason)
    found = undefined or misplaced
    name = found.group(1) if found is not None else None
    if name is not None and name in modules:
        return f"add the import: from {PRIMITIVE_PACKAGE}.{modules[name]} import {name}"
    if misplaced is not None:
        return f"{misplaced.group(1)} does not exist in {misplaced.group(2)}; use a listed helper"
    if undefined is not None and name in ARGUMENTS:
        return (
            "Q, D, S, ctx and mask exist only inside def program(Q, D, S, ctx): move every "
            f"line that uses {name} into the function body"
        )
    if undefined is not None and name is not None and name.isupper():
        return f"define the constant at module level, after the imports: {name} = <a number>"
    if undefined is not None:
        return f"{name} is not defined: define it in the file, or use a listed helper instead"
    bad_call = _BAD_CALL.search(check.reason)
    if bad_call is not None and bad_call.group(1) in modules:
        return f"call it exactly as listed: {helper_signature(bad_call.group(1))}"
    for needle, hint in _TEXT_HINTS:
        if needle in check.reason:
            return hint
    if check.status == Status.INVALID_OUTPUT and "shape" in check.reason:
        return "return one score per (query, document): an array of shape S.shape"
    if check.status == Status.INVALID_OUTPUT and "non-finite" in check.reason:
        return "a division by zero or a log of 0 made NaN or inf; add a small epsilon"
    return ""
