"""The research ideas a proposer is pointed at, one list for every prompt.

Each :class:`Inspiration` carries the instruction a small model is given (naming the helpers to
use, :mod:`~embedding_ttc.search.prompts.directives`), the words that show it was tried, and,
for the paper's six, the paper's own statement of it, which the full prompt lists
(:mod:`~embedding_ttc.search.prompts.full`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Inspiration:
    """A research idea a directive can point at.

    Attributes:
        key: short identifier.
        title: the idea's name.
        instruction: what to build, concretely, naming the helpers to use.
        keywords: lower-case words whose presence in a novelty claim means the idea was tried.
        paper: the idea as the paper's proposer was given it (§3.2), ``(title, one or two
            sentences)``, shown by the full prompt; ``None`` for an idea the paper does not name.

    """

    key: str
    title: str
    instruction: str
    keywords: tuple[str, ...]
    paper: tuple[str, str] | None = None


INSPIRATIONS: tuple[Inspiration, ...] = (
    Inspiration(
        "rocchio",
        "Rocchio pseudo-relevance feedback",
        "Move each query toward its top-ranked documents: P = prf_scores(Q, D, S, k=K, "
        "alpha=ALPHA, mask=mask) is the moved query's cosine matrix. Add a second round fed "
        "by the first one's ranking, P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2, mask=mask), "
        "and fuse the channels with S: fuse([S, P, P2], [weights], mask=mask).",
        ("rocchio", "feedback", "prf", "centroid"),
        paper=(
            "Rocchio pseudo-relevance feedback",
            "Move the query toward the centroid of its top-ranked documents and away from the "
            "bottom-ranked ones (Rocchio 1971), then rescore; in embedding space this is a vector "
            "update, and several rounds can refine it further.",
        ),
    ),
    Inspiration(
        "maxsim",
        "ColBERT MaxSim over sentences",
        "Score each document by its best sentence: M = chunk_scores(Q, ctx, "
        '"sentence", "max", mask). Fuse M with S and with a second granularity '
        '(chunk_scores(Q, ctx, "paragraph", "topmean", mask)): fuse([S, M, M2], '
        "[weights], mask=mask).",
        ("maxsim", "sentence", "colbert", "chunk"),
        paper=(
            "ColBERT-style MaxSim",
            "Score a document by its best-matching piece rather than by one pooled vector "
            "(Khattab & Zaharia 2020): split documents into chunks, encode them once at index "
            "time, and take the maximum (or a robust mean) of the query-chunk similarities.",
        ),
    ),
    Inspiration(
        "views",
        "Cross-view voting",
        'Score the documents under other views: view_scores(Q, ctx, "text-matching"), '
        'view_scores(Q, ctx, "classification"), and the queries under another view: '
        'query_view_scores(D, ctx, "text-matching"). Let S and these views vote by rank: '
        'fuse([S, V1, V2, V3], None, mask=mask, method="rrf").',
        ("view", "voting", "vote", "adapter", "text-matching", "classification"),
        paper=(
            "Cross-adapter voting",
            "Encode the same texts under different views (query, passage, text-matching, "
            "classification) or swap perspectives (documents encoded as queries), and let the "
            "views vote, e.g. by reciprocal rank fusion, so that no single view's bias decides.",
        ),
    ),
    Inspiration(
        "matryoshka",
        "Matryoshka cascading (dimension truncation)",
        "Score with prefixes of the dimensions as coarse channels, P1 = prefix_scores(Q, D, "
        "Q.shape[1] // 4) and P2 = prefix_scores(Q, D, Q.shape[1] // 2); keep S as the fine "
        "channel, and fuse them: fuse([S, P2, P1], [weights], mask=mask), the coarser the "
        "smaller the weight.",
        ("matryoshka", "truncat", "prefix", "dimension", "cascad"),
        paper=(
            "Matryoshka cascading",
            "Truncated embeddings (`dim=`) are cheap coarse rankers: rank with a prefix of the "
            "dimensions first and spend full-dimension or extra encodes only where the coarse "
            "ranking is uncertain.",
        ),
    ),
    Inspiration(
        "substructure",
        "Document substructure decomposition",
        "Score documents by their pieces at two granularities: chunk_scores(Q, ctx, "
        '"paragraph", "max", mask) and chunk_scores(Q, ctx, "sentence_pair", "topmean", '
        "mask); mix the best piece and the mean piece and fuse with S: fuse([S, A, B], "
        "[weights], mask=mask).",
        ("paragraph", "substructure", "granularit", "decompos", "pair"),
        paper=(
            "Document substructure decomposition",
            "Long documents mix topics; sentences, sentence pairs and paragraphs expose the part "
            "that answers the query, and combining granularities covers both short and long "
            "evidence.",
        ),
    ),
    Inspiration(
        "distribution",
        "Score-distribution analysis",
        "Read each query's score distribution: zscore_rows(S, mask) and zscore_cols(S, mask) "
        "(which removes hub documents close to every query); measure how peaked each row is "
        "(gap between its best and 10th best score, with np.sort), and mix the two channels "
        "with per-query weights that depend on that gap.",
        ("distribution", "gap", "spread", "hub", "column", "zscore_cols", "peaked"),
        paper=(
            "Score-distribution analysis",
            "Standardise scores per query (rows) or per document (columns) to remove hubness and "
            "query difficulty, read the shape of a query's score distribution (gap, spread, "
            "agreement between channels) and act on it.",
        ),
    ),
    Inspiration(
        "lexical",
        "Lexical channels with reciprocal rank fusion",
        "Add lexical evidence: B = bm25_scores(ctx) and C = query_term_coverage("
        "ctx.query_texts, ctx.doc_texts); fuse them with S by rank: fuse([S, B, C], None, "
        'mask=mask, method="rrf") (Cormack et al. 2009), or by z-scores with weights.',
        ("bm25", "lexical", "term", "rrf", "reciprocal", "keyword"),
    ),
)
"""The one list of ideas: the paper's six inspirations (§3.2, Matryoshka cascading read as
dimension truncation) and lexical channels fused by RRF. Directives cycle through them, the edit
proposer suggests them, and the full prompt lists the paper's (:data:`PAPER_INSPIRATIONS`)."""

PAPER_INSPIRATIONS: tuple[tuple[str, str], ...] = tuple(
    i.paper for i in INSPIRATIONS if i.paper is not None
)
"""The research inspirations of the paper's proposer (§3.2), one or two sentences each."""
