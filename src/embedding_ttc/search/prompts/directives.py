"""The directive of a generation: ONE concrete thing a small model is asked to build.

:func:`choose_directive` picks, from the seed, the generation and the history, either an
inspiration not yet realised (:data:`COMPACT_INSPIRATIONS`), a pair of realised ones, or the
combination of two frontier programs (every :data:`COMBINE_EVERY` generations).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from embedding_ttc.evaluation.outcome import Status
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.prompts.common import is_p0
from embedding_ttc.search.state import SearchState

COMBINE_EVERY = 3
"""Every this many generations, when two frontier programs exist, the directive combines them."""


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
    combinable = [p.record.program_id for p in state.frontier if not is_p0(p.record)]
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
    tried_ok = _tried(r for r in state.history if r.status == Status.OK and not is_p0(r))
    tried_any = _tried(r for r in state.history if not is_p0(r))
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


def _tried(records: Iterable[LedgerRecord]) -> list[str]:
    """The inspiration keys each record's novelty claim names (one entry per record and key)."""
    keys: list[str] = []
    for record in records:
        text = f"{record.novelty} {record.hypothesis}".lower()
        keys.extend(i.key for i in COMPACT_INSPIRATIONS if any(w in text for w in i.keywords))
    return keys
