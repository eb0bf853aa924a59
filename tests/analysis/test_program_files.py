"""Program files as cells of the matrix: loading, failures with their status, staleness by source.

Each test here runs the matrix on the tiny in-test task with the hashing fake encoder; the
programs run in the real sandbox (a child process per call).
"""

from dataclasses import dataclass
from pathlib import Path

import pytest

from embedding_ttc.analysis import groups
from embedding_ttc.analysis.cells import BootstrapConfig, CellKey, CellStore
from embedding_ttc.analysis.discovered import AdmittedBy, admitted_programs, discovered_paths
from embedding_ttc.analysis.groups import MatrixEnvironment
from embedding_ttc.analysis.inputs import SearchRun
from embedding_ttc.analysis.matrix import run_matrix
from embedding_ttc.analysis.plan import ShortlistPolicy, plan
from embedding_ttc.analysis.staleness import to_compute
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.program_files.program_file import ProgramFile, read_program_files
from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.program_files.sandbox.program import source_sha256
from embedding_ttc.programs.outcome import Status
from ledger_records import evaluated, split_evaluated

from fakes import HashingEncoder

PROGRAMS = Path(__file__).resolve().parents[1] / "program_files" / "programs"
LIMITS = SandboxLimits(wall_seconds=60.0)
BOOT = BootstrapConfig(resamples=50, seed=0)
SHARPEN = '''"""The cosine cubed: same order, other scores (a valid program for the tests)."""


def program(Q, D, S, ctx):
    return S * S * S
'''


@dataclass(frozen=True)
class FakeEnvironment(MatrixEnvironment):
    """The tiny in-test task and the hashing fake encoder, whatever the names."""

    task_factory: object = None

    def encoder(self, name):
        return HashingEncoder()

    def task(self, name):
        return self.task_factory


def files(tmp_path, **sources):
    """Write each ``name=source`` as ``tmp_path/name.py``; load them all, in order."""
    paths = []
    for name, source in sources.items():
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        paths.append(path)
    return read_program_files(paths, task_names=("tiny",), taken=("P0", "BM25"))


def test_files_load_under_their_stem_and_a_refused_one_keeps_its_reason(tmp_path):
    loaded = files(
        tmp_path,
        zs=(PROGRAMS / "valid_zscore.py").read_text(),
        env=(PROGRAMS / "read_env.py").read_text(),
    )
    zs, env = loaded
    assert (zs.name, zs.rejected, zs.path) == ("zs", None, tmp_path / "zs.py")
    assert zs.sha256 == source_sha256(zs.source) == zs.sandboxed(LIMITS).source_sha256
    assert env.rejected is not None and "os" in env.rejected
    with pytest.raises(EmbeddingTTCError, match="os") as refused:
        env.sandboxed(LIMITS)
    assert refused.value.status == Status.REJECTED


def test_a_name_taken_by_a_library_program_or_another_file_is_refused(tmp_path):
    source = (PROGRAMS / "valid_zscore.py").read_text()
    with pytest.raises(EmbeddingTTCError, match=r"'bm25' is taken by the program 'BM25'"):
        files(tmp_path, bm25=source)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "mine.py").write_text(source)
    (tmp_path / "b" / "MINE.py").write_text(source)
    with pytest.raises(EmbeddingTTCError, match=r"'MINE' is taken by the program file"):
        read_program_files([tmp_path / "a" / "mine.py", tmp_path / "b" / "MINE.py"])


def test_failing_files_are_failures_with_their_status_and_the_rest_is_computed(tiny_task, tmp_path):
    loaded = files(
        tmp_path,
        raises=(PROGRAMS / "raises.py").read_text(),
        zs=(PROGRAMS / "valid_zscore.py").read_text(),
        env=(PROGRAMS / "read_env.py").read_text(),
        wrong=(PROGRAMS / "wrong_shape.py").read_text(),
    )
    env = FakeEnvironment(task_factory=tiny_task, program_files=loaded, program_limits=LIMITS)
    store = CellStore(tmp_path / "out")
    the_plan = plan(["fake"], ["tiny"], ["P0", "raises", "SoftCentroid", "zs", "env", "wrong"])
    outcome = run_matrix(the_plan, store, env=env, bootstrap=BOOT)
    failed = {f.key.program: f for f in outcome.failed}
    assert {p: f.status for p, f in failed.items()} == {
        "env": Status.REJECTED,
        "raises": Status.CRASHED,
        "wrong": Status.INVALID_OUTPUT,
    }
    assert "bad value 42" in failed["raises"].reason and "shape" in failed["wrong"].reason
    assert sorted(k.program for k in outcome.computed) == ["P0", "SoftCentroid", "zs"]
    assert sorted(k.program for k in store.missing(the_plan)) == ["env", "raises", "wrong"]
    zs = store.load(CellKey("fake", "tiny", "zs"))
    assert zs.source_sha256 == loaded[1].sha256 and zs.n_queries == 3
    assert store.load(CellKey("fake", "tiny", "SoftCentroid")).source_sha256 is None


def test_a_changed_source_makes_its_cells_stale_and_only_those(tiny_task, tmp_path, monkeypatch):
    zs = (PROGRAMS / "valid_zscore.py").read_text()
    store = CellStore(tmp_path / "out")
    the_plan = plan(["fake"], ["tiny"], ["P0", "SoftCentroid", "zs", "sharpen"])
    before = files(tmp_path, zs=zs, sharpen=SHARPEN)
    env = FakeEnvironment(task_factory=tiny_task, program_files=before, program_limits=LIMITS)
    assert not run_matrix(the_plan, store, env=env, bootstrap=BOOT).failed

    after = files(tmp_path, zs=zs, sharpen=SHARPEN.replace("S * S * S", "S * S * S * 2.0"))
    sources = {f.name: f.sha256 for f in after}
    assert sources["zs"] == before[0].sha256 and sources["sharpen"] != before[1].sha256
    absent, stale = to_compute(the_plan, store, ShortlistPolicy(), sources=sources)
    assert absent == [] and stale == [CellKey("fake", "tiny", "sharpen")]

    ran = []
    real = groups.run_programs
    monkeypatch.setattr(
        groups,
        "run_programs",
        lambda programs, *a, **k: ran.append([p.name for p in programs]) or real(programs, *a, **k),
    )
    env = FakeEnvironment(task_factory=tiny_task, program_files=after, program_limits=LIMITS)
    outcome = run_matrix(the_plan, store, env=env, bootstrap=BOOT)
    assert outcome.computed == outcome.stale == (CellKey("fake", "tiny", "sharpen"),)
    assert ran == [["P0", "sharpen"]]
    assert store.load(CellKey("fake", "tiny", "sharpen")).source_sha256 == sources["sharpen"]
    assert to_compute(the_plan, store, ShortlistPolicy(), sources=sources) == ([], [])


def test_a_library_cell_under_a_file_programs_name_is_stale(tiny_task, tmp_path):
    store = CellStore(tmp_path / "out")
    the_plan = plan(["fake"], ["tiny"], ["SoftCentroid"])
    run_matrix(the_plan, store, env=FakeEnvironment(task_factory=tiny_task), bootstrap=BOOT)
    sources = {"SoftCentroid": source_sha256(SHARPEN)}  # a file now goes by that name
    assert to_compute(the_plan, store, ShortlistPolicy(), sources=sources) == ([], list(the_plan))


def test_the_selection_is_the_frontiers_admitted_programs_without_generation_0(tmp_path):
    records = [
        evaluated(0, "g0000-P0", {"t": 0.01}),  # P0 never is a discovered program
        evaluated(1, "g0001", {"t": 0.02}),
        evaluated(2, "g0002", {"t": 0.015}),  # below the bar: not admitted
        evaluated(3, "g0003", {"t": 0.05}),
    ]
    assert [r.program_id for r in admitted_programs(records)] == ["g0001", "g0003"]
    run = SearchRun(tmp_path, tuple(records), None)
    (tmp_path / "programs").mkdir()
    (tmp_path / "programs" / "g0001.py").write_text(SHARPEN)
    with pytest.raises(EmbeddingTTCError, match=r"no source for its selected programs: .*g0003"):
        discovered_paths(run)
    (tmp_path / "programs" / "g0003.py").write_text(SHARPEN)
    found = discovered_paths(run)
    assert found.program_ids == ("g0001", "g0003")
    assert found.paths == (tmp_path / "programs" / "g0001.py", tmp_path / "programs" / "g0003.py")
    only_last = discovered_paths(run, select=lambda rs: rs[-1:])  # the seam of admission rules
    assert only_last.program_ids == ("g0003",)


def test_a_file_program_is_plain_values_for_the_workers(tmp_path):
    import pickle

    (loaded,) = files(tmp_path, sharpen=SHARPEN)
    assert isinstance(loaded, ProgramFile)
    assert pickle.loads(pickle.dumps(loaded)) == loaded  # Ray ships it with the environment


def test_the_transfer_rule_selects_by_the_validation_part():
    # (search part, validation part) Δ against P0 on two tasks; the reference sits 0.05 above.
    records = [
        split_evaluated(0, "g0000-P0", {"a": 0.0, "b": 0.0}, {"a": 0.0, "b": 0.0}),
        split_evaluated(1, "g0001", {"a": 0.3, "b": 0.3}, {"a": 0.2, "b": -0.01}),  # b loses
        split_evaluated(2, "g0002", {"a": 0.1, "b": 0.1}, {"a": 0.04, "b": 0.02}),
        split_evaluated(3, "g0003", {"a": 0.1, "b": 0.1}, {"a": 0.09, "b": 0.07}),
    ]
    assert [r.program_id for r in AdmittedBy("compute")(records)] == ["g0001"]
    assert [r.program_id for r in AdmittedBy("transfer")(records)] == ["g0002", "g0003"]
    assert [r.program_id for r in AdmittedBy("transfer", "reference")(records)] == ["g0003"]
    assert str(AdmittedBy("transfer", "reference")) == (
        "admitted by the transfer rule against reference"
    )


def test_the_selection_defaults_to_the_objective_the_run_was_searched_with(tmp_path):
    import argparse

    from embedding_ttc.cli.analysis import _selection
    from embedding_ttc.runs.config import ProposerSpec, RunConfig, write_run_config

    config = RunConfig(
        suite="discovery",
        tasks=["t"],
        encoder="e",
        proposer=ProposerSpec(strategy="structural"),
        model=None,
        seed=0,
        shortlist=None,
        reference="BM25DenseRRF",
        objective="reference",
    )
    write_run_config(tmp_path, config)

    def args(**given):
        return argparse.Namespace(
            **{"search_run": tmp_path, "rule": "transfer", "objective": None, **given}
        )

    assert _selection(args()) == AdmittedBy("transfer", "reference")
    assert _selection(args(objective="p0")) == AdmittedBy("transfer", "p0")
    assert _selection(args(search_run=None)) == AdmittedBy("transfer", "p0")
