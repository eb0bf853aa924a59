"""scripts/test.sh runs every stage, names each one's status and fails if any failed."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

STUB = """#!/usr/bin/env bash
echo "$(basename "$0") $*" >> "$CALLS"
if [[ "$(basename "$0") $*" == *"$FAIL_ON"* ]]; then exit 3; fi
"""


def _checkout(tmp_path: Path) -> Path:
    """A checkout whose setup does nothing and whose tools are stubs that log their calls."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "test.sh", root / "scripts" / "test.sh")
    (root / "scripts" / "setup.sh").write_text("exit 0\n")
    (root / ".venv" / "bin").mkdir(parents=True)
    for tool in ("ruff", "mypy", "mkdocs", "pytest"):
        path = root / ".venv" / "bin" / tool
        path.write_text(STUB)
        path.chmod(0o755)
    return root


def _run(root: Path, fail_on: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "CALLS": str(root / "calls"), "FAIL_ON": fail_on}
    return subprocess.run(
        ["bash", str(root / "scripts" / "test.sh")], env=env, capture_output=True, text=True
    )


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_failed_pytest_stage_still_runs_the_ray_stage_and_fails_the_script(tmp_path: Path):
    root = _checkout(tmp_path)
    done = _run(root, fail_on="not slow and not ray")
    assert done.returncode == 1, done.stdout + done.stderr
    calls = (root / "calls").read_text().splitlines()
    assert calls[-1] == "pytest -q -m ray and not slow"  # run after the failed stage
    assert len(calls) == 6  # ruff twice, mypy, mkdocs, pytest twice
    summary = done.stdout.split("== summary\n")[1]
    assert "pytest                                        FAILED (exit 3)" in summary
    assert "pytest: the tests that start a local Ray      ok" in summary
    assert "mypy                                          ok" in summary
    assert "no ../shared/datasets beside this checkout" in done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_every_stage_passing_exits_0_and_lists_every_stage(tmp_path: Path):
    root = _checkout(tmp_path)
    done = _run(root, fail_on="no such call")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.split("== summary\n")[1].splitlines()
    assert [line.split("  ")[0] for line in summary] == [
        "ruff check",
        "ruff format",
        "mypy",
        "docs",
        "pytest",
        "pytest: the tests that start a local Ray",
    ]
    assert all(line.endswith(" ok") for line in summary)
