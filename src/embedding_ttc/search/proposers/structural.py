"""An LLM-free proposer that composes and mutates programs from the project's primitives.

A program here is a small *genome* rendered as an ordinary program file (a module docstring,
imports of numpy and ``embedding_ttc.programs.primitives.*`` only, a few module constants and
``def program(Q, D, S, ctx)``):

* **channels** (2 to :data:`MAX_CHANNELS`), each a score matrix with its own normalisation
  (:data:`NORMALISATIONS`: none, row z-score, column z-score, or both, columns first):
  the dense cosine ``S``; the reversed perspective (documents encoded under
  ``retrieval.query`` at index time); cross-adapter ``text-matching`` views; a Matryoshka
  half-dimension cosine; MaxSim or TopMeanSim over sentences, sentence pairs or paragraphs
  (chunks encoded under ``retrieval.passage`` at index time, at most ``MAX_CHUNKS_PER_DOC``
  per document); BM25, word-bigram overlap, query-term coverage, rare-term IDF; and a
  pseudo-relevance-feedback query (Rocchio, SoftCentroid or VPRF over ``S``) rescored
  against ``D``;
* a **fusion** (:data:`FUSIONS`): reciprocal rank fusion (k = 60), a sum of row z-scores, or
  a weighted sum (first channel 1.0, the others :data:`AUX_WEIGHT`);
* **feedback rounds** (0 to :data:`MAX_ROUNDS`): take each query's fused top-K, refine the
  query (:data:`REFINEMENTS`: Rocchio, SoftCentroid or VPRF), rescore ``D`` and fuse again.

Every ranking, statistic and selection uses each query's candidates only (the candidate mask
convention of ``primitives.scores``), and non-candidates score 0.

Generation 1 writes the simple genome :data:`BASE_GENOME` (dense + BM25 by RRF). Later
generations take the genome of the best frontier program that has one (written in its header
as a ``Genome: {...}`` JSON line) and apply structural mutations (add, remove or swap a
channel, change a chunk channel's granularity or pooling, change the fusion, add or remove a
feedback round, change the refinement or a normalisation) until the result is new: not a
genome tried before (the history's novelty claims carry a ``[genome ...]`` tag and the loop
records structural fingerprints) and structurally distinct from the frontier sources, the
evaluated structural programs and the library (normalised-AST similarity below the threshold
of constraint 5, the same check the loop applies). Choices are drawn from a generator seeded by the
proposer's seed, the run's seed, the generation and a digest of the history, so a proposal
is reproducible.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from functools import cache

from embedding_ttc.search.interface import Status
from embedding_ttc.search.novelty import (
    NOVELTY_THRESHOLD,
    fingerprint,
    library_structures,
    structure,
)
from embedding_ttc.search.records import Proposal, SearchState, Usage

__all__ = [
    "AUX_WEIGHT",
    "BASE_GENOME",
    "CHANNELS",
    "FUSIONS",
    "MAX_CHANNELS",
    "MAX_ROUNDS",
    "MUTATIONS",
    "NORMALISATIONS",
    "REFINEMENTS",
    "Genome",
    "StructuralProposer",
    "genome_from_source",
    "mutate",
    "render_program",
]

PRIMITIVES = "embedding_ttc.programs.primitives"
NORMALISATIONS: tuple[str, ...] = ("none", "row", "col", "both")
FUSIONS: tuple[str, ...] = ("rrf", "zsum", "wsum")
REFINEMENTS: tuple[str, ...] = ("rocchio", "softcentroid", "vprf")
MAX_CHANNELS = 5
MAX_ROUNDS = 2
AUX_WEIGHT = 0.5
"""Weight of every channel after the first in the weighted-sum fusion."""

# Constants of the generated programs, global and never tuned per task (constraint 2).
_CONSTANTS: Mapping[str, str] = {
    "FEEDBACK_K": "5",  # feedback documents per query (VPRF's and Rocchio's usual 3 to 10)
    "ROCCHIO_BETA": "0.6",  # weight of the positive centroid (Rocchio 1971: beta > gamma)
    "ROCCHIO_GAMMA": "0.2",  # weight of the negative centroid
    "VPRF_BETA": "0.3",  # VPRF interpolation (inside the paper's App. D grid 0.1..0.7)
    "SOFT_ALPHA": "0.5",  # SoftCentroid's centroid weight (paper App. D default)
    "SOFT_TAU": "1.0",  # softmax temperature over row z-scores (unit spread)
    "NORM_FLOOR": "1e-12",  # smallest norm divided by when renormalising a prefix
}

_MAX_STEPS = 6  # mutations stacked on one candidate before starting over
_MAX_ATTEMPTS = 40  # candidates tried before giving up on novelty (the loop then rejects)
_GENOME_TAG = re.compile(r"\[genome ([^\]]+)\]")
_GENOME_LINE = re.compile(r"^Genome:\s*(\{.*\})\s*$", re.MULTILINE)


# ---------------------------------------------------------------------------------------------
# The genome


@dataclass(frozen=True)
class Genome:
    """A structural program: channels with their normalisations, a fusion, feedback rounds.

    Build it with :meth:`make`, which validates and puts it in canonical form (channels in
    catalogue order; the refinement fixed to the first when there is no round), so that two
    genomes that render the same code compare equal.

    Attributes:
        channels: ``(channel, normalisation)`` pairs, in :data:`CHANNELS` order.
        fusion: one of :data:`FUSIONS`.
        rounds: feedback rounds, ``0 .. MAX_ROUNDS``.
        refine: the query refinement of the rounds, one of :data:`REFINEMENTS`.

    """

    channels: tuple[tuple[str, str], ...]
    fusion: str
    rounds: int
    refine: str

    @classmethod
    def make(
        cls,
        channels: Mapping[str, str],
        fusion: str = "rrf",
        rounds: int = 0,
        refine: str = REFINEMENTS[0],
    ) -> Genome:
        """A validated genome in canonical form.

        Args:
            channels: channel name -> normalisation.
            fusion: one of :data:`FUSIONS`.
            rounds: feedback rounds.
            refine: one of :data:`REFINEMENTS`.

        Raises:
            ValueError: on an unknown name or a count out of range.

        """
        unknown = [c for c in channels if c not in CHANNELS]
        if unknown:
            raise ValueError(f"unknown channels {unknown}; known: {', '.join(CHANNELS)}")
        bad = [n for n in channels.values() if n not in NORMALISATIONS]
        if bad or fusion not in FUSIONS or refine not in REFINEMENTS:
            raise ValueError(f"unknown normalisation, fusion or refinement: {bad, fusion, refine}")
        if not 2 <= len(channels) <= MAX_CHANNELS:
            raise ValueError(f"a genome has 2 to {MAX_CHANNELS} channels, got {len(channels)}")
        if not 0 <= rounds <= MAX_ROUNDS:
            raise ValueError(f"rounds must be in 0..{MAX_ROUNDS}, got {rounds}")
        ordered = tuple((c, channels[c]) for c in CHANNELS if c in channels)
        return cls(ordered, fusion, rounds, refine if rounds else REFINEMENTS[0])

    @property
    def names(self) -> tuple[str, ...]:
        """The channel names, in order."""
        return tuple(name for name, _ in self.channels)

    def key(self) -> str:
        """A compact, parseable form: ``dense:row+bm25:row|rrf|1|rocchio``."""
        parts = ["+".join(f"{c}:{n}" for c, n in self.channels), self.fusion, str(self.rounds)]
        return "|".join(parts + ([self.refine] if self.rounds else []))

    @classmethod
    def from_key(cls, key: str) -> Genome:
        """Parse :meth:`key`'s form.

        Raises:
            ValueError: if the key is malformed or names unknown parts.

        """
        parts = key.strip().split("|")
        if len(parts) not in (3, 4):
            raise ValueError(f"malformed genome key {key!r}")
        channels = dict(item.split(":", 1) for item in parts[0].split("+") if ":" in item)
        refine = parts[3] if len(parts) == 4 else REFINEMENTS[0]
        return cls.make(channels, parts[1], int(parts[2]), refine)

    def to_json(self) -> str:
        """The ``Genome:`` header line's JSON."""
        data = {
            "channels": dict(self.channels),
            "fusion": self.fusion,
            "rounds": self.rounds,
            "refine": self.refine,
        }
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> Genome:
        """Parse :meth:`to_json`'s form.

        Raises:
            ValueError: if the JSON is malformed or names unknown parts.

        """
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("channels"), dict):
            raise ValueError("a genome is a JSON object with a 'channels' object")
        return cls.make(
            {str(k): str(v) for k, v in data["channels"].items()},
            str(data.get("fusion", "rrf")),
            int(data.get("rounds", 0)),
            str(data.get("refine", REFINEMENTS[0])),
        )


def genome_from_source(source: str) -> Genome | None:
    """The genome in a program's ``Genome: {...}`` header line, or ``None``."""
    match = _GENOME_LINE.search(source)
    if match is None:
        return None
    try:
        return Genome.from_json(match.group(1))
    except (ValueError, TypeError):
        return None


# ---------------------------------------------------------------------------------------------
# Rendering a genome as a program file


@dataclass
class _Builder:
    imports: dict[str, set[str]] = field(default_factory=dict)
    constants: list[str] = field(default_factory=list)
    helpers: dict[str, str] = field(default_factory=dict)
    body: list[str] = field(default_factory=list)
    done: set[str] = field(default_factory=set)

    def need(self, module: str, *names: str) -> None:
        self.imports.setdefault(f"{PRIMITIVES}.{module}", set()).update(names)

    def constant(self, *names: str) -> None:
        self.constants.extend(n for n in names if n not in self.constants)

    def lines(self, *lines: str) -> None:
        self.body.extend(lines)


_ROCCHIO_HELPER = '''\
def _rocchio_query(query, D, scores, mask):
    """Rocchio (1971): toward the top-K centroid, away from the bottom-K centroid."""
    top = top_k_indices(scores, FEEDBACK_K, mask)
    bottom = bottom_k_indices(scores, FEEDBACK_K, mask)
    positive = np.array([centroid(D, rows) for rows in top], dtype=np.float32)
    negative = np.array([centroid(D, rows) for rows in bottom], dtype=np.float32)
    return rocchio(
        query,
        positive.reshape(query.shape),
        negative.reshape(query.shape),
        alpha=1.0,
        beta=ROCCHIO_BETA,
        gamma=ROCCHIO_GAMMA,
    )
'''

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


def _use_rocchio(b: _Builder) -> str:
    b.need("scores", "top_k_indices", "bottom_k_indices")
    b.need("feedback", "centroid", "rocchio")
    b.constant("FEEDBACK_K", "ROCCHIO_BETA", "ROCCHIO_GAMMA")
    b.helpers["_rocchio_query"] = _ROCCHIO_HELPER
    return "_rocchio_query"


def _chunks(b: _Builder, granularity: str) -> tuple[str, str]:
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


def _chunk_channel(granularity: str, pool: str) -> Callable[[_Builder], str]:
    def emit(b: _Builder) -> str:
        chunks, vectors = _chunks(b, granularity)
        b.need("late", _POOLS[pool])
        name = f"{granularity}_{pool}"
        b.lines(f"{name} = {_POOLS[pool]}(Q, {vectors}, {chunks}.owner, n_d, mask=mask)")
        return name

    return emit


def _dense(b: _Builder) -> str:
    return "S"


def _reverse(b: _Builder) -> str:
    b.lines(
        "with ctx.index_time():",
        '    docs_as_queries = ctx.encode_fn(list(ctx.doc_texts), "retrieval.query")',
        "reverse = Q @ docs_as_queries.T",
    )
    return "reverse"


def _xview(b: _Builder) -> str:
    b.lines(
        "with ctx.index_time():",
        '    docs_matching = ctx.encode_fn(list(ctx.doc_texts), "text-matching")',
        'queries_matching = ctx.encode_fn(list(ctx.query_texts), "text-matching")',
        "xview = queries_matching @ docs_matching.T",
    )
    return "xview"


def _half_dim(b: _Builder) -> str:
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


def _bm25(b: _Builder) -> str:
    b.need("lexical", "BM25")
    b.lines("bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)")
    return "bm25"


def _lexical(function: str, name: str) -> Callable[[_Builder], str]:
    def emit(b: _Builder) -> str:
        b.need("lexical", function)
        b.lines(f"{name} = {function}(ctx.query_texts, ctx.doc_texts)")
        return name

    return emit


def _prf_rocchio(b: _Builder) -> str:
    helper = _use_rocchio(b)
    b.lines(f"prf_rocchio = {helper}(Q, D, S, mask) @ D.T")
    return "prf_rocchio"


def _prf_soft(b: _Builder) -> str:
    b.need("feedback", "soft_centroid_query")
    b.lines("prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T")
    return "prf_soft"


def _prf_vprf(b: _Builder) -> str:
    b.need("feedback", "vprf_update")
    b.need("scores", "top_k_indices")
    b.constant("FEEDBACK_K", "VPRF_BETA")
    b.lines("prf_vprf = vprf_update(Q, D, top_k_indices(S, FEEDBACK_K, mask), VPRF_BETA) @ D.T")
    return "prf_vprf"


@dataclass(frozen=True)
class _Channel:
    emit: Callable[[_Builder], str]
    family: str
    label: str
    rationale: str


CHANNELS: Mapping[str, _Channel] = {
    "dense": _Channel(_dense, "dense", "the dense cosine S", "the frozen encoder's own ranking"),
    "reverse": _Channel(
        _reverse,
        "perspective",
        "the reversed perspective (documents encoded as queries)",
        "scoring documents as if they were queries cancels the passage view's bias",
    ),
    "xview": _Channel(
        _xview,
        "perspective",
        "the cross-adapter text-matching view",
        "a second adapter votes where the retrieval views disagree",
    ),
    "half_dim": _Channel(
        _half_dim,
        "dense",
        "the Matryoshka half-dimension cosine",
        "the coarse prefix of the embedding ranks by topic and resists fine-grained noise",
    ),
    **{
        f"{g}_{p}": _Channel(
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
    "bm25": _Channel(
        _bm25,
        "lexical",
        "BM25",
        "BM25 rewards exact rare terms (names, numbers) that embeddings blur",
    ),
    "bigram": _Channel(
        _lexical("bigram_overlap", "bigram"),
        "lexical",
        "word-bigram overlap",
        "phrases matched in order are stronger evidence than single words",
    ),
    "coverage": _Channel(
        _lexical("query_term_coverage", "coverage"),
        "lexical",
        "query-term coverage",
        "documents that cover every query term answer the whole query",
    ),
    "rare_idf": _Channel(
        _lexical("rare_term_idf", "rare_idf"),
        "lexical",
        "rare-term IDF",
        "the rarest query terms identify the few documents that can answer",
    ),
    "prf_rocchio": _Channel(
        _prf_rocchio,
        "feedback",
        "a Rocchio-refined query",
        "the top documents describe the query's intent better than its few words",
    ),
    "prf_soft": _Channel(
        _prf_soft,
        "feedback",
        "a SoftCentroid-refined query",
        "a score-weighted centroid of the top documents sharpens the query",
    ),
    "prf_vprf": _Channel(
        _prf_vprf,
        "feedback",
        "a VPRF-refined query",
        "a uniform mean of the top documents pulls the query toward the relevant cluster",
    ),
}
"""The channel catalogue, in canonical order."""

_NORM_LABEL: Mapping[str, str] = {
    "none": "raw scores",
    "row": "row z-scores",
    "col": "column z-scores",
    "both": "column-then-row z-scores",
}
_FUSION_LABEL: Mapping[str, str] = {
    "rrf": "reciprocal rank fusion",
    "zsum": "a sum of row z-scores",
    "wsum": "a weighted sum",
}

BASE_GENOME = Genome.make({"dense": "row", "bm25": "row"}, "rrf", 0)
"""Generation 1's genome: the dense cosine and BM25, fused by RRF (a sparse-dense hybrid)."""


def _normalised(expr: str, norm: str, b: _Builder) -> str:
    if norm == "none":
        return expr
    if norm == "row":
        b.need("scores", "zscore_rows")
        return f"zscore_rows({expr}, mask)"
    if norm == "col":
        b.need("scores", "zscore_cols")
        return f"zscore_cols({expr}, mask)"
    b.need("scores", "zscore_rows", "zscore_cols")
    return f"zscore_rows(zscore_cols({expr}, mask), mask)"


def _fuse(genome: Genome, b: _Builder) -> None:
    if genome.fusion == "rrf":
        b.need("scores", "rrf", "RRF_K")
        b.lines("fused = rrf(channels, mask, k=RRF_K)")
    elif genome.fusion == "zsum":
        b.need("scores", "zscore_rows")
        b.lines(
            "fused = np.zeros((n_q, n_d), dtype=np.float32)",
            "for channel in channels:",
            "    fused += zscore_rows(channel, mask)",
        )
    else:
        weights = ", ".join(["1.0"] + [str(AUX_WEIGHT)] * (len(genome.channels) - 1))
        b.constants.append(f"CHANNEL_WEIGHTS = ({weights})")
        b.lines(
            "fused = np.zeros((n_q, n_d), dtype=np.float32)",
            "for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):",
            "    fused += np.float32(weight) * channel",
        )


def _feedback_round(genome: Genome, round_no: int, b: _Builder) -> None:
    b.lines(f"# feedback round {round_no}: refine the query from the fused top-K, rescore D")
    if genome.refine == "rocchio":
        b.lines(f"query = {_use_rocchio(b)}(query, D, fused, mask)")
    elif genome.refine == "softcentroid":
        b.need("feedback", "soft_centroid_query")
        b.need("scores", "zscore_rows")
        b.constant("FEEDBACK_K", "SOFT_TAU", "SOFT_ALPHA")
        b.lines(
            "query = soft_centroid_query(",
            "    query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, "
            "alpha=SOFT_ALPHA, mask=mask",
            ")",
        )
    else:
        b.need("feedback", "vprf_update")
        b.need("scores", "top_k_indices")
        b.constant("FEEDBACK_K", "VPRF_BETA")
        b.lines("query = vprf_update(query, D, top_k_indices(fused, FEEDBACK_K, mask), VPRF_BETA)")
    if genome.fusion == "rrf":
        b.lines("fused = rrf([fused, query @ D.T], mask, k=RRF_K)")
    else:
        b.need("scores", "zscore_rows")
        b.lines("fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)")


def render_program(
    genome: Genome, *, novelty: str = "", hypothesis: str = "", parent_id: str | None = None
) -> str:
    """The program file of ``genome``, with its header docstring.

    Args:
        genome: the genome.
        novelty: the header's ``Novelty:`` sentence.
        hypothesis: the header's ``Hypothesis:`` sentence.
        parent_id: the header's ``Parent:`` id (``None`` renders ``none``).

    Returns:
        Python source defining ``program(Q, D, S, ctx)``.

    """
    b = _Builder()
    b.need("scores", "candidate_mask")
    b.lines("n_q, n_d = S.shape", "mask = candidate_mask(n_q, n_d, ctx.candidates)")
    exprs = []
    for name, norm in genome.channels:
        exprs.append(_normalised(CHANNELS[name].emit(b), norm, b))
    b.lines("channels = [", *(f"    {e}," for e in exprs), "]")
    _fuse(genome, b)
    if genome.rounds:
        b.lines("query = Q")
    for round_no in range(1, genome.rounds + 1):
        _feedback_round(genome, round_no, b)
    b.lines(
        "if mask is not None:",
        "    fused = np.where(mask, fused, 0.0)",
        "return fused.astype(np.float32)",
    )
    return _assemble(genome, b, novelty, hypothesis, parent_id)


def _assemble(
    genome: Genome, b: _Builder, novelty: str, hypothesis: str, parent_id: str | None
) -> str:
    title = (
        f"Structural program: {' + '.join(genome.names)} by {_FUSION_LABEL[genome.fusion]}, "
        f"{genome.rounds} feedback round{'s' if genome.rounds != 1 else ''}."
    )
    header = [
        '"""' + title,
        "",
        f"Novelty: {novelty}",
        f"Hypothesis: {hypothesis}",
        f"Parent: {parent_id or 'none'}",
        f"Genome: {genome.to_json()}",
        '"""',
    ]
    out = [*header, "", "import numpy as np", ""]
    for module in sorted(b.imports):
        names = sorted(b.imports[module], key=lambda n: (not n.isupper(), n.lower()))
        line = f"from {module} import {', '.join(names)}"
        if len(line) <= 100:
            out.append(line)
        else:
            out += [f"from {module} import (", *(f"    {n}," for n in names), ")"]
    constants = [f"{n} = {_CONSTANTS[n]}" for n in b.constants if n in _CONSTANTS]
    constants += [c for c in b.constants if c not in _CONSTANTS]
    if constants:
        out += ["", *constants]
    for helper in sorted(b.helpers):
        out += ["", "", b.helpers[helper].rstrip()]
    out += ["", "", "def program(Q, D, S, ctx):"]
    out += [f"    {line}" if line else "" for line in b.body]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# Mutations


Mutation = Callable[[Genome, random.Random], tuple[Genome, str] | None]


def _with_channels(g: Genome, channels: dict[str, str]) -> Genome:
    return Genome.make(channels, g.fusion, g.rounds, g.refine)


def _add_channel(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    absent = [c for c in CHANNELS if c not in g.names]
    if len(g.channels) >= MAX_CHANNELS or not absent:
        return None
    name, norm = rng.choice(absent), rng.choice(NORMALISATIONS)
    label = f"adds {CHANNELS[name].label} ({_NORM_LABEL[norm]})"
    return _with_channels(g, {**dict(g.channels), name: norm}), label


def _remove_channel(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    if len(g.channels) <= 2:
        return None
    name = rng.choice(g.names)
    kept = {c: n for c, n in g.channels if c != name}
    return _with_channels(g, kept), f"drops {CHANNELS[name].label}"


def _swap_channel(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    absent = [c for c in CHANNELS if c not in g.names]
    if not absent:
        return None
    old, new = rng.choice(g.names), rng.choice(absent)
    channels = {c: n for c, n in g.channels if c != old}
    channels[new] = dict(g.channels)[old]
    label = f"replaces {CHANNELS[old].label} with {CHANNELS[new].label}"
    return _with_channels(g, channels), label


def _change_granularity(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    chunked = [c for c in g.names if CHANNELS[c].family == "chunk"]
    if not chunked:
        return None
    old = rng.choice(chunked)
    options = [c for c in CHANNELS if CHANNELS[c].family == "chunk" and c not in g.names]
    if not options:
        return None
    new = rng.choice(options)
    channels = {c: n for c, n in g.channels if c != old}
    channels[new] = dict(g.channels)[old]
    label = f"changes {CHANNELS[old].label} to {CHANNELS[new].label}"
    return _with_channels(g, channels), label


def _change_fusion(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    fusion = rng.choice([f for f in FUSIONS if f != g.fusion])
    label = f"fuses by {_FUSION_LABEL[fusion]} instead of {_FUSION_LABEL[g.fusion]}"
    return replace(g, fusion=fusion), label


def _add_round(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    if g.rounds >= MAX_ROUNDS:
        return None
    refine = g.refine if g.rounds else rng.choice(REFINEMENTS)
    label = f"adds feedback round {g.rounds + 1} ({refine} refinement of the fused top-K)"
    return Genome.make(dict(g.channels), g.fusion, g.rounds + 1, refine), label


def _remove_round(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    if g.rounds == 0:
        return None
    label = f"drops feedback round {g.rounds}"
    return Genome.make(dict(g.channels), g.fusion, g.rounds - 1, g.refine), label


def _change_refine(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    if g.rounds == 0:
        return None
    refine = rng.choice([r for r in REFINEMENTS if r != g.refine])
    return replace(g, refine=refine), f"refines the query by {refine} instead of {g.refine}"


def _change_norm(g: Genome, rng: random.Random) -> tuple[Genome, str] | None:
    name = rng.choice(g.names)
    old = dict(g.channels)[name]
    norm = rng.choice([n for n in NORMALISATIONS if n != old])
    label = f"switches {CHANNELS[name].label} to {_NORM_LABEL[norm]} (was {_NORM_LABEL[old]})"
    return _with_channels(g, {**dict(g.channels), name: norm}), label


MUTATIONS: tuple[Mutation, ...] = (
    _add_channel,
    _remove_channel,
    _swap_channel,
    _change_granularity,
    _change_fusion,
    _add_round,
    _remove_round,
    _change_refine,
    _change_norm,
)
"""The structural mutations: each returns ``(genome, description)``, or ``None`` if inapplicable."""


def mutate(genome: Genome, rng: random.Random) -> tuple[Genome, str]:
    """One applicable mutation of ``genome``, chosen by ``rng``."""
    options = list(MUTATIONS)
    rng.shuffle(options)
    for mutation in options:
        result = mutation(genome, rng)
        if result is not None and result[0] != genome:
            return result
    raise RuntimeError("no mutation applies")  # unreachable: the fusion can always change


# ---------------------------------------------------------------------------------------------
# The proposer


@cache
def _code_structure(genome: Genome) -> tuple[str, ...]:
    return structure(render_program(genome))


@dataclass(frozen=True)
class _Known:
    """What the history says has been tried, and the structures a new program must avoid."""

    genomes: frozenset[Genome]
    fingerprints: frozenset[str]
    structures: tuple[tuple[str, ...], ...]


class StructuralProposer:
    """Composes and mutates primitive-based programs; needs no LLM (see the module docstring).

    Args:
        seed: the proposer's seed, combined with the run's seed, the generation and the
            history.
        check_library: also keep proposals structurally distinct from the library programs
            (they are registered programs for the novelty check).

    """

    name = "structural"

    def __init__(self, seed: int = 0, *, check_library: bool = True) -> None:
        self.seed = seed
        self.check_library = check_library
        self._library: tuple[tuple[str, ...], ...] | None = None

    def propose(self, state: SearchState) -> Proposal:
        """Write the next genome's program (deterministic given seed, generation, history)."""
        started = time.perf_counter()
        rng = random.Random(self._seed_for(state))
        known = self._known(state)
        parent_genome, parent_id = self._parent(state)
        genome, changes = self._search(parent_genome, state.generation, known, rng)
        mutated_from = parent_id if parent_genome is not None else None
        novelty, hypothesis = _claims(genome, changes, mutated_from)
        source = render_program(genome, novelty=novelty, hypothesis=hypothesis, parent_id=parent_id)
        return Proposal(
            source=source,
            novelty=novelty,
            hypothesis=hypothesis,
            usage=Usage(model="structural", seconds=time.perf_counter() - started),
            proposer=self.name,
            parent_id=parent_id,
            raw_reply=source,
        )

    def _seed_for(self, state: SearchState) -> int:
        digest = hashlib.blake2b(digest_size=16)
        digest.update(f"{self.seed}:{state.seed}:{state.generation}".encode())
        for record in state.history:
            fields = (record.program_id, record.status.value, record.fingerprint, record.novelty)
            digest.update("|".join(str(f) for f in fields).encode())
        return int.from_bytes(digest.digest(), "big")

    def _parent(self, state: SearchState) -> tuple[Genome | None, str | None]:
        """The best frontier program that carries a genome, else none (and P0 as parent)."""
        for program in state.frontier:
            genome = genome_from_source(program.source)
            if genome is not None:
                return genome, program.record.program_id
        roots = [r.program_id for r in state.history if r.generation == 0]
        return None, roots[0] if roots else None

    def _known(self, state: SearchState) -> _Known:
        genomes: set[Genome] = set()
        structures: list[tuple[str, ...]] = []
        for record in state.history:
            for tag in _GENOME_TAG.findall(record.novelty):
                try:
                    genome = Genome.from_key(tag)
                except ValueError:
                    continue
                genomes.add(genome)
                if record.status == Status.OK:
                    structures.append(_code_structure(genome))
        for program in state.frontier:
            recovered = genome_from_source(program.source)
            if recovered is not None:
                genomes.add(recovered)
            try:
                structures.append(structure(program.source))
            except SyntaxError:
                continue
        if self.check_library:
            if self._library is None:
                self._library = tuple(library_structures().values())
            structures.extend(self._library)
        prints = frozenset(r.fingerprint for r in state.history if r.fingerprint)
        return _Known(frozenset(genomes), prints, tuple(structures))

    def _search(
        self, parent: Genome | None, generation: int, known: _Known, rng: random.Random
    ) -> tuple[Genome, list[str]]:
        """The first new genome reached by stacking mutations on the parent (or the base)."""
        start = parent or BASE_GENOME
        if parent is None and generation <= 1 and _is_new(BASE_GENOME, known):
            return BASE_GENOME, []
        fallback: tuple[Genome, list[str]] | None = None
        for _ in range(_MAX_ATTEMPTS):
            genome, changes = start, []
            for _ in range(_MAX_STEPS):
                genome, change = mutate(genome, rng)
                changes.append(change)
                if genome in known.genomes or fingerprint(_code_structure(genome)) in (
                    known.fingerprints
                ):
                    continue
                fallback = fallback or (genome, list(changes))
                if _is_new(genome, known):
                    return genome, changes
        if fallback is not None:  # untried but close to a known program: the loop will judge
            return fallback
        return mutate(start, rng)[0], ["repeats a known structure (the genome space is spent)"]


def _is_new(genome: Genome, known: _Known) -> bool:
    if genome in known.genomes:
        return False
    shape = _code_structure(genome)
    if fingerprint(shape) in known.fingerprints:
        return False
    return all(_similarity_below(shape, other) for other in known.structures)


def _similarity_below(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether difflib's ratio of ``a`` and ``b`` is below the novelty threshold."""
    if a == b:
        return False
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    # The cheap upper bounds settle most pairs; the exact ratio only when they cannot.
    return (
        matcher.real_quick_ratio() < NOVELTY_THRESHOLD
        or matcher.quick_ratio() < NOVELTY_THRESHOLD
        or matcher.ratio() < NOVELTY_THRESHOLD
    )


def _claims(genome: Genome, changes: list[str], mutated_from: str | None) -> tuple[str, str]:
    """The Novelty and Hypothesis sentences (the novelty carries the genome tag).

    ``mutated_from`` is the program whose genome was mutated; ``None`` for the base genome.
    """
    labels = [CHANNELS[c].label for c in genome.names]
    if changes:
        where = f"Relative to {mutated_from}, " if mutated_from else "Relative to the base genome, "
        novelty = where + "; ".join(changes)
    else:
        novelty = f"Fuses {_join(labels)} by {_FUSION_LABEL[genome.fusion]}"
    novelty += f" [genome {genome.key()}]."
    reasons = [CHANNELS[c].rationale for c in genome.names if c != "dense"]
    hypothesis = (
        f"Fusing {_join(labels)} by {_FUSION_LABEL[genome.fusion]} should raise nDCG@10 on "
        f"every task, because {'; '.join(reasons) or 'the channels err differently'}"
    )
    if genome.rounds:
        hypothesis += (
            f"; {genome.rounds} {genome.refine} feedback round"
            f"{'s' if genome.rounds > 1 else ''} then pull each query toward its fused top-K"
        )
    return novelty, hypothesis + "."


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
