"""The program-file contract: what a program file defines, imports and must respect.

Everything that runs a program file (the prompt, the static checks, the sandbox, the ledger,
``evaluate --program-file``, a deployed index) speaks of programs through this module, so the
contract is written once. What became of a candidate (its ``Status``, a failure's
``CandidateError``) is in :mod:`embedding_ttc.programs.outcome`.

A *program file* is ordinary Python source that defines a top-level function

    def program(Q, D, S, ctx):
        ...
        return S_new

with the meaning of :class:`~embedding_ttc.programs.base.Program` (paper §3.1): ``Q`` (|Q|×d)
and ``D`` (|D|×d) are L2-normalised, ``S = Q Dᵀ``, and ``ctx`` is a
:class:`~embedding_ttc.programs.base.Context`. It returns a new finite |Q|×|D| float matrix.
It may import only :data:`ALLOWED_MODULES` (and their submodules where the entry ends in
``.*``). Module-level constants are the program's globally fixed constants.
"""

from __future__ import annotations

PROGRAM_FUNCTION = "program"
"""The name of the function a program file must define at module level."""

ALLOWED_MODULES: tuple[str, ...] = (
    "numpy",
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "unicodedata",
    "string",
    "embedding_ttc.programs.primitives.*",
)
"""Imports a program may use (constraint 4). ``pkg.*`` admits ``pkg`` and its submodules."""


CONSTRAINTS: tuple[tuple[str, str], ...] = (
    (
        "task-universal",
        "Nothing in ctx identifies the task; the program must not branch on task identity "
        "(no dataset names, sizes used as identifiers, or text sniffing to pick a task-specific "
        "path).",
    ),
    (
        "global-constants",
        "Every constant is fixed in the source; the program is evaluated once as written and "
        "never swept per task.",
    ),
    (
        "deterministic",
        "Run twice on the same input, the output is bit-identical (no randomness without a fixed "
        "seed, no dependence on time, hashing of objects, or set iteration order).",
    ),
    (
        "no-external-model",
        "Only the frozen encoder through ctx.encode_fn; no other model, no learnable parameter, "
        "no file, network, process or environment access; imports limited to: "
        + ", ".join(ALLOWED_MODULES)
        + ".",
    ),
    (
        "novel",
        "Structurally distinct from every program already registered (normalised-AST "
        "similarity below the threshold).",
    ),
    (
        "all-tasks",
        "Evaluated once on all tasks of the discovery suite; the score is the mean over tasks.",
    ),
)
"""The six constraints of the paper (§3.1–3.2), as (name, statement) pairs."""

INTERFACE_TEXT = '''\
def program(Q, D, S, ctx):
    """Return a new |Q|x|D| float32 matrix of scores (higher is better).

    Q: (|Q|, d) float32, L2-normalised query embeddings (view "retrieval.query").
    D: (|D|, d) float32, L2-normalised document embeddings (view "retrieval.passage").
    S: (|Q|, |D|) float32, the cosine matrix Q @ D.T (do not modify it in place).
    ctx.encode_fn(texts, view="retrieval.query", dim=None, max_length=None) -> (n, d) float32
        unit rows; views: "retrieval.query", "retrieval.passage", "text-matching",
        "classification"; every text encoded costs one unit.
    ctx.index_time(): context manager; encodes of document-side text inside it are
        amortisable index-time work.
    ctx.query_texts, ctx.doc_texts: raw texts aligned with the rows / columns of S.
    ctx.query_ids, ctx.doc_ids: identifiers.
    ctx.candidates: None, or per query an int array of the column indices it ranks
        (feedback must only look at these).
    ctx.views_collapsed: True when all views are the same encoding.
    ctx.doc_lengths: int64 word count per document.
    """
'''
"""The program interface as shown to a proposer."""
