"""A search run's pick: the one program its rule names, registered before anyone looks.

A run answers "which one program should I deploy?" by a **pick rule** written into its run
directory when the run starts (``RUN_DIR/pick-rule.json``, :class:`PickRule`). Every ledger
line the run writes carries the file's sha256 (``LedgerRecord.pick_rule``), and a resume
refuses a rule file that is not the one the ledger recorded (:func:`register_rule`): the rule
cannot be tuned after the numbers it reads exist. The pick is then a pure function of the
ledger, the rule and the reference's own numbers (``RUN_DIR/reference.json``).

The rule reads discovery data only, from the run's split (:mod:`~embedding_ttc.runs.split`):

* **signal**: a robust aggregate (by default the 20 % trimmed mean) over the tasks of
  ``scope`` of each task's Δ nDCG@10 against ``objective``; over the validation scope those
  are the validation parts of the search tasks and the whole validation tasks. A task with
  1,000 queries weighs what a task with 40 does, and one task cannot carry the signal alone.
* **tail, relative to the reference**: over ``scope``, no more queries below
  :data:`~embedding_ttc.evaluation.comparison.DEEP_LOSS` against P0 than the reference has.
* **cost**: a query-time cost ratio of at most ``max_query_cost_ratio``.

The pick is the eligible program with the highest signal (the earliest in the ledger on a
tie). P0 is always eligible (no deep loss, cost 1), so a run always names one program.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from scipy.stats import trim_mean

from embedding_ttc.durable import write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord, Objective, Scope, SuiteScore

PICK_RULE_FILE = "pick-rule.json"
REFERENCE_FILE = "reference.json"

Aggregate = Literal["trimmed-mean", "median", "mean"]


class PickError(EmbeddingTTCError):
    """A pick rule or reference record that cannot be read, or does not match the ledger."""


class PickRule(BaseModel):
    """How a run names its one program (``RUN_DIR/pick-rule.json``).

    Attributes:
        objective: the baseline of the signal's Δ (``reference``: the run's reference program).
        scope: the queries the rule reads (``validation``: none the proposer saw).
        aggregate: how per-task Δ become one number.
        trim: the share cut from each end for ``trimmed-mean`` (``scipy.stats.trim_mean``).
        relative_tail: require no more deep losses against P0 over ``scope`` than the
            reference has.
        max_query_cost_ratio: the highest query-time cost ratio admitted (``None``: any).
        why: what the rule was justified by (discovery data only).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    objective: Objective = "reference"
    scope: Scope = "validation"
    aggregate: Aggregate = "trimmed-mean"
    trim: float = Field(default=0.2, ge=0.0, lt=0.5)
    relative_tail: bool = True
    max_query_cost_ratio: float | None = Field(default=1.5, ge=1.0)
    why: str = ""

    def signal(self, record: LedgerRecord) -> float | None:
        """``record``'s signal (``None``: the record lacks the per-task Δ the rule reads)."""
        deltas = record.deltas(self.objective, self.scope)
        if not deltas:
            return None
        values = np.fromiter(deltas.values(), dtype=np.float64)
        if self.aggregate == "median":
            return float(np.median(values))
        if self.aggregate == "mean":
            return float(values.mean())
        return float(trim_mean(values, self.trim))


@dataclass(frozen=True)
class Candidate:
    """One evaluated program as the rule sees it.

    Attributes:
        record: the ledger record.
        signal: the rule's signal.
        deep_losses: its queries below the deep-loss line against P0 over the rule's scope.
        eligible: whether it passes the tail and cost conditions.
        why_not: the first condition it fails ("" when eligible).

    """

    record: LedgerRecord
    signal: float
    deep_losses: int
    eligible: bool
    why_not: str = ""


@dataclass(frozen=True)
class Pick:
    """A run's pick and how the rule reached it.

    Attributes:
        rule: the rule.
        digest: the rule file's sha256.
        reference_deep_losses: the reference's deep losses over the rule's scope (the bar).
        candidates: every evaluated program the rule read, in ledger order.
        leaders: the programs that led the eligible ranking as the ledger grew.

    """

    rule: PickRule
    digest: str
    reference_deep_losses: int | None
    candidates: tuple[Candidate, ...]
    leaders: tuple[Candidate, ...]

    @property
    def chosen(self) -> Candidate:
        """The pick: the last leader."""
        return self.leaders[-1]


DEFAULT_RULE = PickRule(
    why=(
        "Chosen on discovery data alone (docs/search.md, 'Selecting for transfer'): across "
        "seeded cuts of results/search-transfer's ten discovery tasks into seven seen and three "
        "held aside, the trimmed mean of per-task validation Δ against the reference on the "
        "seen tasks gave the pick with the lowest regret on the held-aside tasks (0.045 nDCG@10; "
        "mean 0.059, median 0.090) at nearly the mean's rank agreement (Spearman 0.56 vs 0.59). "
        "The tail is relative to the reference because an absolute bar was failed by the "
        "hybrid itself; the cost bar is the target's query-time c <= 1.5."
    )
)
"""The library's pick rule (what ``search`` registers unless given ``--pick-rule``)."""


def digest(path: Path) -> str:
    """The sha256 of a file's bytes (hex)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_rule(path: Path) -> PickRule:
    """A pick rule file.

    Raises:
        PickError: the file is missing, not JSON or not a pick rule.

    """
    try:
        return PickRule.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise PickError(f"{path} does not exist: the run has no pick rule") from None
    except (json.JSONDecodeError, ValidationError) as exc:
        raise PickError(f"{path} is not a pick rule: {exc}") from None


def rule_text(rule: PickRule) -> str:
    """The file body of ``rule`` (stable: the digest is of these bytes)."""
    return json.dumps(rule.model_dump(mode="json"), indent=2) + "\n"


def registered_rule(run_dir: Path, records: Sequence[LedgerRecord]) -> tuple[PickRule, str]:
    """The run's rule file and its digest, checked against every digest its ledger recorded.

    Raises:
        PickError: the run has no rule file (it was made without one, or the file was
            removed after the ledger recorded it), the file is not a rule, or it is not the
            one the ledger recorded.

    """
    path = run_dir / PICK_RULE_FILE
    recorded = {r.pick_rule for r in records if r.pick_rule is not None}
    if not path.is_file():
        if recorded:
            raise PickError(
                f"{path} is missing, but the ledger recorded a pick rule "
                f"(sha256 {sorted(recorded)[0][:12]}…): restore it from the run's history"
            )
        raise PickError(
            f"{run_dir} has no {PICK_RULE_FILE}: the run was made without a pick rule "
            "(a search with a split and a reference registers one when it starts)"
        )
    rule, now = read_rule(path), digest(path)
    changed = recorded - {now}
    if changed:
        raise PickError(
            f"{path} is not the rule the ledger recorded: it changed after the run recorded it "
            f"(the ledger has sha256 {sorted(changed)[0][:12]}…, the file {now[:12]}…); a "
            "run's pick rule is fixed when the run starts: restore it, or use a new --run-dir"
        )
    return rule, now


def register_rule(
    run_dir: Path, records: Sequence[LedgerRecord], given: PickRule, *, explicit: bool = False
) -> str | None:
    """Write the run's rule when it starts, or check it on resume; the rule file's digest.

    A run with no record yet gets ``given``. A run that has records keeps its file, and every
    digest its ledger recorded must be that file's; a run that has records and no rule (made
    before rules were registered) stays without one (``None``).

    Args:
        run_dir: the run directory.
        records: the run's ledger records.
        given: the rule asked for.
        explicit: whether ``given`` was asked for by name (``--pick-rule``), rather than the
            default: a resumed run then refuses a rule other than its own.

    Raises:
        PickError: the file differs from the one the ledger recorded, was removed, or differs
            from an explicit ``given`` once the run has started.

    """
    path = run_dir / PICK_RULE_FILE
    if not path.is_file() and not any(r.pick_rule for r in records):
        if records:  # a run made without a pick rule does not get one after its results
            if explicit:
                raise PickError(
                    f"{run_dir} was started without a pick rule: a rule is registered before "
                    "the numbers it reads exist; use a new --run-dir"
                )
            return None
        write_atomic(path, rule_text(given))
        return digest(path)
    had, now = registered_rule(run_dir, records)
    if had == given:
        return now
    if not records:
        write_atomic(path, rule_text(given))
        return digest(path)
    if explicit:
        raise PickError(
            f"{path} holds another rule than the one asked: a run's pick rule is fixed when "
            "the run starts; resume without --pick-rule, or use a new --run-dir"
        )
    return now


def reference_record(name: str, score: SuiteScore) -> LedgerRecord:
    """The reference program's own numbers as a record (Δ 0 against itself)."""
    return LedgerRecord(
        generation=0,
        program_id=name,
        status=Status.OK,
        per_task=score.per_task,
        mean_delta=score.mean_delta,
        wtl=score.wtl,
        cost_ratio=score.cost_ratio,
        query_time_cost_ratio=score.query_time_cost_ratio,
        novelty="the run's reference program",
        proposer="library",
    )


def write_reference(run_dir: Path, record: LedgerRecord) -> None:
    """Record the reference program's own numbers (``RUN_DIR/reference.json``), once."""
    path = run_dir / REFERENCE_FILE
    if not path.is_file():
        write_atomic(path, record.model_dump_json(indent=1, exclude_none=True) + "\n")


def read_reference(run_dir: Path) -> LedgerRecord | None:
    """The reference's record, or ``None`` when the run has none.

    Raises:
        PickError: the file is not a record.

    """
    path = run_dir / REFERENCE_FILE
    if not path.is_file():
        return None
    try:
        return LedgerRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise PickError(f"{path} is not a reference record: {exc}") from None


def pick(
    records: Sequence[LedgerRecord],
    rule: PickRule,
    rule_digest: str,
    reference: LedgerRecord | None,
) -> Pick:
    """The program ``rule`` names among ``records`` (see the module docstring).

    Raises:
        PickError: the rule needs the reference's numbers and there are none, or no
            evaluated record has the numbers the rule reads.

    """
    bar: int | None = None
    if rule.relative_tail:
        bar = reference.deep_losses("p0", rule.scope) if reference is not None else None
        if bar is None:
            raise PickError(
                "the rule compares deep losses with the reference's, and the run has no "
                f"reference record with them ({REFERENCE_FILE})"
            )
    candidates: list[Candidate] = []
    leaders: list[Candidate] = []
    for record in records:
        if record.status is not Status.OK:
            continue
        signal = rule.signal(record)
        losses = record.deep_losses("p0", rule.scope)
        if signal is None or losses is None:
            continue
        why_not = _why_not(record, losses, rule, bar)
        candidate = Candidate(record, signal, losses, eligible=not why_not, why_not=why_not)
        candidates.append(candidate)
        if candidate.eligible and (not leaders or signal > leaders[-1].signal):
            leaders.append(candidate)
    if not leaders:
        raise PickError(
            f"no evaluated record has the numbers the rule reads (Δ against {rule.objective} "
            f"and deep losses over the {rule.scope} scope)"
        )
    return Pick(rule, rule_digest, bar, tuple(candidates), tuple(leaders))


def _why_not(record: LedgerRecord, losses: int, rule: PickRule, bar: int | None) -> str:
    cost = record.query_time_cost_ratio or record.cost_ratio or 1.0
    if rule.max_query_cost_ratio is not None and cost > rule.max_query_cost_ratio:
        return f"query-time cost ratio {cost:.2f} > {rule.max_query_cost_ratio:g}"
    if bar is not None and losses > bar:
        return f"{losses} deep losses > the reference's {bar}"
    return ""


def pick_json(result: Pick) -> dict[str, object]:
    """A JSON-ready description of a pick."""

    def row(c: Candidate) -> dict[str, object]:
        return {
            "program_id": c.record.program_id,
            "generation": c.record.generation,
            "signal": c.signal,
            "deep_losses": c.deep_losses,
            "query_time_cost_ratio": c.record.query_time_cost_ratio,
            "source_path": c.record.source_path,
            "fingerprint": c.record.fingerprint,
        }

    return {
        "rule": result.rule.model_dump(mode="json"),
        "rule_sha256": result.digest,
        "reference_deep_losses": result.reference_deep_losses,
        "evaluated": len(result.candidates),
        "eligible": sum(c.eligible for c in result.candidates),
        "pick": row(result.chosen),
        "leaders": [row(c) for c in result.leaders],
    }


def render_pick(result: Pick) -> str:
    """A plain-text report of a pick (for the terminal)."""
    rule = result.rule
    trim = f" {rule.trim:g}" if rule.aggregate == "trimmed-mean" else ""
    lines = [
        f"pick rule (sha256 {result.digest[:12]}…): {rule.aggregate}{trim} of per-task Δ "
        f"against {rule.objective} over {rule.scope} queries",
        f"  eligible: query-time c ≤ {rule.max_query_cost_ratio}, deep losses "
        f"≤ the reference's ({result.reference_deep_losses})"
        if rule.relative_tail
        else f"  eligible: query-time c ≤ {rule.max_query_cost_ratio}",
        f"  {sum(c.eligible for c in result.candidates)} of {len(result.candidates)} "
        "evaluated programs eligible",
        "",
        f"  {'leader':<16} {'gen':>4} {'signal':>9} {'deep':>5} {'c_q':>6}",
    ]
    for c in result.leaders:
        c_q = c.record.query_time_cost_ratio
        lines.append(
            f"  {c.record.program_id:<16} {c.record.generation:>4} {c.signal:>+9.4f} "
            f"{c.deep_losses:>5} {'-' if c_q is None else f'{c_q:.2f}':>6}"
        )
    chosen = result.chosen.record
    lines += ["", f"pick: {chosen.program_id} ({chosen.source_path})"]
    return "\n".join(lines)
