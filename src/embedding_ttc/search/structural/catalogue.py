"""The channel catalogue: every score matrix a structural program can fuse, and its code.

Each :class:`Channel` writes its matrix into a
:class:`~embedding_ttc.search.structural.builder.ProgramBuilder` and names the
variable that holds it; documents are split and encoded once per granularity, at index time.

The ``local`` family are candidate-local statistics: computed from each query's candidates and
the document embeddings ``D`` alone, they encode nothing at query time (no cost beyond the
cosine's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from embedding_ttc.search.structural.builder import ProgramBuilder, use_rocchio

_PAIRS_HELPER = '''\
def _sentence_pairs(text):
    """Consecutive sentence pairs of a text."""
    return sentence_pairs(split_sentences(text))
'''

_GRANULARITIES: Mapping[str, tuple[str, str]] = {
    "sent": ("sentences", "split_sentences"),
    "pair": ("pairs", "_sentence_pairs"),
    "para": ("paragraphs", "split_paragraphs"),
}
_POOLS: Mapping[str, str] = {"maxsim": "maxsim", "topmean": "topmeansim"}


def _chunks(b: ProgramBuilder, granularity: str) -> tuple[str, str]:
    """Split and encode the documents at ``granularity`` once; the chunks and vector names."""
    var, splitter = _GRANULARITIES[granularity]
    if granularity not in b.done:
        b.done.add(granularity)
        b.need("chunking", "MAX_CHUNKS_PER_DOC", "chunk_documents")
        if granularity == "pair":
            b.need("chunking", "sentence_pairs", "split_sentences")
            b.helpers["_sentence_pairs"] = _PAIRS_HELPER
        else:
            b.need("chunking", splitter)
        b.lines(
            f"{var} = chunk_documents(",
            f"    ctx.doc_texts, {splitter}, max_chunks_per_doc=MAX_CHUNKS_PER_DOC",
            ")",
            "with ctx.index_time():",
            f'    {var}_vectors = ctx.encode_fn({var}.texts, "retrieval.passage")',
        )
    return var, f"{var}_vectors"


def _chunk_channel(granularity: str, pool: str) -> Callable[[ProgramBuilder], str]:
    def emit(b: ProgramBuilder) -> str:
        chunks, vectors = _chunks(b, granularity)
        b.need("late", _POOLS[pool])
        name = f"{granularity}_{pool}"
        b.lines(f"{name} = {_POOLS[pool]}(Q, {vectors}, {chunks}.owner, n_d, mask=mask)")
        return name

    return emit


def _dense(b: ProgramBuilder) -> str:
    return "S"


def _reverse(b: ProgramBuilder) -> str:
    b.lines(
        "with ctx.index_time():",
        '    docs_as_queries = ctx.encode_fn(list(ctx.doc_texts), "retrieval.query")',
        "reverse = Q @ docs_as_queries.T",
    )
    return "reverse"


def _xview(b: ProgramBuilder) -> str:
    b.lines(
        "with ctx.index_time():",
        '    docs_matching = ctx.encode_fn(list(ctx.doc_texts), "text-matching")',
        'queries_matching = ctx.encode_fn(list(ctx.query_texts), "text-matching")',
        "xview = queries_matching @ docs_matching.T",
    )
    return "xview"


def _half_dim(b: ProgramBuilder) -> str:
    b.constant("NORM_FLOOR")
    b.lines(
        "half = max(1, Q.shape[1] // 2)",
        "q_half = Q[:, :half] / np.maximum(",
        "    np.linalg.norm(Q[:, :half], axis=1, keepdims=True), NORM_FLOOR",
        ")",
        "d_half = D[:, :half] / np.maximum(",
        "    np.linalg.norm(D[:, :half], axis=1, keepdims=True), NORM_FLOOR",
        ")",
        "half_dim = q_half @ d_half.T",
    )
    return "half_dim"


def _bm25(b: ProgramBuilder) -> str:
    b.need("lexical", "BM25")
    b.lines("bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)")
    return "bm25"


def _lexical(function: str, name: str) -> Callable[[ProgramBuilder], str]:
    def emit(b: ProgramBuilder) -> str:
        b.need("lexical", function)
        b.lines(f"{name} = {function}(ctx.query_texts, ctx.doc_texts)")
        return name

    return emit


def _prf_rocchio(b: ProgramBuilder) -> str:
    helper = use_rocchio(b)
    b.lines(f"prf_rocchio = {helper}(Q, D, S, mask) @ D.T")
    return "prf_rocchio"


def _prf_soft(b: ProgramBuilder) -> str:
    b.need("feedback", "soft_centroid_query")
    b.lines("prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T")
    return "prf_soft"


def _prf_vprf(b: ProgramBuilder) -> str:
    b.need("feedback", "vprf_update")
    b.need("scores", "top_k_indices")
    b.constant("FEEDBACK_K", "VPRF_BETA")
    b.lines("prf_vprf = vprf_update(Q, D, top_k_indices(S, FEEDBACK_K, mask), VPRF_BETA) @ D.T")
    return "prf_vprf"


def _consensus(b: ProgramBuilder) -> str:
    # The cluster hypothesis (van Rijsbergen 1979): relevant documents resemble each other.
    # The cosine to the unit centroid of the query's top CONSENSUS_K documents under S orders
    # each query's candidates as their mean cosine to those documents does.
    b.need("scores", "top_k_indices")
    b.need("feedback", "centroid")
    b.constant("CONSENSUS_K")
    b.lines(
        "heads = top_k_indices(S, CONSENSUS_K, mask)",
        "head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)",
        "consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T",
    )
    return "consensus"


def _anti_hub(b: ProgramBuilder) -> str:
    # Hubs (Radovanovic et al. 2010) sit close to the centroid of any candidate set and rank
    # high for every query; minus the cosine to the query's candidate centroid is the
    # document term of CSLS (Conneau et al. 2018), restricted to the candidates. Without a
    # mask every query shares one pool, the corpus: its centroid is computed once.
    b.constant("NORM_FLOOR")
    b.lines(
        "members = np.ones((1, n_d), dtype=np.float32)",
        "if mask is not None:",
        "    members = mask.astype(np.float32)",
        "pool_centroids = members @ D",
        "pool_centroids /= np.maximum(",
        "    np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR",
        ")",
        "anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()",
    )
    return "anti_hub"


@dataclass(frozen=True)
class Channel:
    """A channel: the code that computes it, its family, and how claims describe it."""

    emit: Callable[[ProgramBuilder], str]
    family: str
    label: str
    rationale: str


CHANNELS: Mapping[str, Channel] = {
    "dense": Channel(_dense, "dense", "the dense cosine S", "the frozen encoder's own ranking"),
    "reverse": Channel(
        _reverse,
        "perspective",
        "the reversed perspective (documents encoded as queries)",
        "scoring documents as if they were queries cancels the passage view's bias",
    ),
    "xview": Channel(
        _xview,
        "perspective",
        "the cross-adapter text-matching view",
        "a second adapter votes where the retrieval views disagree",
    ),
    "half_dim": Channel(
        _half_dim,
        "dense",
        "the Matryoshka half-dimension cosine",
        "the coarse prefix of the embedding ranks by topic and resists fine-grained noise",
    ),
    **{
        f"{g}_{p}": Channel(
            _chunk_channel(g, p),
            "chunk",
            f"{'MaxSim' if p == 'maxsim' else 'TopMeanSim'} over "
            f"{ {'sent': 'sentences', 'pair': 'sentence pairs', 'para': 'paragraphs'}[g] }",
            "the best-matching part of a long document carries the evidence that one pooled "
            "vector dilutes",
        )
        for g in _GRANULARITIES
        for p in _POOLS
    },
    "bm25": Channel(
        _bm25,
        "lexical",
        "BM25",
        "BM25 rewards exact rare terms (names, numbers) that embeddings blur",
    ),
    "bigram": Channel(
        _lexical("bigram_overlap", "bigram"),
        "lexical",
        "word-bigram overlap",
        "phrases matched in order are stronger evidence than single words",
    ),
    "coverage": Channel(
        _lexical("query_term_coverage", "coverage"),
        "lexical",
        "query-term coverage",
        "documents that cover every query term answer the whole query",
    ),
    "rare_idf": Channel(
        _lexical("rare_term_idf", "rare_idf"),
        "lexical",
        "rare-term IDF",
        "the rarest query terms identify the few documents that can answer",
    ),
    "prf_rocchio": Channel(
        _prf_rocchio,
        "feedback",
        "a Rocchio-refined query",
        "the top documents describe the query's intent better than its few words",
    ),
    "prf_soft": Channel(
        _prf_soft,
        "feedback",
        "a SoftCentroid-refined query",
        "a score-weighted centroid of the top documents sharpens the query",
    ),
    "prf_vprf": Channel(
        _prf_vprf,
        "feedback",
        "a VPRF-refined query",
        "a uniform mean of the top documents pulls the query toward the relevant cluster",
    ),
    "consensus": Channel(
        _consensus,
        "local",
        "each document's consensus with the dense top-K",
        "relevant documents resemble each other, so agreement with the dense head is "
        "evidence an isolated high cosine lacks",
    ),
    "anti_hub": Channel(
        _anti_hub,
        "local",
        "the distance from the candidates' centroid (a hubness correction)",
        "hub documents sit near every candidate set's centre and crowd every ranking",
    ),
}
"""The channel catalogue, in canonical order."""
