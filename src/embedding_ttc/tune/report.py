"""A tune run's test report: computed once, on the test queries only, after ``pick.json``.

``RUN/report/report.json`` (:class:`TuneReport`) holds, on the test queries: the pick, the
tuned fusion, every fusion tried (each as fitted on all the tune queries) and P0, with each
one's nDCG@10, its mean difference from the tuned fusion with the paired bootstrap's 95 %
interval, its queries more than 0.5 below the tuned fusion, and for P0, the tuned fusion and
the pick the served milliseconds per query at the run's shortlist (the query's encoding plus
the program, measured side by side). ``table.md`` and ``figure.png`` render it.

A report already written is never computed again: the test queries are looked at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from embedding_ttc.analysis.stats import paired_bootstrap
from embedding_ttc.evaluation.comparison import DEEP_LOSS
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.tasks.task import RetrievalTask
from embedding_ttc.tune.candidates import Candidate
from embedding_ttc.tune.fusion import FusionBench
from embedding_ttc.tune.records import TuneError
from embedding_ttc.tune.scoring import score_programs
from embedding_ttc.tune.served import Deployable

if TYPE_CHECKING:
    from embedding_ttc.encoders.base import Encoder
    from embedding_ttc.tune.records import CandidatesRecord, FusionRecord, TunePick


class ReportRun(Protocol):
    """What the report needs of the run it reports (:class:`~embedding_ttc.tune.run.TuneRun`)."""

    @property
    def events(self) -> Any:
        """The run's progress callbacks (``stage``, ``advance``, ``line``)."""
        ...

    @property
    def config(self) -> Any:
        """The run's :class:`~embedding_ttc.tune.config.TuneConfig`."""
        ...

    def encoder(self) -> Encoder:
        """The run's (cached) encoder."""
        ...

    def build(self, candidate: Candidate) -> Program:
        """The program a candidate names."""
        ...

    def deployable(self, candidate: Candidate) -> Deployable:
        """What an index is built for."""
        ...

    def served(
        self, programs: list[tuple[str, Deployable]], task: RetrievalTask
    ) -> dict[str, float]:
        """Each program's median served seconds on ``task``."""
        ...


REPORT_DIR = "report"
REPORT_FILE = "report.json"
BOOTSTRAP_SEED = 0


class ReportRow(BaseModel):
    """One program on the test queries.

    Attributes:
        name: its label.
        role: ``pick``, ``tuned fusion``, ``fusion`` (another configuration tried) or ``P0``.
        program: its library name or program file.
        ndcg: mean nDCG@10.
        delta: mean nDCG@10 minus the tuned fusion's.
        ci_low: the paired bootstrap's 95 % interval of that difference, lower end.
        ci_high: its upper end.
        deep_losses: queries more than 0.5 below the tuned fusion.
        served_ms: milliseconds per query served at the shortlist (``None``: not timed).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    role: Literal["pick", "tuned fusion", "fusion", "P0"]
    program: str
    ndcg: float
    delta: float
    ci_low: float
    ci_high: float
    deep_losses: int
    served_ms: float | None = None


class TuneReport(BaseModel):
    """``RUN/report/report.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    task: str
    encoder: str
    test_queries: int
    shortlist: int
    pick: str
    tuned_fusion: str
    rows: list[ReportRow]

    def row(self, role: str) -> ReportRow:
        """The first row of ``role``."""
        return next(r for r in self.rows if r.role == role)


def read_report(report_dir: Path) -> TuneReport | None:
    """``report_dir/report.json``, or ``None`` before the report is written."""
    path = report_dir / REPORT_FILE
    if not path.is_file():
        return None
    try:
        return TuneReport.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise TuneError(f"{path} is not a tune report: {exc}") from None


def _row(
    name: str,
    role: Literal["pick", "tuned fusion", "fusion", "P0"],
    program: str,
    values: np.ndarray,
    fusion: np.ndarray,
    served: float | None,
) -> ReportRow:
    diff = values - fusion
    boot = paired_bootstrap(diff, seed=BOOTSTRAP_SEED)
    return ReportRow(
        name=name,
        role=role,
        program=program,
        ndcg=float(values.mean()),
        delta=float(diff.mean()),
        ci_low=boot.ci_low,
        ci_high=boot.ci_high,
        deep_losses=int(np.count_nonzero(diff < -DEEP_LOSS)),
        served_ms=None if served is None else served * 1000.0,
    )


def build_report(
    run: ReportRun,
    test_task: RetrievalTask,
    fusion: FusionRecord,
    judged: CandidatesRecord,
    chosen: TunePick,
) -> TuneReport:
    """Score the pick, the tuned fusion, every fusion tried and P0 on ``test_task``."""
    ids = list(test_task.query_ids)
    shortlist = run.config.shortlist
    programs: list[tuple[str, Program]] = [
        ("P0", get_program("P0")),
        ("tuned fusion", get_program(fusion.program)),
    ]
    deployables: list[tuple[str, Deployable]] = [("P0", "P0"), ("tuned fusion", fusion.program)]
    if chosen.kind != "fusion":
        picked = Candidate(
            name=chosen.name,
            kind=chosen.kind,  # type: ignore[arg-type]
            program=chosen.program,
            program_file=chosen.program_file,
        )
        programs.append((chosen.name, run.build(picked)))
        deployables.append((chosen.name, run.deployable(picked)))
    run.events.stage("the test report", len(programs) + len(fusion.tuned.trials))
    scores = score_programs(
        programs, test_task, run.encoder(), shortlist=shortlist, progress=run.events.advance
    )
    for s in scores:
        if s.error is not None:
            raise TuneError(f"{s.name} failed on the test queries: {s.error}")
    by_name = {s.name: s for s in scores}
    run.events.stage("served time on the test queries", len(deployables))
    served = run.served(deployables, test_task)
    bench = FusionBench(test_task, run.encoder(), shortlist)
    base = np.array(by_name["tuned fusion"].values(ids))
    rows = [
        _row(
            "P0",
            "P0",
            "P0",
            np.array(by_name["P0"].values(ids)),
            base,
            served["P0"],
        ),
        _row(
            "tuned fusion",
            "tuned fusion",
            fusion.program,
            base,
            base,
            served["tuned fusion"],
        ),
    ]
    if chosen.kind != "fusion":
        label = chosen.program or chosen.program_file or chosen.name
        rows.insert(
            0,
            _row(
                chosen.name,
                "pick",
                label,
                np.array(by_name[chosen.name].values(ids)),
                base,
                served[chosen.name],
            ),
        )
    for trial in fusion.tuned.trials:
        if trial.program is None or trial.program == fusion.program:
            continue
        per_query = bench.per_query(trial.program)
        run.events.advance(trial.program)
        values = np.array([per_query[q] for q in ids])
        rows.append(
            _row(f"{trial.method}/{trial.norm}", "fusion", trial.program, values, base, None)
        )
    return TuneReport(
        task=chosen.task,
        encoder=chosen.encoder,
        test_queries=len(ids),
        shortlist=shortlist,
        pick=chosen.name if chosen.kind != "fusion" else "tuned fusion",
        tuned_fusion=fusion.program,
        rows=rows,
    )


def short(program: str, width: int = 60) -> str:
    """A program name cut for a table cell (trained ranx tables run to thousands of chars)."""
    return program if len(program) <= width else program[: width - 1] + "…"


def render_table(report: TuneReport) -> str:
    """The report as a Markdown table: the pick, the tuned fusion, P0, then every fusion."""
    head = (
        f"Task {report.task}, {report.encoder}, {report.test_queries} test queries, "
        f"dense top {report.shortlist}. Δ and its 95 % interval: against the tuned fusion.\n\n"
        "| program | role | nDCG@10 | Δ | 95 % interval | queries < −0.5 | served ms |\n"
        "|---|---|---:|---:|---|---:|---:|\n"
    )
    body = []
    for r in sorted(report.rows, key=lambda r: (r.role == "fusion", -r.ndcg)):
        served = "–" if r.served_ms is None else f"{r.served_ms:.1f}"
        body.append(
            f"| {short(r.program if r.role != 'P0' else 'P0')} | {r.role} | {r.ndcg:.4f} | "
            f"{r.delta:+.4f} | [{r.ci_low:+.4f}, {r.ci_high:+.4f}] | {r.deep_losses} | {served} |"
        )
    return head + "\n".join(body) + "\n"
