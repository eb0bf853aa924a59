"""How a tune run names the one second stage to deploy: ``RUN/pick-rule.json``.

The rule is written into the run before the fusions are tuned or the search starts, and a
resume refuses a rule file that differs (its sha256 is in ``pick.json``). It reads only the
tune queries' **validation** part (:mod:`~embedding_ttc.tune.run`: the inner cut that neither
the search's proposer nor the fusions' fit saw) and chooses among the tuned fusion, the
programs the library already has and the programs the search found:

* **signal**: the candidate's mean nDCG@10 minus the tuned fusion's over the validation
  queries, above ``margin`` (by default the W/T/L tie threshold, 0.001);
* **tail, relative to the tuned fusion**: no more validation queries more than ``deep_loss``
  below P0 than the tuned fusion has;
* **served time**: seconds per query at the run's shortlist (the query's encoding plus the
  program's work outside the encoder, measured side by side with P0 in one evaluation) at most
  ``max_slowdown`` times P0's.

The pick is the eligible candidate with the highest signal (the first in candidate order on a
tie). When none is eligible, the tuned fusion is the pick: the rule always answers "deploy
this".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from embedding_ttc.durable import write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.comparison import DEEP_LOSS, TIE_THRESHOLD

TUNE_RULE_FILE = "pick-rule.json"

MAX_SLOWDOWN = 1.3
"""The default served-time bar: at most 1.3 times P0's seconds per query."""


class TuneRuleError(EmbeddingTTCError):
    """A rule file that cannot be read, or is not the one the run registered."""


class TuneRule(BaseModel):
    """A tune run's pick rule (``RUN/pick-rule.json``).

    Attributes:
        margin: the validation signal a candidate must exceed (mean nDCG@10 above the tuned
            fusion's).
        deep_loss: the per-query loss against P0 that counts as deep.
        relative_tail: require no more deep losses than the tuned fusion has.
        max_slowdown: the highest served seconds per query, as a multiple of P0's.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    margin: float = Field(default=TIE_THRESHOLD, ge=0.0)
    deep_loss: float = Field(default=DEEP_LOSS, gt=0.0, le=1.0)
    relative_tail: bool = True
    max_slowdown: float = Field(default=MAX_SLOWDOWN, ge=1.0)


def rule_text(rule: TuneRule) -> str:
    """The file body of ``rule`` (stable: the digest is of these bytes)."""
    return json.dumps(rule.model_dump(mode="json"), indent=2) + "\n"


def register_rule(run_dir: Path, rule: TuneRule) -> str:
    """Write ``rule`` into a new run, or check a resumed run's file; the file's sha256.

    Raises:
        TuneRuleError: the run's rule file is not a rule, or is not ``rule``.

    """
    path = run_dir / TUNE_RULE_FILE
    text = rule_text(rule)
    if path.is_file():
        try:
            recorded = TuneRule.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise TuneRuleError(f"{path} is not a tune pick rule: {exc}") from None
        if recorded != rule:
            raise TuneRuleError(
                f"{path} registers another rule than asked ({recorded.model_dump()} against "
                f"{rule.model_dump()}): a run's rule never changes once written; use a new "
                "run folder"
            )
    else:
        write_atomic(path, text)
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Scored:
    """One candidate as the rule reads it.

    Attributes:
        name: its label.
        validation: its per-query nDCG@10 on the validation queries, in one order for all.
        served_seconds: its seconds per query (query encoding plus its own work).

    """

    name: str
    validation: Sequence[float]
    served_seconds: float


class Verdict(BaseModel):
    """What the rule read of one candidate and whether it passed.

    Attributes:
        name: the candidate's label.
        validation_ndcg: its mean nDCG@10 over the validation queries.
        signal: that minus the tuned fusion's.
        deep_losses: its validation queries more than ``deep_loss`` below P0.
        slowdown: its served seconds per query over P0's.
        eligible: it passes all three conditions.
        why_not: the first condition it fails (empty when eligible).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    validation_ndcg: float
    signal: float
    deep_losses: int
    slowdown: float
    eligible: bool
    why_not: str = ""


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0


def judge(
    rule: TuneRule, p0: Scored, fusion: Scored, candidates: Sequence[Scored]
) -> tuple[list[Verdict], Verdict]:
    """Every candidate's verdict and the pick (the tuned fusion's verdict when none passes).

    Raises:
        TuneRuleError: the candidates were not scored on the same validation queries.

    """
    n = len(p0.validation)
    for c in (fusion, *candidates):
        if len(c.validation) != n:
            raise TuneRuleError(
                f"{c.name} was scored on {len(c.validation)} validation queries, P0 on {n}"
            )

    def deep(c: Scored) -> int:
        return sum(
            1 for a, b in zip(c.validation, p0.validation, strict=True) if a - b < -rule.deep_loss
        )

    base = _mean(fusion.validation)
    bar = deep(fusion)
    p0_seconds = max(p0.served_seconds, 1e-12)

    def verdict(c: Scored) -> Verdict:
        signal = _mean(c.validation) - base
        losses = deep(c)
        slowdown = c.served_seconds / p0_seconds
        why = ""
        if signal <= rule.margin:
            why = f"validation signal {signal:+.4f} is not above {rule.margin}"
        elif rule.relative_tail and losses > bar:
            why = f"{losses} deep losses against P0, the tuned fusion has {bar}"
        elif slowdown > rule.max_slowdown:
            why = f"served at {slowdown:.2f} times P0's time, above {rule.max_slowdown}"
        return Verdict(
            name=c.name,
            validation_ndcg=_mean(c.validation),
            signal=signal,
            deep_losses=losses,
            slowdown=slowdown,
            eligible=not why,
            why_not=why,
        )

    verdicts = [verdict(c) for c in candidates]
    fallback = Verdict(
        name=fusion.name,
        validation_ndcg=base,
        signal=0.0,
        deep_losses=bar,
        slowdown=fusion.served_seconds / p0_seconds,
        eligible=True,
    )
    return verdicts, best(verdicts) or fallback


def best(verdicts: Sequence[Verdict]) -> Verdict | None:
    """The eligible verdict with the highest signal (the first of equals), if any is eligible."""
    eligible = [v for v in verdicts if v.eligible]
    return max(eligible, key=lambda v: v.signal) if eligible else None
