"""A transfer run: from Python with a fake executor and on a tiny real task, and from the CLI."""

import json

import pytest

from embedding_ttc.analysis.cells import BootstrapConfig, Cell, CellKey, CellStore
from embedding_ttc.analysis.groups import CellFailure, GroupStarted
from embedding_ttc.analysis.matrix import MatrixProgress
from embedding_ttc.analysis.plan import ShortlistPolicy
from embedding_ttc.analysis.run_log import read_runs
from embedding_ttc.analysis.transfer import (
    MatrixPlanned,
    TaskOutsideSuite,
    TransferConfig,
    run_transfer,
)
from embedding_ttc.cli.analysis import main, split_names
from embedding_ttc.errors import EmbeddingTTCError

from .cell_factory import cell, smoke_transfer_argv

DELTAS = {"P0": 0.0, "SoftCentroid": 0.02}


class ScriptedExecutor:
    """A fake executor: computes nothing, yields each job's cells from ``DELTAS`` as it is told.

    ``fail`` names cells it reports as failed; after ``stop_after`` cells it raises ``stop``
    (Ctrl-C, or a crash), as a run cut short would. It records the jobs it was given.
    """

    def __init__(self, fail=(), stop_after=None, stop=KeyboardInterrupt):
        self.fail, self.stop_after, self.stop = set(fail), stop_after, stop
        self.jobs = []

    def run(self, jobs, env):
        self.jobs = list(jobs)
        sent = 0
        for job in jobs:
            for key in job.cell_keys():
                if sent == self.stop_after:
                    raise self.stop()
                sent += 1
                if key in self.fail:
                    yield CellFailure(key, "MemoryError: pretend")
                else:
                    yield cell(key.encoder, key.task, key.program, DELTAS[key.program])


def fake_config(tmp_path, **kwargs):
    """Two encoders × two smoke tasks × (P0, SoftCentroid), no discovery column."""
    fields = {
        "out": tmp_path / "study",
        "encoders": ("enc-a", "enc-b"),
        "programs": ("P0", "SoftCentroid"),
        "suite": "smoke",
        "tasks": ("aila_statutes", "financebench"),
        "discovery_suite": "none",
        "data_dir": tmp_path,  # the fake executor loads no task
        "command": ("embedding-ttc", "transfer", "--from-a-test"),
    }
    return TransferConfig(**{**fields, **kwargs})


def test_a_run_computes_the_missing_cells_writes_tables_manifest_and_log(tmp_path):
    config = fake_config(tmp_path)
    events = []
    done = run_transfer(config, progress=events.append, executor=ScriptedExecutor())
    assert events[0] == MatrixPlanned(planned=8, to_compute=8, stale=0, executor="inprocess")
    assert [e.done for e in events[1:]] == list(range(1, 9))
    assert all(isinstance(e, MatrixProgress) and e.total == 8 for e in events[1:])
    assert len(done.matrix.computed) == 8 and done.planned_missing == 0
    line = done.report.line("SoftCentroid")
    assert {e: str(w) for e, w in line.heldout.items()} == {"enc-a": "2/0/0", "enc-b": "2/0/0"}
    assert (config.out / "tables" / "heldout.md").is_file() and done.tables == config.out / "tables"
    manifest = json.loads((config.out / "transfer.json").read_text())
    assert manifest["command"] == list(config.command)
    assert manifest["tasks"] == ["aila_statutes", "financebench"]
    assert manifest["discovery_tasks"] == [] and manifest["programs"] == ["P0", "SoftCentroid"]
    (run,) = read_runs(config.out)
    assert (run.status, run.planned, run.computed, run.already) == ("complete", 8, 8, 0)

    again = ScriptedExecutor()
    events = []
    done = run_transfer(config, progress=events.append, executor=again)
    assert events == [MatrixPlanned(planned=8, to_compute=0, stale=0, executor="inprocess")]
    assert again.jobs == [] and done.matrix.computed == ()
    assert [r.already for r in read_runs(config.out)] == [0, 8]


def test_a_failed_cell_stays_missing_and_the_run_is_incomplete(tmp_path):
    config = fake_config(tmp_path, encoders=("enc-a",))
    lost = CellKey("enc-a", "financebench", "SoftCentroid")
    done = run_transfer(config, executor=ScriptedExecutor(fail={lost}))
    assert done.planned_missing == 1 and done.report.missing == (lost,)
    assert [f.key for f in done.matrix.failed] == [lost]
    (run,) = read_runs(config.out)
    assert (run.status, run.computed, run.failed) == ("incomplete", 3, 1)


@pytest.mark.parametrize(
    ("stop", "status"), [(KeyboardInterrupt, "interrupted"), (OSError, "error")]
)
def test_a_run_cut_short_logs_what_it_did(tmp_path, stop, status):
    config = fake_config(tmp_path)
    with pytest.raises(stop):
        run_transfer(config, executor=ScriptedExecutor(stop_after=3, stop=stop))
    (run,) = read_runs(config.out)
    assert (run.status, run.planned, run.computed, run.failed) == (status, 8, 3, 0)
    written = list((config.out / "cells").glob("*/*/*.json"))
    assert len(written) == 3  # each cell is stored as it arrives


def test_user_errors_come_before_anything_is_written(tmp_path):
    with pytest.raises(EmbeddingTTCError, match="name at least one encoder"):
        run_transfer(fake_config(tmp_path, encoders=()), executor=ScriptedExecutor())
    outside = ShortlistPolicy(per_task=(("scifact", 10),))
    with pytest.raises(EmbeddingTTCError, match="--shortlist names tasks outside the matrix"):
        run_transfer(fake_config(tmp_path, shortlist=outside), executor=ScriptedExecutor())
    with pytest.raises(EmbeddingTTCError, match="--discovery-only computes the discovery column"):
        run_transfer(fake_config(tmp_path, discovery_only=True), executor=ScriptedExecutor())
    assert not (tmp_path / "study").exists()


def test_a_task_outside_the_suite_is_said_and_computed(tmp_path):
    config = fake_config(tmp_path, encoders=("enc-a",), tasks=("financebench", "scifact"))
    events = []
    done = run_transfer(config, progress=events.append, executor=ScriptedExecutor())
    assert events[0] == TaskOutsideSuite("scifact", "smoke")
    assert done.report.tasks == ("financebench", "scifact") and done.planned_missing == 0


def test_run_transfer_on_a_tiny_real_task(shared_datasets, tmp_path):
    config = TransferConfig(
        out=tmp_path / "study",
        encoders=("tokenlearn-static-64",),
        programs=("P0", "SoftCentroid"),
        suite="smoke",
        tasks=("aila_statutes",),
        discovery_suite="none",
        bootstrap=BootstrapConfig(resamples=100),
        data_dir=shared_datasets,
        cache_dir=tmp_path / "cache",
    )
    events = []
    done = run_transfer(config, progress=events.append)
    assert [type(e.event) for e in events[1:]] == [GroupStarted, Cell, Cell]
    soft = CellStore(config.out).load(
        CellKey("tokenlearn-static-64", "aila_statutes", "SoftCentroid")
    )
    assert soft.n_queries == 50 and soft.bootstrap.resamples == 100
    assert done.report.line("SoftCentroid").n_cells == 1 and not done.matrix.failed


def test_split_names_keeps_parameters_together():
    assert split_names(["P0,Rocchio:K=3,beta=0.5,SoftCentroid", "BM25"]) == [
        "P0",
        "Rocchio:K=3,beta=0.5",
        "SoftCentroid",
        "BM25",
    ]


def test_transfer_command_end_to_end(shared_datasets, tmp_path, capsys):
    out = tmp_path / "run"
    argv = smoke_transfer_argv(out, shared_datasets, "--cache-dir", str(tmp_path / "cache"))
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith("| program | c | tokenlearn-static-64 (1 tasks) |")
    assert "| SoftCentroid | 1.00 |" in printed.out
    assert "[2/2]" in printed.err
    for section in ("heldout", "programs", "oracle", "cells"):
        for ext in ("md", "csv", "tex"):
            assert (out / "tables" / f"{section}.{ext}").is_file()
    assert (out / "tables" / "report.md").is_file() and (out / "transfer.json").is_file()
    assert main(argv) == 0  # resumes: nothing left to compute
    assert "0 to compute" in capsys.readouterr().err
    assert main([*argv, "--shortlist", "aila_statutes=10"]) == 0
    assert "2 of them stored under another --shortlist" in capsys.readouterr().err
    assert json.loads((out / "transfer.json").read_text())["shortlist"] == {
        "*": None,
        "aila_statutes": 10,
    }
    assert main([*argv, "--heads"]) == 2
    assert "holds no head (seed 0) for tokenlearn-static-64" in capsys.readouterr().err
    assert main([*argv, "--shortlist", "scifact=10"]) == 2
    assert "--shortlist names tasks outside the matrix: scifact" in capsys.readouterr().err
    assert main([*argv, "--sample-queries", "aila_statutes=5"]) == 0
    assert "2 of them stored under another --shortlist, --sample-queries" in capsys.readouterr().err
    manifest = json.loads((out / "transfer.json").read_text())
    assert manifest["sample_queries"] == {"*": None, "aila_statutes": 5}
    assert "Query sample: aila_statutes (5)" in (out / "tables" / "report.md").read_text()
    assert main([*argv, "--sample-queries", "0"]) == 2
    assert "--sample-queries: a sample size is at least 1, got 0" in capsys.readouterr().err
