"""Measures beyond nDCG@10 (``--metrics``), computed by pytrec_eval from each program's ranking.

nDCG@10 stays the package's measure (its own code, checked against pytrec_eval's
``ndcg_cut_10``), and every Δ and W/T/L is on it; the measures named here are reported beside
it, per query and in aggregate, and pytrec_eval (trec_eval 9) computes every one of them from
the ranking the program produced: the same ranking the run directory's ``.trec`` file holds.

**Names** are trec_eval's, as pytrec_eval accepts them (:data:`pytrec_eval.supported_measures`).
A measure that takes a parameter is a *family* written ``family_param`` or ``family.param``:
``ndcg_cut_10``, ``recall.100``, ``P_5``, ``map_cut_1000``, ``success_1``,
``iprec_at_recall_0.10``; the parameter of a rank-cutoff family is a whole number. One parameter
per name: the comma separates names on the command line, so several cutoffs are several names
(``recall_100,recall_1000``). A family named bare (``P``, ``recall``) would expand to trec_eval's
default list of cutoffs and is refused with the names to use; so are nicknames (``official``,
``all_trec``) and ``runid`` / ``relstring``, which are not numbers. An unknown name suggests the
closest ones, keeping the parameter (``reacll_100`` -> ``recall_100``).

**Depth.** pytrec_eval scores the ranking it is given, so the ranking must be as deep as the
measure looks:

* the rank-cutoff families (``P``, ``recall``, ``ndcg_cut``, ``map_cut``, ``success``,
  ``relative_P``) look at the top ``k``, their cutoff;
* every other measure (``map``, ``recip_rank``, ``Rprec``, ``bpref``, ``ndcg``, ``infAP``,
  ``iprec_at_recall``, the ``set_*`` and ``num_*`` measures...) looks at the whole retrieved
  list: it is given the top :data:`UNCUT_DEPTH` (1000), the depth of a TREC ad hoc run, so
  ``map`` is trec_eval's MAP of a 1000-deep run.

A set of measures needs the largest of its depths. A query never ranks more than its
candidates (the corpus, its pool, a shortlist or a first-stage run), so a shallower list is
scored as it is: ``recall_100`` of 50 candidates counts what those 50 found.

**Queries.** pytrec_eval scores the queries of the run that have judgements; a query whose
ranking is empty (an empty pool) is given 0 for every measure, so that the aggregate is over
the same queries as nDCG@10. The aggregate is pytrec_eval's own
(``compute_aggregated_measure``: the mean; the sum for ``num_*``, the geometric mean for
``gm_*``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pytrec_eval

from embedding_ttc.errors import EmbeddingTTCError, UnknownNameError
from embedding_ttc.evaluation.ranking import Ranked
from embedding_ttc.registry import closest
from embedding_ttc.tasks.task import RetrievalTask

UNCUT_DEPTH = 1000
CUTOFF_FAMILIES = frozenset({"P", "recall", "ndcg_cut", "map_cut", "success", "relative_P"})
NOT_NUMBERS = frozenset({"runid", "relstring"})
# ``family`` + ``_`` or ``.`` + one parameter; the shortest family that leaves a number wins,
# so ``ndcg_cut_10`` is (ndcg_cut, 10) and ``iprec_at_recall_0.10`` is (iprec_at_recall, 0.10).
_PARAMETRISED = re.compile(r"(?P<family>.+?)[._](?P<param>[0-9]+(?:\.[0-9]+)?)")


class MeasureError(EmbeddingTTCError):
    """A measure name that pytrec_eval knows but that cannot be reported as one number."""


@dataclass(frozen=True)
class Measure:
    """One measure: its name as pytrec_eval reports it, and how deep a ranking it needs."""

    name: str
    depth: int


def _probe(name: str) -> list[str]:
    """The names pytrec_eval reports for the measure ``name`` (one, unless a family expands)."""
    evaluator = pytrec_eval.RelevanceEvaluator({"q": {"d": 1}}, {name})
    return sorted(evaluator.evaluate({"q": {"d": 1.0}})["q"])


def _families() -> list[str]:
    return sorted(pytrec_eval.supported_measures - NOT_NUMBERS)


def _suggestions(name: str) -> list[str]:
    m = _PARAMETRISED.fullmatch(name)
    if m:
        near = closest(m["family"], _families())
        return [f"{family}_{m['param']}" for family in near]
    examples = [f"{f}_10" for f in sorted(CUTOFF_FAMILIES)]
    return closest(name, [*_families(), *examples])


def _unknown(name: str) -> UnknownNameError:
    near = _suggestions(name)
    hint = f" Did you mean: {', '.join(near)}?" if near else ""
    return UnknownNameError(
        f"unknown measure {name!r}.{hint} Measures are pytrec_eval's (trec_eval's) names, "
        "a family with its parameter: ndcg_cut_10, recall_100, P_5, map, recip_rank, ..."
    )


def parse_measure(name: str) -> Measure:
    """The measure ``name`` names (see the module docstring for the accepted names).

    Raises:
        UnknownNameError: pytrec_eval has no such measure (with the closest names).
        MeasureError: a bare family, a nickname, a non-numeric measure, a cutoff that is not a
            positive whole number.

    """
    name = name.strip()
    if name in pytrec_eval.supported_nicknames:
        raise MeasureError(f"{name!r} is a pytrec_eval nickname for many measures; name them")
    if name in NOT_NUMBERS:
        raise MeasureError(f"{name!r} is not a number per query; it cannot be reported")
    if name in pytrec_eval.supported_measures:
        family, depth = name, UNCUT_DEPTH
    else:
        m = _PARAMETRISED.fullmatch(name)
        if m is None or m["family"] not in pytrec_eval.supported_measures - NOT_NUMBERS:
            raise _unknown(name)
        family, depth = m["family"], UNCUT_DEPTH
        if family in CUTOFF_FAMILIES:
            if not m["param"].isdigit() or int(m["param"]) < 1:
                raise MeasureError(
                    f"{name!r}: the cutoff of {family} is a positive whole number ({family}_10)"
                )
            depth = int(m["param"])
    reported = _probe(name)
    if len(reported) != 1:
        shown = ", ".join(reported[:4]) + (", ..." if len(reported) > 4 else "")
        raise MeasureError(
            f"{name!r} is a family of {len(reported)} measures ({shown}); name one with its "
            f"parameter, e.g. {reported[0]}"
        )
    return Measure(reported[0], depth)


@dataclass(frozen=True)
class Measures:
    """The measures asked for, in order, without repeats."""

    items: tuple[Measure, ...]

    @property
    def names(self) -> list[str]:
        """The measures' names as pytrec_eval reports them."""
        return [m.name for m in self.items]

    @property
    def depth(self) -> int:
        """How deep a ranking every measure needs (the largest of their depths)."""
        return max(m.depth for m in self.items)


def parse_measures(names: Iterable[str]) -> Measures:
    """Parse measure names; each item may itself be a comma-separated list (``--metrics``).

    Raises:
        UnknownNameError: a name pytrec_eval does not know (with the closest ones).
        MeasureError: see :func:`parse_measure`; also when no name is given.

    """
    items: dict[str, Measure] = {}
    for group in names:
        for name in group.split(","):
            if name.strip():
                measure = parse_measure(name)
                items.setdefault(measure.name, measure)
    if not items:
        raise MeasureError("no measure named (e.g. --metrics ndcg_cut_10,recall_100,map)")
    return Measures(tuple(items.values()))


@dataclass(frozen=True)
class MeasureScores:
    """The measures of one ranking of a task: per measure, the aggregate and each query's."""

    aggregate: dict[str, float]
    per_query: dict[str, dict[str, float]]


class MeasureScorer:
    """pytrec_eval's evaluator for one task's judgements and a set of measures."""

    def __init__(self, measures: Measures, task: RetrievalTask) -> None:
        self.measures = measures
        self.query_ids = list(task.query_ids)
        qrels = {q: dict(task.qrels[q]) for q in self.query_ids}
        self._evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(measures.names))

    def score(self, rankings: Sequence[Ranked]) -> MeasureScores:
        """The measures of ``rankings`` (one per query of the task, in task order)."""
        if len(rankings) != len(self.query_ids):
            raise ValueError(f"{len(rankings)} rankings for {len(self.query_ids)} queries")
        run = {
            q: dict(zip(r.doc_ids, r.scores, strict=True))
            for q, r in zip(self.query_ids, rankings, strict=True)
            if r.doc_ids
        }
        found = self._evaluator.evaluate(run)
        per_query: dict[str, dict[str, float]] = {}
        aggregate: dict[str, float] = {}
        for name in self.measures.names:
            values = {q: float(found.get(q, {}).get(name, 0.0)) for q in self.query_ids}
            per_query[name] = values
            aggregate[name] = float(
                pytrec_eval.compute_aggregated_measure(name, list(values.values()))
            )
        return MeasureScores(aggregate, per_query)
