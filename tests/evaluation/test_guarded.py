"""Program files in ``evaluate``: loaded with their rejections, run one at a time, failures kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.evaluate import ProgramRun
from embedding_ttc.evaluation.guarded import ProgramFailure, run_guarded
from embedding_ttc.evaluation.records import FailureRow
from embedding_ttc.program_files.program_file import read_program_files
from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.programs.outcome import Status
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder

PROGRAMS = Path(__file__).resolve().parents[1] / "program_files" / "programs"
LIMITS = SandboxLimits(wall_seconds=60.0)


def _load(*names: str) -> tuple[list, list[tuple[str, str]]]:
    """The files' sandboxed programs, and ``(name, reason)`` of those the checks refused."""
    files = read_program_files([PROGRAMS / f"{n}.py" for n in names], task_names=("tiny",))
    programs = [f.sandboxed(LIMITS) for f in files if f.rejected is None]
    return programs, [(f.name, f.rejected) for f in files if f.rejected is not None]


def test_a_rejected_file_is_reported_and_the_others_still_load() -> None:
    programs, rejected = _load("valid_zscore", "read_env", "raises")
    assert [p.name for p in programs] == ["valid_zscore", "raises"]
    assert [name for name, _ in rejected] == ["read_env"]
    assert "os" in rejected[0][1]  # the reason names what was refused


def test_each_failure_is_an_outcome_and_later_programs_still_run(
    tiny_task: RetrievalTask,
) -> None:
    programs, _ = _load("raises", "wrong_shape", "valid_zscore")
    outcomes = list(run_guarded(programs, tiny_task, HashingEncoder()))
    crashed, invalid, run = outcomes
    assert isinstance(crashed, ProgramFailure)
    assert (crashed.program, crashed.status) == ("raises", Status.CRASHED)
    assert "bad value 42" in crashed.reason
    assert isinstance(invalid, ProgramFailure)
    assert (invalid.program, invalid.status) == ("wrong_shape", Status.INVALID_OUTPUT)
    assert "shape" in invalid.reason
    assert isinstance(run, ProgramRun)
    assert run.result.program == "valid_zscore"
    assert set(run.result.per_query) == {"q1", "q2", "q3"}


def test_a_failure_row_never_says_ok() -> None:
    row = FailureRow(encoder="e", task="t", program="p", status=Status.TIMEOUT, reason="slow")
    assert row.model_dump(mode="json")["status"] == "timeout"
    with pytest.raises(ValueError, match="not 'ok'"):
        FailureRow(encoder="e", task="t", program="p", status=Status.OK, reason="")


def test_a_program_file_may_not_take_a_name_in_use(tmp_path: Path) -> None:
    source = (PROGRAMS / "valid_zscore.py").read_text()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for path in (tmp_path / "p0.py", tmp_path / "a" / "mine.py", tmp_path / "b" / "Mine.py"):
        path.write_text(source)
    with pytest.raises(EmbeddingTTCError, match=r"'p0' is taken by the program 'P0'"):
        read_program_files([tmp_path / "p0.py"], taken=("P0", "BM25"))
    with pytest.raises(EmbeddingTTCError, match=r"'Mine' is taken by the program file .*mine"):
        read_program_files([tmp_path / "a" / "mine.py", tmp_path / "b" / "Mine.py"])
    (mine,) = read_program_files([tmp_path / "a" / "mine.py"], taken=("P0",))
    assert mine.name == "mine" and mine.rejected is None
