"""The package runs on the lowest Python that ``requires-python`` admits (3.10).

mypy checks the standard library's names against that version (typeshed knows in which version
each appeared), so the config must name it; this test keeps the two equal and, for runs of the
tests alone, looks for the 3.11-only names a 3.10 interpreter would fail to import.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from embedding_ttc.programs.outcome import Status

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "embedding_ttc"

NEW_IN_311: dict[str, set[str]] = {
    "enum": {"StrEnum", "ReprEnum", "EnumCheck", "FlagBoundary", "verify", "member", "nonmember"},
    "typing": {
        *("Self", "LiteralString", "Never", "assert_never", "assert_type", "reveal_type"),
        *("Required", "NotRequired", "TypeVarTuple", "Unpack", "dataclass_transform"),
    },
    "datetime": {"UTC"},
    "hashlib": {"file_digest"},
    "asyncio": {"TaskGroup", "timeout", "timeout_at", "Runner", "Barrier"},
    "contextlib": {"chdir"},
    "operator": {"call"},
    "math": {"cbrt", "exp2"},
}
"""Standard-library names added in Python 3.11 (from "What's New In Python 3.11")."""
NEW_MODULES_IN_311 = {"tomllib", "wsgiref.types"}
NEW_BUILTINS_IN_311 = {"ExceptionGroup", "BaseExceptionGroup"}


def _floor() -> str:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'^requires-python = ">=(3\.\d+)"', text, re.M)
    assert found, 'pyproject.toml has no requires-python = ">=3.x"'
    return found.group(1)


def test_mypy_checks_against_the_lowest_admitted_python():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    mypy = text.split("[tool.mypy]", 1)[1].split("\n[", 1)[0]
    assert f'python_version = "{_floor()}"' in mypy


def _uses_of_newer_names(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    modules: dict[str, str] = {}  # local name -> standard module it names
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in NEW_MODULES_IN_311:
                    found.append(f"{path}:{node.lineno}: import {alias.name}")
                modules[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module in NEW_MODULES_IN_311:
                found.append(f"{path}:{node.lineno}: from {node.module} import")
            new = NEW_IN_311.get(node.module, set())
            found += [
                f"{path}:{node.lineno}: {node.module}.{a.name}" for a in node.names if a.name in new
            ]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = modules.get(node.value.id)
            if module is not None and node.attr in NEW_IN_311.get(module, set()):
                found.append(f"{path}:{node.lineno}: {module}.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in NEW_BUILTINS_IN_311:
            found.append(f"{path}:{node.lineno}: {node.id}")
    return found


def test_the_package_uses_no_standard_name_new_in_python_3_11():
    assert _floor() == "3.10", "the table above is of names new after 3.10: update it"
    found = [hit for path in sorted(SRC.rglob("*.py")) for hit in _uses_of_newer_names(path)]
    assert found == []


@pytest.mark.parametrize(
    ("source", "hit"),
    [
        ("from enum import StrEnum\n", "enum.StrEnum"),
        ("import typing\nx: typing.Self\n", "typing.Self"),
        ("import datetime as dt\nnow = dt.UTC\n", "datetime.UTC"),
        ("import tomllib\n", "import tomllib"),
        ("raise ExceptionGroup('x', [])\n", "ExceptionGroup"),
    ],
)
def test_the_check_finds_each_kind_of_use(tmp_path: Path, source: str, hit: str):
    path = tmp_path / "m.py"
    path.write_text(source)
    (found,) = _uses_of_newer_names(path)
    assert found.endswith(hit)


def test_status_reads_as_its_value_as_a_strenum_would():
    assert str(Status.OK) == "ok" and f"{Status.TIMEOUT}" == "timeout"
    assert f"{Status.CRASHED:>9}" == "  crashed" and "-".join([Status.BUDGET]) == "budget"
    assert Status("rejected") is Status.REJECTED and Status.OK == "ok"
    assert json.dumps({"status": Status.INVALID_OUTPUT}) == '{"status": "invalid_output"}'
