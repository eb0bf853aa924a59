"""The program registry: names -> program factories, with parametrised names and groups.

A plain name (``SoftCentroid``) builds the program with its default, global constants. A
parametrised name (``Rocchio:K=3,beta=0.5``) passes keyword arguments to the factory; values
are parsed as int, then float, then kept as text. The program's ``name`` is the canonical form
of what was asked for, so results and ledgers record exactly which variant ran.

``all`` expands to every registered plain name; a group name (``rocchio-grid``) expands to its
members.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from embedding_ttc.errors import UnknownNameError
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.p0 import P0
from embedding_ttc.programs.recipe import Recipe, recipe_of
from embedding_ttc.registry import Registry

ProgramFactory = Callable[..., Program]

PROGRAMS: Registry[ProgramFactory] = Registry("program")
GROUPS: dict[str, list[str]] = {}

PROGRAMS.register("P0", P0)

# The library, imported when a program is built (keeps start-up light). Name -> module:class.
_LIBRARY = {
    "BidirZScore": "bidir_zscore:BidirZScore",
    "SentMaxSim": "sent_maxsim:SentMaxSim",
    "AdaptGranularity": "adapt_granularity:AdaptGranularity",
    "CoverageTriple": "coverage_triple:CoverageTriple",
    "LexicalHybridRRF": "lexical_hybrid_rrf:LexicalHybridRRF",
    "CrossRoundRRF": "cross_round_rrf:CrossRoundRRF",
    "DiverseDualCtx": "diverse_dual_ctx:DiverseDualCtx",
    "ConsensusRocchio": "consensus_rocchio:ConsensusRocchio",
    "NegContrastive": "neg_contrastive:NegContrastive",
    "MomentumProg": "momentum_prog:MomentumProg",
    "GraphCentrality": "graph_centrality:GraphCentrality",
    "FisherStability": "fisher_stability:FisherStability",
    "SoftCentroid": "soft_centroid:SoftCentroid",
    "Rocchio": "rocchio:Rocchio",
    "BM25": "bm25:BM25Program",
    "BM25DenseRRF": "bm25_dense_rrf:BM25DenseRRF",
    "ConvexHybrid": "convex_hybrid:ConvexHybrid",
    "WeightedRRF": "weighted_rrf:WeightedRRF",
    "RanxFusion": "ranx_fusion:RanxFusion",
}


def _lazy(target: str) -> ProgramFactory:
    module, _, cls = target.partition(":")

    def factory(**params: object) -> Program:
        mod = importlib.import_module(f"embedding_ttc.programs.library.{module}")
        built: Program = getattr(mod, cls)(**params)
        return built

    return factory


for _name, _target in _LIBRARY.items():
    PROGRAMS.register(_name, _lazy(_target))


def library_modules() -> dict[str, str]:
    """The library's program names with the dotted module each lives in (P0 included)."""
    out = {"P0": "embedding_ttc.programs.p0"}
    for name, target in _LIBRARY.items():
        out[name] = f"embedding_ttc.programs.library.{target.partition(':')[0]}"
    return out


def register_group(name: str, members: list[str]) -> None:
    """Register a named list of (possibly parametrised) program names."""
    if name in GROUPS or name in PROGRAMS:
        raise ValueError(f"program group {name!r} is already registered")
    GROUPS[name] = list(members)


def _value(text: str) -> int | float | str:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            continue
    return text


def parse_name(name: str) -> tuple[str, dict[str, int | float | str]]:
    """Split ``Base:k=v,k=v`` into the base name and its keyword arguments."""
    base, _, rest = name.partition(":")
    params: dict[str, int | float | str] = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise UnknownNameError(
                    f"malformed program parameters in {name!r}: use Name:k=v,k=v"
                )
            params[key.strip()] = _value(value.strip())
    return base, params


def get_program(name: str) -> Program:
    """Build the program called ``name`` (plain or parametrised)."""
    base, params = parse_name(name)
    factory = PROGRAMS.get(base)
    if not params:
        return factory()
    try:
        program = factory(**params)
    except TypeError as exc:
        raise UnknownNameError(
            f"program {base!r} does not take parameters {params}: {exc}"
        ) from None
    program.name = name
    return program


REFERENCE_PROGRAM = "BM25DenseRRF"
"""The plain sparse-dense hybrid a user already has: the reference a search compares every
candidate with (``search --reference``) and the transfer tables compare every program with
head to head."""

#: The paper's twelve Pareto-optimal programs (Table 2), in ascending cost.
FRONTIER: tuple[str, ...] = (
    "BidirZScore",
    "SentMaxSim",
    "AdaptGranularity",
    "CoverageTriple",
    "LexicalHybridRRF",
    "CrossRoundRRF",
    "DiverseDualCtx",
    "ConsensusRocchio",
    "NegContrastive",
    "MomentumProg",
    "GraphCentrality",
    "FisherStability",
)
register_group("frontier", list(FRONTIER))
# The same twelve under a name that never means a search run's frontier (transfer's
# --programs frontier names that run's admitted programs when --search-run is given).
register_group("paper", list(FRONTIER))
#: What ``evaluate --suite quickstart --program quickstart`` runs: programs that encode
#: nothing beyond P0's own encodings (c = 1 by their recipes), each standing for a kind of
#: second stage a newcomer compares, at its fixed constants:
#:
#: * ``P0``: the cosine baseline every Δ is measured against;
#: * ``BM25DenseRRF``: the sparse-dense hybrid a user already has (:data:`REFERENCE_PROGRAM`);
#: * ``BM25``: the hybrid's lexical half alone;
#: * ``SoftCentroid``: the paper's pseudo-relevance feedback program over the embeddings.
#:
#: Chosen by what they are, not by any result: held-out numbers are for reporting only.
QUICKSTART: tuple[str, ...] = ("P0", REFERENCE_PROGRAM, "BM25", "SoftCentroid")
register_group("quickstart", list(QUICKSTART))
# The fusion baselines' grids (ConvexHybrid, WeightedRRF): evaluated on the discovery suite only.
_FUSION_WEIGHTS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
register_group(
    "convex-grid",
    [f"ConvexHybrid:alpha={a},norm={n}" for n in ("minmax", "zscore") for a in _FUSION_WEIGHTS],
)
register_group("wrrf-grid", [f"WeightedRRF:w={w}" for w in _FUSION_WEIGHTS])
register_group(
    "rocchio-grid",
    [f"Rocchio:K={k},beta={b}" for k in (2, 3, 5, 10) for b in (0.1, 0.3, 0.5, 0.7)],
)


def recipe_for(name: str) -> Recipe:
    """The deployment recipe of a (possibly parametrised) program; unknown names suggest others.

    A recipe belongs to the program, not to its parameters: ``Rocchio:K=3`` deploys as
    ``Rocchio`` does.
    """
    base, _ = parse_name(name)
    return recipe_of(get_program(base))


def resolve_program_names(names: list[str]) -> list[str]:
    """Expand ``all`` and group names; check that every name builds."""
    out: list[str] = []
    for name in names:
        if name == "all":
            expanded = PROGRAMS.names()
        elif name in GROUPS:
            expanded = GROUPS[name]
        else:
            expanded = [name]
        for n in expanded:
            get_program(n)
            if n not in out:
                out.append(n)
    return out
