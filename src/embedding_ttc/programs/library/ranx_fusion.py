"""*RanxFusion*: the cosine and BM25 over each query's candidates, fused by ranx.

The fusion a search engineer tunes on judged queries, as ranx implements it (Bassani, "ranx:
A Blazing-Fast Python Library for Ranking Evaluation, Comparison, and Fusion", ECIR 2022;
``ranx.fuse``): two runs over the same candidates, the dense run (the cosine ``S``) and the
lexical run (BM25 as in the ``BM25`` baseline), each normalised per query by one of ranx's
normalisers, then combined by one of its fusion methods with the parameters ranx's
``optimize_fusion`` found. Nothing here re-implements a normaliser or a method: the program
builds the two runs, calls ``ranx.fuse`` and reads the fused scores back into the matrix.

A program's name carries everything it needs (``RanxFusion:method=wsum,norm=min-max,
weights=0.3/0.7``), so a tuned fusion is deployed by its name like any library program. A
parameter that is a list of numbers is written with ``/`` between them; one list per run
(the trained methods' tables: ``probfuse``, ``segfuse``, ``slidefuse``, ``posfuse``,
``bayesfuse``) with ``|`` between the runs (:func:`encode_params`, :func:`decode_params`).

The plain name, ``RanxFusion``, is CombSUM of the min-max normalised runs, the fusion that
needs no fitted parameter. Choices where the sources leave room: queries are fused over their own
candidates (``ctx.candidates``; every document when there are none); non-candidates score 0
(the evaluator ranks candidates only). No encoder call: c = 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from embedding_ttc.errors import EmbeddingTTCError, MissingExtraError
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.hybrid_evidence import ranked_bm25
from embedding_ttc.programs.primitives.channels import candidates_of
from embedding_ttc.programs.recipe import Recipe

SCORE_METHODS: tuple[str, ...] = (
    "wsum",
    "wmnz",
    "gmnz",
    "mixed",
    "sum",
    "mnz",
    "max",
    "min",
    "med",
    "anz",
)
"""ranx's fusion methods that combine the normalised scores: the normaliser changes them."""

RANK_METHODS: tuple[str, ...] = (
    "rrf",
    "isr",
    "log_isr",
    "logn_isr",
    "bordafuse",
    "w_bordafuse",
    "condorcet",
    "w_condorcet",
    "rbc",
    "probfuse",
    "segfuse",
    "slidefuse",
    "posfuse",
    "bayesfuse",
    "mapfuse",
)
"""ranx's fusion methods that read ranks or positions only: every normaliser (each monotone
per query) gives them the same input, so they are tuned under ranx's default, ``min-max``."""

NORMALISERS: tuple[str, ...] = ("min-max", "max", "sum", "zmuv", "rank", "borda")
"""ranx's normalisers (``ranx.normalize``)."""

UNTUNED_METHODS: frozenset[str] = frozenset(
    {"sum", "mnz", "max", "min", "med", "anz", "isr", "log_isr", "bordafuse", "condorcet"}
)
"""The methods that take no parameter."""

TUNED_METHODS: frozenset[str] = frozenset(SCORE_METHODS + RANK_METHODS) - UNTUNED_METHODS
"""The methods ``ranx.optimize_fusion`` fits (a parameter search, or training on judgements)."""

DEFAULT_NORM = "min-max"

DEFAULT_METHOD = "sum"
"""The plain name's method: CombSUM (Fox and Shaw 1994), the fusion that needs no parameter."""


class RanxFusionError(EmbeddingTTCError):
    """A RanxFusion name asks for a method or normaliser ranx lacks, or parameters it refuses."""


def import_ranx() -> Any:
    """The ``ranx`` module.

    Raises:
        MissingExtraError: ranx is not installed (with the install hint).

    """
    try:
        import ranx
    except ImportError:
        raise MissingExtraError("ranx", "tune", "RanxFusion (the tuned fusions)") from None
    return ranx


def _number(value: float) -> str:
    return repr(round(float(value), 6))


def encode_params(params: Mapping[str, Any]) -> dict[str, int | float | str]:
    """Ranx's parameters as the values of a program name (see the module docstring)."""
    out: dict[str, int | float | str] = {}
    for key, value in sorted(params.items()):
        if isinstance(value, int | np.integer) and not isinstance(value, bool):
            out[key] = int(value)
        elif isinstance(value, float | np.floating):
            out[key] = round(float(value), 6)
        else:
            items = list(value)
            if items and np.ndim(items[0]) > 0:
                out[key] = "|".join("/".join(_number(x) for x in np.ravel(i)) for i in items)
            else:
                out[key] = "/".join(_number(x) for x in items)
    return out


def decode_params(method: str, params: Mapping[str, int | float | str]) -> dict[str, Any]:
    """The keyword arguments ``ranx.fuse`` takes for ``method`` from a program name's values."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        if not isinstance(value, str):
            out[key] = value
            continue
        try:
            if "|" in value:
                rows = [np.array([float(x) for x in part.split("/")]) for part in value.split("|")]
                out[key] = np.vstack(rows) if method == "probfuse" else rows
            else:
                out[key] = [float(x) for x in value.split("/")]
        except ValueError:
            raise RanxFusionError(
                f"RanxFusion: parameter {key}={value!r} is not a list of numbers"
            ) from None
    return out


def fuse_rows(
    dense: Sequence[np.ndarray],
    lexical: Sequence[np.ndarray],
    *,
    method: str,
    norm: str,
    params: Mapping[str, Any],
) -> list[np.ndarray]:
    """Fuse each query's dense and lexical scores over its candidates with ``ranx.fuse``.

    ``dense[i]`` and ``lexical[i]`` are query ``i``'s scores of the same candidates, in the
    same order; the result holds the fused score of each candidate, in that order.
    """
    ranx = import_ranx()

    def run(rows: Sequence[np.ndarray], name: str) -> Any:
        return ranx.Run(
            {
                f"q{i}": {f"d{j}": float(v) for j, v in enumerate(np.asarray(row))}
                for i, row in enumerate(rows)
            },
            name=name,
        )

    try:
        fused = ranx.fuse(
            runs=[run(dense, "dense"), run(lexical, "bm25")],
            norm=norm,
            method=method,
            params=dict(params) or None,
        )
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise RanxFusionError(
            f"ranx could not fuse by {method} under {norm} with {dict(params)}: {exc}"
        ) from None
    scores = fused.to_dict()
    out = []
    for i, row in enumerate(dense):
        got = scores.get(f"q{i}", {})
        out.append(np.array([got.get(f"d{j}", 0.0) for j in range(len(row))], dtype=np.float64))
    return out


class RanxFusion:
    """The cosine and BM25 over each query's candidates, fused by ``ranx.fuse``.

    Attributes:
        name: ``"RanxFusion"``; the catalog sets the parametrised name on an instance.
        method: a ranx fusion method (:data:`SCORE_METHODS`, :data:`RANK_METHODS`).
        norm: a ranx normaliser (:data:`NORMALISERS`).
        params: the method's parameters as ``ranx.fuse`` takes them.

    """

    name = "RanxFusion"
    recipe = Recipe(lexical=True, batch="candidates")

    def __init__(
        self, method: str = DEFAULT_METHOD, norm: str = DEFAULT_NORM, **params: int | float | str
    ) -> None:
        """Check the method and normaliser, and decode the parameters.

        Raises:
            RanxFusionError: an unknown method or normaliser.

        """
        if method not in (*SCORE_METHODS, *RANK_METHODS):
            raise RanxFusionError(
                f"RanxFusion: unknown method {method!r}; ranx's methods of two runs: "
                f"{', '.join((*SCORE_METHODS, *RANK_METHODS))}"
            )
        if norm not in NORMALISERS:
            raise RanxFusionError(
                f"RanxFusion: unknown normaliser {norm!r}; ranx's: {', '.join(NORMALISERS)}"
            )
        self.method = method
        self.norm = norm
        self.params = decode_params(method, params)

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the fused score of each query's candidates (0 elsewhere)."""
        n_q, n_d = S.shape
        lexical = ranked_bm25(ctx)
        cands = [candidates_of(ctx, i, n_d) for i in range(n_q)]
        fused = fuse_rows(
            [np.asarray(S[i, c], dtype=np.float64) for i, c in enumerate(cands)],
            [np.asarray(lexical[i, c], dtype=np.float64) for i, c in enumerate(cands)],
            method=self.method,
            norm=self.norm,
            params=self.params,
        )
        out = np.zeros((n_q, n_d), dtype=np.float32)
        for i, (c, row) in enumerate(zip(cands, fused, strict=True)):
            out[i, c] = row
        return out


def program_name(method: str, norm: str, params: Mapping[str, Any]) -> str:
    """The catalog name of the fusion ``method`` under ``norm`` with ranx's ``params``."""
    parts = [f"method={method}", f"norm={norm}"]
    parts += [f"{k}={v}" for k, v in encode_params(params).items()]
    return "RanxFusion:" + ",".join(parts)
