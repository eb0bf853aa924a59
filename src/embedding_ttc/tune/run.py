"""``tune``: fit a second stage to one task's judged queries, pick one, report it on others.

A run folder holds, each written whole when its step ends (a killed run resumes from them):

* ``tune.json``: the settings (:class:`~embedding_ttc.tune.config.TuneConfig`);
* ``split.json``: the judged queries cut into tune and test (:mod:`~embedding_ttc.tune.split`);
* ``pick-rule.json``: the rule, written before anything is fitted (:mod:`~embedding_ttc.tune.rule`);
* ``fusion.json``: every fusion tried, cross-validated over the tune queries (the
  configuration with the best held-out score is the tuned fusion: an in-sample choice favours
  the trained methods' per-position tables, which fit the queries they were trained on) and
  fitted on all the tune queries (what is deployed and reported);
* ``search/``: the program search over the tune queries (its own ``search.json``,
  ``split.json`` with the same inner cut, ledger and program files), guided by Δ against the
  inner fit of the tuned fusion;
* ``candidates.json``: every candidate (the tuned fusion, the library's programs, the
  selecting search's pick, the search's finalists) scored on the tune queries side by side
  with P0, each left out with its reason or judged by the rule;
* ``pick.json``: the one second stage to deploy;
* ``report/``: the test queries' numbers, computed once after ``pick.json``
  (:mod:`~embedding_ttc.tune.report`);
* ``runs.jsonl``: each invocation's wall time and how it ended.

Nothing before the report is handed a test query: every step receives the task restricted to
the tune queries (:func:`~embedding_ttc.tasks.task.restrict_queries`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from embedding_ttc.durable import append_record, write_atomic
from embedding_ttc.encoders.named import NamedEncoder
from embedding_ttc.errors import EmbeddingTTCError, MissingExtraError
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.runs.config import RunConfig
from embedding_ttc.runs.frontier import FrontierError, evaluated, score
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.split import SplitSettings, split_queries
from embedding_ttc.search.loop import Budget, LoopEvents
from embedding_ttc.search.open import SearchSetup, open_search
from embedding_ttc.tasks.task import RetrievalTask, restrict_queries
from embedding_ttc.tune.candidates import Candidate, candidates, source_checkout
from embedding_ttc.tune.config import TUNE_CONFIG_FILE, TuneConfig, record_tune_config
from embedding_ttc.tune.figure import draw_report
from embedding_ttc.tune.fusion import (
    FusionBench,
    configurations,
    library_fusions,
)
from embedding_ttc.tune.records import (
    CANDIDATES_FILE,
    FUSION_FILE,
    PICK_FILE,
    CandidatesRecord,
    FusionRecord,
    TuneError,
    TunePick,
    read_record,
    write_record,
)
from embedding_ttc.tune.report import (
    REPORT_DIR,
    REPORT_FILE,
    build_report,
    read_report,
    render_table,
)
from embedding_ttc.tune.rule import Scored, judge, register_rule
from embedding_ttc.tune.rule import best as best_verdict
from embedding_ttc.tune.scoring import ProgramScore, score_programs
from embedding_ttc.tune.served import SERVED_QUERIES, Deployable, served_seconds
from embedding_ttc.tune.source import load_source
from embedding_ttc.tune.split import TuneSplit, record_tune_split, split_tune_test

SESSIONS_FILE = "runs.jsonl"
SEARCH_DIR = "search"

FOLDS = 3
"""The cross-validation folds the tuned fusion's configuration is chosen by."""

SEARCH_SHARE_OF_BUDGET = 0.6
"""The share of ``--budget-minutes`` left for the search once the fusions are fitted."""


@dataclass(frozen=True)
class TuneSetup:
    """Where and how a tune run works: as a search is set up, with a budget.

    Nothing here changes the run's records.

    Attributes:
        where: the run folder, data root, embedding cache, device, executor and LLM backend, as
            a search takes them (its ``run_dir`` is the tune run's folder; the search itself
            works in ``RUN/search``, and registers no pick rule of its own).
        budget_minutes: the run's wall-time budget (``None``: none).

    """

    where: SearchSetup
    budget_minutes: float | None = None

    @property
    def run_dir(self) -> Path:
        """The run folder."""
        return self.where.run_dir

    def search(self) -> SearchSetup:
        """The setup of the run's search: the same, in ``RUN/search``, without a pick rule."""
        return replace(self.where, run_dir=self.run_dir / SEARCH_DIR, pick_rule=None)


@dataclass
class TuneEvents:
    """Progress callbacks (all optional).

    ``on_stage(name, steps)`` opens a step of the run with its number of units (``None``:
    unknown); ``on_advance(what)`` ends one unit; ``say(line)`` reports a line.
    """

    on_stage: Callable[[str, int | None], None] | None = None
    on_advance: Callable[[str], None] | None = None
    say: Callable[[str], None] | None = None

    def stage(self, name: str, steps: int | None) -> None:
        """Open a step of ``steps`` units."""
        if self.on_stage is not None:
            self.on_stage(name, steps)

    def advance(self, what: str) -> None:
        """End one unit of the open step."""
        if self.on_advance is not None:
            self.on_advance(what)

    def line(self, text: str) -> None:
        """Report a line."""
        if self.say is not None:
            self.say(text)


@dataclass
class TuneRun:
    """One tune run's steps over its collaborators (see the module docstring).

    Attributes:
        config: the run's settings.
        setup: where it works.
        events: progress callbacks.

    """

    config: TuneConfig
    setup: TuneSetup
    events: TuneEvents = field(default_factory=TuneEvents)
    _encoder: Any = None
    _started: float = field(default_factory=time.monotonic)

    @property
    def run_dir(self) -> Path:
        """The run folder."""
        return self.setup.run_dir

    def deadline(self, share: float = 1.0) -> float | None:
        """The monotonic time by which ``share`` of the budget is spent (``None``: no budget)."""
        if self.setup.budget_minutes is None:
            return None
        return self._started + share * self.setup.budget_minutes * 60

    def encoder(self) -> Any:
        """The run's (cached) encoder, loaded once."""
        if self._encoder is None:
            self._encoder = NamedEncoder(
                self.config.encoder,
                cache_dir=self.setup.where.cache_dir,
                use_cache=self.setup.where.use_cache,
                device=self.setup.where.device,
            ).load()
        return self._encoder

    # --- the steps ---------------------------------------------------------------------

    def prepare(self) -> tuple[RetrievalTask, TuneSplit, str]:
        """Record the settings, cut the queries and register the rule; the tune task.

        Raises:
            EmbeddingTTCError: the task cannot be loaded or cut, or the run folder records
                other settings, another cut or another rule.

        """
        self.run_dir.mkdir(parents=True, exist_ok=True)
        task = load_source(self.config, self.setup.where.data_dir)
        record_tune_config(self.run_dir, self.config)
        split = split_tune_test(task, self.config.encoder, self.config.seed, self.config.test_share)
        record_tune_split(self.run_dir, split)
        digest = register_rule(self.run_dir, self.config.rule)
        return restrict_queries(task, split.tune), split, digest

    def inner_split(self, tune_task: RetrievalTask) -> Any:
        """The cut of the tune queries into the search's part and the pick's validation part."""
        settings = SplitSettings(validation_share=self.config.validation_share)
        return split_queries([tune_task], self.config.seed, settings)

    def fusions(self, tune_task: RetrievalTask, inner: Any) -> FusionRecord:
        """Choose and fit the tuned fusion (``fusion.json``), or read the record a run left.

        Every configuration is cross-validated over the tune queries (:data:`FOLDS` folds:
        fitted on the others, scored on each); the best mean held-out nDCG@10 chooses the
        configuration, refitted on all the tune queries (the tuned fusion) and on the inner
        search part (what the search is guided by and the rule compares with).
        """
        path = self.run_dir / FUSION_FILE
        recorded = read_record(path, FusionRecord)
        if recorded is not None:
            return recorded  # type: ignore[no-any-return]
        steps = len(configurations()) + len(library_fusions())
        self.events.stage("fusions: dense and BM25 runs", None)
        bench = FusionBench(tune_task, self.encoder(), self.config.shortlist)
        self.events.stage(f"fusions cross-validated ({FOLDS} folds)", FOLDS * steps)
        cv = bench.cross_validate(FOLDS, self.config.seed, self.events.advance)
        self.events.stage("fusions fitted on all tune queries", steps)
        tuned = bench.tune(None, progress=self.events.advance)
        chosen = cv.best_held
        refit = tuned.configuration(chosen)
        if refit.program is None:
            raise TuneError(
                f"the chosen fusion {chosen.method}/{chosen.norm} failed its refit: {refit.error}"
            )
        record = FusionRecord(
            cv=cv,
            tuned=tuned,
            chosen=f"{chosen.family} {chosen.method}/{chosen.norm}",
            inner_program=bench.fit_one(chosen, inner.of(tune_task.name).search),
            program=refit.program,
        )
        write_record(path, record)
        return record

    def search(self, tune_task: RetrievalTask, inner: Any, fusion: FusionRecord) -> Ledger:
        """Run (or resume) the program search over the tune queries; its ledger."""
        config = RunConfig(
            suite="tune",
            tasks=[tune_task.name],
            encoder=self.config.encoder,
            proposer=self.config.strategy,
            model=self.config.model,
            seed=self.config.seed,
            shortlist=self.config.shortlist,
            split=inner.settings,
            reference=fusion.inner_program,
            objective="reference",
            limits=None,
        )
        setup = self.setup.search()
        generations = self.config.generations
        deadline = self.deadline(SEARCH_SHARE_OF_BUDGET)
        wall = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        self.events.stage("program search", generations)
        with open_search(
            config, setup, tasks=[tune_task], split=inner, say=self.events.line
        ) as loop:
            done = loop.ledger.last_generation
            for _ in range(min(done, generations)):
                self.events.advance("resumed")
            if generations > done and (wall is None or wall > 0):
                loop.run(
                    Budget(generations, wall_seconds=wall),
                    LoopEvents(
                        on_record=lambda r, _f: self.events.advance(r.program_id),
                        on_stop=lambda why: self.events.line(f"search stopped: {why}"),
                    ),
                )
            return loop.ledger

    def finalists(self, ledger: Ledger) -> list[Candidate]:
        """The search's best programs by validation Δ against the fusion it was guided by."""
        ranked = []
        for record in evaluated(list(ledger.records)):
            try:
                value = score(record, "transfer", "reference")
            except FrontierError:
                continue
            if ledger.source(record) is not None:
                ranked.append((value, record.program_id))
        ranked.sort(key=lambda x: -x[0])
        out = []
        for _, program_id in ranked[: self.config.finalists]:
            path = ledger.source_path(program_id)
            out.append(
                Candidate(
                    name=program_id,
                    kind="searched",
                    program_file=str(path.relative_to(self.run_dir)),
                )
            )
        return out

    def judge(
        self,
        tune_task: RetrievalTask,
        inner: Any,
        fusion: FusionRecord,
        ledger: Ledger,
        digest: str,
    ) -> CandidatesRecord:
        """Score every candidate on the tune queries and judge it (``candidates.json``)."""
        path = self.run_dir / CANDIDATES_FILE
        recorded = read_record(path, CandidatesRecord)
        if recorded is not None:
            return recorded  # type: ignore[no-any-return]
        listed = candidates(tune_task.name, source_checkout()) + self.finalists(ledger)
        fusion_candidate = Candidate(
            name="tuned fusion", kind="fusion", program=fusion.inner_program
        )
        chosen = [c for c in listed if c.excluded is None]
        # P0 is the baseline and may be the pick too: it is run and timed once.
        others = [c for c in chosen if c.name != "P0"]
        named: dict[str, Deployable] = {"P0": "P0", fusion_candidate.name: fusion.inner_program}
        for c in others:
            named[c.name] = self.deployable(c)
        programs: list[tuple[str, Program]] = [
            ("P0", get_program("P0")),
            (fusion_candidate.name, get_program(fusion.inner_program)),
            *((c.name, self.build(c)) for c in others),
        ]
        self.events.stage("candidates scored on the tune queries", len(programs))
        scored = score_programs(
            programs,
            tune_task,
            self.encoder(),
            shortlist=self.config.shortlist,
            progress=self.events.advance,
            deadline=self.deadline(),
        )
        by_name = {s.name: s for s in scored}
        for essential in ("P0", fusion_candidate.name):
            if by_name[essential].error:
                raise TuneError(
                    f"{essential} failed on the tune queries: {by_name[essential].error}"
                )
        timed = [(s.name, named[s.name]) for s in scored if s.error is None]
        self.events.stage("served time, each program's index", len(timed))
        served = self.served(timed, tune_task)
        scores = [
            s if s.error else s.model_copy(update={"served_seconds": served[s.name]})
            for s in scored
        ]
        by_name = {s.name: s for s in scores}
        validation = inner.of(tune_task.name).validation

        def as_scored(s: ProgramScore) -> Scored:
            return Scored(s.name, s.values(validation), s.served_seconds or 0.0)

        verdicts, _ = judge(
            self.config.rule,
            as_scored(by_name["P0"]),
            as_scored(by_name[fusion_candidate.name]),
            [as_scored(by_name[c.name]) for c in chosen if by_name[c.name].error is None],
        )
        record = CandidatesRecord(
            validation=list(validation),
            served_queries=SERVED_QUERIES,
            candidates=[fusion_candidate, *listed],
            scores=scores,
            verdicts=verdicts,
            rule_sha256=digest,
        )
        write_record(path, record)
        return record

    def build(self, candidate: Candidate) -> Program:
        """The program a candidate names (a program file runs in the sandbox)."""
        if candidate.program is not None:
            return get_program(candidate.program)
        program = self.build_file(candidate.program_file or "")
        program.name = candidate.name
        return program

    def deployable(self, candidate: Candidate) -> Deployable:
        """What an index is built for: the candidate's program name, or its program file."""
        if candidate.program is not None:
            return candidate.program
        from embedding_ttc.deploy.program_file import read_deployable

        return read_deployable(self.resolve(candidate.program_file or ""))

    def resolve(self, program_file: str) -> Path:
        """A program file's path: as given when absolute, else in the run folder."""
        path = Path(program_file)
        return path if path.is_absolute() else self.run_dir / path

    def served(
        self, programs: list[tuple[str, Deployable]], task: RetrievalTask
    ) -> dict[str, float]:
        """Each program's median served seconds on ``task`` (:mod:`~embedding_ttc.tune.served`)."""
        raw = NamedEncoder(
            self.config.encoder, use_cache=False, device=self.setup.where.device
        ).load()
        return served_seconds(
            programs,
            task,
            index_encoder=self.encoder(),
            query_encoder=raw,
            shortlist=self.config.shortlist,
            progress=self.events.advance,
        )

    def build_file(self, program_file: str) -> Program:
        """A program file (relative to the run folder, or absolute), checked, in the sandbox."""
        from embedding_ttc.program_files.program_file import read_program_file

        return read_program_file(self.resolve(program_file)).sandboxed()

    def pick(self, split: TuneSplit, fusion: FusionRecord, judged: CandidatesRecord) -> TunePick:
        """The rule's pick among the judged candidates (``pick.json``)."""
        path = self.run_dir / PICK_FILE
        recorded = read_record(path, TunePick)
        if recorded is not None:
            return recorded  # type: ignore[no-any-return]
        best = best_verdict(judged.verdicts)
        listed = {c.name: c for c in judged.candidates}
        if best is None:
            chosen, signal = (
                Candidate(name="tuned fusion", kind="fusion", program=fusion.program),
                0.0,
            )
        else:
            chosen, signal = listed[best.name], best.signal
        program_file = chosen.program_file
        if program_file is not None and Path(program_file).is_absolute():
            # a file outside the run (the selecting search's pick): copied in, so the run
            # folder holds everything it deploys
            source = Path(program_file)
            target = self.run_dir / "programs" / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, source.read_text(encoding="utf-8"))
            program_file = str(target.relative_to(self.run_dir))
        record = TunePick(
            task=split.task,
            encoder=split.encoder,
            name=chosen.name,
            kind=chosen.kind,
            program=fusion.program if chosen.kind == "fusion" else chosen.program,
            program_file=program_file,
            shortlist=self.config.shortlist,
            signal=signal,
            rule_sha256=judged.rule_sha256,
        )
        write_record(path, record)
        return record


class TuneSession(BaseModel):
    """One invocation of a run (``RUN/runs.jsonl``, a line appended as it ends).

    Attributes:
        started: when it started (UTC, ISO 8601).
        seconds: its wall time.
        generations: the search's generations recorded when it ended.
        outcome: ``picked`` (it reached the report), or what stopped it.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    started: str
    seconds: float
    generations: int
    outcome: str


def run_tune(
    config: TuneConfig, setup: TuneSetup, events: TuneEvents | None = None
) -> tuple[TunePick, Path]:
    """Run (or resume) a tune run to its pick and its test report; both, and the report folder.

    Each invocation appends its wall time to ``RUN/runs.jsonl``, whether it ends or fails.

    Raises:
        EmbeddingTTCError: a step cannot go on (its message names the step and the cause).

    """
    run = TuneRun(config, setup, events or TuneEvents())
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    outcome = "interrupted"
    try:
        tune_task, split, digest = run.prepare()
        inner = run.inner_split(tune_task)
        fusion = run.fusions(tune_task, inner)
        ledger = run.search(tune_task, inner, fusion)
        judged = run.judge(tune_task, inner, fusion, ledger, digest)
        chosen = run.pick(split, fusion, judged)
        report_dir = write_report(run, split, fusion, judged, chosen)
        outcome = "picked"
    except EmbeddingTTCError as exc:
        outcome = f"error: {exc}"
        raise
    finally:
        if (setup.run_dir / TUNE_CONFIG_FILE).is_file():
            log = (
                Ledger(setup.run_dir / SEARCH_DIR)
                if (setup.run_dir / SEARCH_DIR).is_dir()
                else None
            )
            append_record(
                setup.run_dir / SESSIONS_FILE,
                TuneSession(
                    started=started,
                    seconds=time.monotonic() - run._started,
                    generations=log.last_generation if log is not None else 0,
                    outcome=outcome,
                ),
            )
    return chosen, report_dir


def write_report(
    run: TuneRun,
    split: TuneSplit,
    fusion: FusionRecord,
    judged: CandidatesRecord,
    chosen: TunePick,
) -> Path:
    """Compute the test report once and write it with its table and figure; the report folder."""
    out = run.run_dir / REPORT_DIR
    report = read_report(out)
    if report is None:
        task = load_source(run.config, run.setup.where.data_dir)
        report = build_report(run, restrict_queries(task, split.test), fusion, judged, chosen)
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(out / REPORT_FILE, report.model_dump_json(indent=1) + "\n")
    write_atomic(out / "table.md", render_table(report))
    try:
        draw_report(report, out)
    except MissingExtraError as exc:
        run.events.line(f"no figure: {exc}")
    return out
