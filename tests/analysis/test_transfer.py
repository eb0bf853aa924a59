"""A transfer run: from Python with a fake executor and on a tiny real task, and from the CLI."""

import hashlib
import json
from pathlib import Path

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
from ledger_records import evaluated

from .cell_factory import cell, smoke_transfer_argv

DELTAS = {"P0": 0.0, "SoftCentroid": 0.02}


class ScriptedExecutor:
    """A fake executor: runs no work, yields each job's cells from ``DELTAS`` as it is told.

    ``fail`` names cells it reports as failed; after ``stop_after`` cells it raises ``stop``
    (Ctrl-C, or a crash), as a run cut short would. It records the jobs it was given.
    """

    in_process = True

    def __init__(self, fail=(), stop_after=None, stop=KeyboardInterrupt):
        self.fail, self.stop_after, self.stop = set(fail), stop_after, stop
        self.jobs = []

    def map(self, work, jobs, *, ordered, shared=()):
        self.jobs = list(jobs)
        sent = 0
        for job in jobs:
            for key in job.cell_keys():
                if sent == self.stop_after:
                    raise self.stop()
                sent += 1
                if key in self.fail:
                    yield job, CellFailure(key, "MemoryError: pretend")
                else:
                    yield job, cell(key.encoder, key.task, key.program, DELTAS[key.program])


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


def test_run_transfer_on_a_tiny_real_task(packaged_datasets, tmp_path):
    config = TransferConfig(
        out=tmp_path / "study",
        encoders=("tokenlearn-static-64",),
        programs=("P0", "SoftCentroid"),
        suite="smoke",
        tasks=("aila_statutes",),
        discovery_suite="none",
        bootstrap=BootstrapConfig(resamples=100),
        data_dir=packaged_datasets,
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


def test_transfer_command_end_to_end(packaged_datasets, tmp_path, capsys):
    out = tmp_path / "run"
    argv = smoke_transfer_argv(out, packaged_datasets, "--cache-dir", str(tmp_path / "cache"))
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith("| program | c (held-out) | tokenlearn-static-64 (1 tasks) |")
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


PROGRAM_FILES = Path(__file__).resolve().parents[1] / "program_files" / "programs"
CUBED = '"""The cosine cubed (a valid program for the tests)."""\n\n\ndef program(Q, D, S, ctx):\n    return S * S * S\n'  # noqa: E501


def sha256_of(path):
    """The sha256 of a file's bytes (a program file's source, as its cells record it)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def program_files(folder, **sources):
    """Write each ``name=source`` as ``folder/name.py``; return the paths, in order."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in sources.items():
        (folder / f"{name}.py").write_text(source)
    return tuple(folder / f"{name}.py" for name in sources)


def small_config(packaged_datasets, tmp_path, **kwargs):
    """aila_statutes on the 64-d static encoder, no discovery column (seconds)."""
    fields = {
        "out": tmp_path / "study",
        "encoders": ("tokenlearn-static-64",),
        "programs": ("P0",),
        "suite": "smoke",
        "tasks": ("aila_statutes",),
        "discovery_suite": "none",
        "bootstrap": BootstrapConfig(resamples=100),
        "data_dir": packaged_datasets,
        "cache_dir": tmp_path / "cache",
    }
    return TransferConfig(**{**fields, **kwargs})


def test_program_files_are_cells_like_any_other(packaged_datasets, tmp_path):
    zs_source = (PROGRAM_FILES / "valid_zscore.py").read_text()
    paths = program_files(tmp_path / "mine", zs=zs_source, cubed=CUBED)
    config = small_config(packaged_datasets, tmp_path, program_files=paths)
    done = run_transfer(config)
    assert not done.matrix.failed and done.planned_missing == 0
    store = CellStore(config.out)
    for path in paths:
        c = store.load(CellKey("tokenlearn-static-64", "aila_statutes", path.stem))
        assert c.source_sha256 == sha256_of(path)
        assert c.n_queries == 50 and c.bootstrap.resamples == 100
    assert done.report.programs == ("zs", "cubed")  # P0 is every row's baseline
    assert done.report.line("cubed").n_cells == 1  # the cube keeps the order: a tie
    assert str(done.report.line("cubed").heldout["tokenlearn-static-64"]) == "0/1/0"
    manifest = json.loads((config.out / "transfer.json").read_text())
    assert manifest["programs"] == ["P0", "zs", "cubed"]
    assert manifest["program_files"] == [
        {"name": p.stem, "path": f"../mine/{p.name}", "sha256": sha256_of(p)} for p in paths
    ]
    assert manifest["search_programs"] is None


def test_a_changed_program_file_recomputes_its_cells_and_only_those(packaged_datasets, tmp_path):
    zs_source = (PROGRAM_FILES / "valid_zscore.py").read_text()
    paths = program_files(tmp_path / "mine", zs=zs_source, cubed=CUBED)
    config = small_config(packaged_datasets, tmp_path, program_files=paths)
    run_transfer(config)
    store = CellStore(config.out)
    keys = {p: CellKey("tokenlearn-static-64", "aila_statutes", p) for p in ("P0", "zs", "cubed")}
    written = {p: store.path(k).stat().st_mtime_ns for p, k in keys.items()}
    events = []
    again = run_transfer(config, progress=events.append)
    assert events == [MatrixPlanned(planned=3, to_compute=0, stale=0, executor="inprocess")]
    assert again.matrix.computed == ()

    paths[1].write_text(CUBED.replace("S * S * S", "-S"))  # a new source, reversed scores
    events = []
    changed = run_transfer(config, progress=events.append)
    assert events[0] == MatrixPlanned(planned=3, to_compute=1, stale=1, executor="inprocess")
    assert changed.matrix.computed == changed.matrix.stale == (keys["cubed"],)
    cubed = store.load(keys["cubed"])
    assert cubed.source_sha256 == sha256_of(paths[1])
    assert cubed.delta < 0  # the reversed ranking, not the stored tie
    for p in ("P0", "zs"):
        assert store.path(keys[p]).stat().st_mtime_ns == written[p]


def test_a_broken_program_file_fails_its_cells_and_the_others_complete(
    packaged_datasets, tmp_path, capsys
):
    paths = program_files(
        tmp_path / "mine",
        broken=(PROGRAM_FILES / "raises.py").read_text(),
        cubed=CUBED,
        refused=(PROGRAM_FILES / "read_env.py").read_text(),
    )
    out = tmp_path / "study"
    extra = [a for p in paths for a in ("--program-file", str(p))]
    argv = smoke_transfer_argv(
        out, packaged_datasets, "--cache-dir", str(tmp_path / "cache"), *extra, programs="P0"
    )
    assert main(argv) == 1  # cells are missing: run again to retry them
    err = capsys.readouterr().err
    assert "FAILED tokenlearn-static-64 · aila_statutes · broken: crashed: " in err
    assert "bad value 42" in err
    assert "failed tokenlearn-static-64 · aila_statutes · refused: rejected: " in err
    store = CellStore(out)
    the_cells = [CellKey("tokenlearn-static-64", "aila_statutes", p) for p in ("P0", "cubed")]
    assert store.missing(the_cells) == []
    (run,) = read_runs(out)
    assert (run.status, run.computed, run.failed) == ("incomplete", 2, 2)


def write_search_run(run, records, sources):
    """A search run directory: ``records`` as its ledger, ``sources`` in ``programs/``."""
    (run / "programs").mkdir(parents=True)
    lines = "".join(r.model_dump_json() + "\n" for r in records)
    (run / "ledger.jsonl").write_text(lines)
    for program_id, source in sources.items():
        (run / "programs" / f"{program_id}.py").write_text(source)


def test_transfer_of_a_search_runs_frontier(packaged_datasets, tmp_path, capsys):
    run = tmp_path / "search"
    p0 = '"""P0."""\n\n\ndef program(Q, D, S, ctx):\n    return S.copy()\n'
    write_search_run(
        run,
        [
            evaluated(0, "g0000-P0", {"aila_casedocs": 0.0}),
            evaluated(1, "g0001", {"aila_casedocs": 0.02}),
            evaluated(2, "g0002", {"aila_casedocs": 0.01}),  # not admitted: below g0001
            evaluated(3, "g0003", {"aila_casedocs": 0.04}),
        ],
        {
            "g0000-P0": p0,
            "g0001": CUBED,
            "g0002": CUBED,
            "g0003": (PROGRAM_FILES / "valid_zscore.py").read_text(),
        },
    )
    out = tmp_path / "study"
    base = smoke_transfer_argv(
        out, packaged_datasets, "--cache-dir", str(tmp_path / "cache"), programs="P0,frontier"
    )
    argv = [*base, "--search-run", str(run)]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert f"transfer: frontier of the search run {run}: g0001, g0003" in printed.err
    assert "| g0001 | 1.00 |" in printed.out and "| g0003 |" in printed.out
    store = CellStore(out)
    g3 = store.load(CellKey("tokenlearn-static-64", "aila_statutes", "g0003"))
    assert g3.source_sha256 == sha256_of(run / "programs" / "g0003.py")
    assert sorted(p.stem for p in (out / "cells").glob("*/*/*.json")) == ["P0", "g0001", "g0003"]
    manifest = json.loads((out / "transfer.json").read_text())
    assert manifest["programs"] == ["P0", "g0001", "g0003"]
    assert manifest["search_run"] == "../search"
    assert manifest["search_programs"] == {
        "selection": "admitted by the compute rule against p0",
        "program_ids": ["g0001", "g0003"],
    }
    assert [f["path"] for f in manifest["program_files"]] == [
        "../search/programs/g0001.py",
        "../search/programs/g0003.py",
    ]
    # A program file may not take a discovered program's id.
    (tmp_path / "G0003.py").write_text(CUBED)
    assert main([*argv, "--program-file", str(tmp_path / "G0003.py")]) == 2
    assert "its name 'g0003' is taken by the program file" in capsys.readouterr().err


def test_a_program_files_name_taken_is_refused_before_anything_is_written(tmp_path, capsys):
    (tmp_path / "softcentroid.py").write_text(CUBED)
    out = tmp_path / "study"
    argv = smoke_transfer_argv(
        out, tmp_path, "--program-file", str(tmp_path / "softcentroid.py"), programs="all"
    )
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "program file " in err and "its name 'softcentroid' is taken by the program " in err
    assert "'SoftCentroid'" in err and "rename the file" in err
    assert not out.exists()
    config = fake_config(tmp_path, program_files=(tmp_path / "learnedhead.py",))
    (tmp_path / "learnedhead.py").write_text(CUBED)
    with pytest.raises(EmbeddingTTCError, match="'learnedhead' is taken by the program 'Learn"):
        run_transfer(config, executor=ScriptedExecutor())
