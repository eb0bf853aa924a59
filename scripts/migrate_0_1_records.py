"""Rewrite the committed records of older schemas in the current ones, once, before 0.1.0.

The package reads only the current schema of each record. The study results committed before
that (``results/``) held three older formats, which this script rewrites in place:

* a transfer cell of schema 1 (``cells/<encoder>/<task>/<program>.json``) copied its
  comparison with P0 flat (``ndcg_at_10``, ``baseline_ndcg_at_10``, ``delta_ndcg_at_10``,
  ``wins``/``ties``/``losses``): schema 3 embeds it as ``comparison``; a cell of schema 2
  lacked only ``source_sha256`` (a library program's: ``None``);
* a search run's ``search.json`` of schema 1 or 2 named its proposer (``structural``, an LLM
  backend with its ``drafting`` or ``editing`` settings, or a peer): schema 3 records the
  proposer's spec (strategy, backend, options), every option written out as the run ran;
  a file without ``limits`` ran under the limits of its time (600 s not counting the encodes
  the parent served, 256 texts per query and document, the default 8 GiB), now written in;
* a ledger line of schema 1 repeated each task's Δ in ``per_task_delta``, kept each task's
  comparison flat under ``delta`` (without per-query W/T/L, which it did not record: ``wtl``
  is ``None``) and counted tasks in ``wins``/``ties``/``losses``; schema 2 lacked only
  optional fields.

Each rewritten record is validated by the package's current model and written as the package
writes it; a file already current is left byte for byte. Running it again changes nothing.

Usage::

    python scripts/migrate_0_1_records.py [ROOT ...]   # default: results/
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from embedding_ttc.analysis.cells import CELL_SCHEMA_VERSION, Cell
from embedding_ttc.runs.config import RUN_CONFIG_FILE, RUN_CONFIG_SCHEMA_VERSION, RunConfig
from embedding_ttc.runs.records import LEDGER_SCHEMA_VERSION, LedgerRecord

REPO = Path(__file__).resolve().parents[1]

# What runs recorded before their limits ran under (the search command's defaults then).
OLD_LIMITS = {
    "timeout_seconds": 600.0,
    "timeout_covers": "program",
    "encode_texts_per_item": 256.0,
    "memory_gb": 8,
}
LLM_BACKENDS = frozenset({"openai", "anthropic", "llama-cpp"})
# Each strategy's options as runs ran before a field was recorded (schema 2's defaults).
OLD_DRAFT = {
    "drafts": 1,
    "repair_rounds": 0,
    "prompt": "full",
    "context_tokens": 3000,
    "precheck": False,
}
OLD_EDIT = {
    "repair_rounds": 1,
    "explore": 0.2,
    "context_tokens": 5000,
    "precheck": True,
    "ideas": False,
}
OLD_GUIDED = {"repair_rounds": 1, "explore": 0.2, "offers": 0, "keep": [], "share": False}


class MigrationError(Exception):
    """A record that is neither current nor of a schema this script knows."""


def lift_comparison(data: Mapping[str, Any], delta_key: str) -> dict[str, Any]:
    """A schema-1 record's flat comparison fields, lifted into one ``comparison`` entry."""
    body = dict(data)
    lifted: dict[str, Any] = {}
    for old, new in (
        ("ndcg_at_10", "ndcg_at_10"),
        ("baseline_ndcg_at_10", "baseline_ndcg_at_10"),
        (delta_key, "delta_ndcg_at_10"),
    ):
        if old in body:
            lifted[new] = body.pop(old)
    counts = {k: body.pop(k) for k in ("wins", "ties", "losses") if k in body}
    lifted["wtl"] = counts or None
    body["comparison"] = lifted
    return body


def cell(data: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A transfer cell of schema 1 or 2 as schema 3, and what changed."""
    version = data.get("schema_version")
    if version == 1:
        body = lift_comparison(data, "delta_ndcg_at_10")
        note = "cell schema 1 -> 3: the flat comparison embedded as `comparison`"
    elif version == 2:
        body, note = dict(data), "cell schema 2 -> 3: `source_sha256` null (a library program)"
    else:
        raise MigrationError(f"a transfer cell of unknown schema {version!r}")
    body["schema_version"] = CELL_SCHEMA_VERSION
    return body, note


def proposer_spec(
    proposer: str, drafting: dict[str, Any] | None, editing: dict[str, Any] | None
) -> dict[str, Any]:
    """The proposer spec equivalent to a schema-2 file's proposer name and settings."""
    if proposer == "structural":
        return {"strategy": "structural", "backend": None, "options": {}}
    if proposer not in LLM_BACKENDS:
        return {"strategy": "external", "backend": None, "options": {"peer": proposer}}
    if editing is not None:
        mode = editing.get("mode", "edit")
        fields = OLD_GUIDED if mode == "guided" else OLD_EDIT
        options = {k: editing.get(k, default) for k, default in fields.items()}
        return {"strategy": mode, "backend": proposer, "options": options}
    return {"strategy": "draft", "backend": proposer, "options": {**OLD_DRAFT, **(drafting or {})}}


def run_config(data: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A ``search.json`` of schema 1 or 2, or one without limits, as schema 3, and what changed."""
    body, notes = dict(data), []
    version = body.get("schema_version")
    if version in (1, 2):
        drafting, editing = body.pop("drafting", None), body.pop("editing", None)
        if isinstance(body.get("proposer"), str):
            body["proposer"] = proposer_spec(body["proposer"], drafting, editing)
        notes.append(
            f"run config schema {version} -> 3: the proposer {data['proposer']!r} as a spec"
        )
    elif version != RUN_CONFIG_SCHEMA_VERSION:
        raise MigrationError(f"a run configuration of unknown schema {version!r}")
    if body.get("limits") is None:
        body["limits"] = dict(OLD_LIMITS)
        notes.append("the limits its run ran under written in")
    body["schema_version"] = RUN_CONFIG_SCHEMA_VERSION
    return body, "; ".join(notes)


def ledger_line(data: dict[str, Any]) -> dict[str, Any]:
    """A ledger line of schema 1 or 2 as schema 3."""
    body = dict(data)
    if body.get("schema_version") == 1:
        body.pop("per_task_delta", None)
        per_task = body.get("per_task")
        if isinstance(per_task, dict):
            body["per_task"] = {t: lift_comparison(d, "delta") for t, d in per_task.items()}
        counts = {k: body.pop(k) for k in ("wins", "ties", "losses") if k in body}
        if body.get("status") == "ok" or any(counts.values()):
            body["wtl"] = counts or None
    elif body.get("schema_version") != 2:
        raise MigrationError(f"a ledger line of unknown schema {body.get('schema_version')!r}")
    body["schema_version"] = LEDGER_SCHEMA_VERSION
    return body


def migrate_json(path: Path, data: Any) -> tuple[str, str] | None:
    """The new text of a JSON record file and what changed, or ``None`` when it is current."""
    if not isinstance(data, dict):
        return None
    if path.name == RUN_CONFIG_FILE:
        if data.get("schema_version") == RUN_CONFIG_SCHEMA_VERSION and data.get("limits"):
            return None
        body, note = run_config(data)
        config = RunConfig.model_validate(body)
        return json.dumps(config.to_json(), indent=2) + "\n", note
    if data.get("kind") == "transfer_cell":
        if data.get("schema_version") == CELL_SCHEMA_VERSION:
            return None
        body, note = cell(data)
        return Cell.model_validate(body).model_dump_json(indent=1) + "\n", note
    return None


def migrate_jsonl(lines: list[str]) -> tuple[str, str] | None:
    """The new text of a ledger and what changed, or ``None`` when every line is current."""
    out, changed = [], 0
    for line in lines:
        data = json.loads(line) if line.strip() else None
        is_ledger = isinstance(data, dict) and "program_id" in data and "generation" in data
        if not is_ledger or data.get("schema_version") == LEDGER_SCHEMA_VERSION:
            out.append(line)
            continue
        record = LedgerRecord.model_validate(ledger_line(data))
        out.append(record.model_dump_json() + "\n")
        changed += 1
    if not changed:
        return None
    return "".join(out), f"{changed} ledger lines -> schema 3 (per-task comparisons embedded)"


def migrate_file(path: Path) -> tuple[str, str] | None:
    """The new text of ``path`` and what changed, or ``None`` when it is current."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return migrate_jsonl(text.splitlines(keepends=True))
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return migrate_json(path, data)


def migrate(
    roots: list[Path], write: Callable[[Path, str], None], say: Callable[[str], None]
) -> int:
    """Rewrite every old record under ``roots``; return how many files changed."""
    changed = 0
    for root in roots:
        files = [root] if root.is_file() else sorted(root.rglob("*.json*"))
        for path in files:
            if path.suffix not in (".json", ".jsonl"):
                continue
            try:
                result = migrate_file(path)
            except (MigrationError, ValueError) as exc:
                raise MigrationError(f"{path}: {exc}") from exc
            if result is None:
                continue
            text, note = result
            write(path, text)
            changed += 1
            say(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}: {note}")
    return changed


def main(argv: list[str] | None = None) -> int:
    """Migrate the records under the roots given (default: the repository's ``results/``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="*", type=Path, default=[REPO / "results"])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if any is old")
    args = parser.parse_args(argv)

    def write(path: Path, text: str) -> None:
        if not args.check:
            path.write_text(text, encoding="utf-8")

    try:
        changed = migrate([p.resolve() for p in args.roots], write, print)
    except MigrationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    verb = "would change" if args.check else "changed"
    print(f"{verb} {changed} files")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
