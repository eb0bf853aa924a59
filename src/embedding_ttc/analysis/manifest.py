"""A transfer matrix's manifest, ``OUT/transfer.json``: written by each run, read by ``report``.

Each ``transfer`` run rewrites it (:func:`write_manifest`) with the study's layout (encoders,
held-out and discovery tasks, programs), its settings (bootstrap, shortlist, query sample,
executor) and the search run its programs came from. Two entries carry over from the manifest
already there, so that a study run in pieces into one ``OUT`` keeps them: the discovery column
a held-out piece does not compute, and the search run a later piece does not name.
:func:`read_manifest` reads it for the report's layout.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from embedding_ttc import __version__
from embedding_ttc.analysis.cells import BootstrapConfig
from embedding_ttc.analysis.inputs import ReportError, load_search_run
from embedding_ttc.analysis.plan import QuerySample, ShortlistPolicy
from embedding_ttc.durable import write_atomic
from embedding_ttc.errors import EmbeddingTTCError

MANIFEST = "transfer.json"
MANIFEST_SCHEMA_VERSION = 1  # the manifest's own, apart from the cells' (it was theirs at 1)


def read_manifest(out: Path) -> dict[str, Any] | None:
    """``out/transfer.json``, or ``None`` when the matrix has none."""
    path = out / MANIFEST
    if not path.is_file():
        return None
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path} is not JSON: {exc}") from None
    if not isinstance(loaded, dict) or loaded.get("kind") != "transfer_manifest":
        raise ReportError(f"{path} is not a transfer manifest (kind 'transfer_manifest')")
    return loaded


def write_manifest(
    out: Path,
    *,
    command: Sequence[str],
    suite: str,
    tasks: list[str],
    discovery_suite: str,
    discovery_tasks: list[str],
    encoders: list[str],
    programs: list[str],
    bootstrap: BootstrapConfig,
    shortlist: ShortlistPolicy,
    sample: QuerySample,
    executor: str,
    search_run: Path | None,
) -> None:
    """Write ``out/transfer.json``; ``search_run`` is checked first (a ledger must be there)."""
    out.mkdir(parents=True, exist_ok=True)
    discovery = {
        "discovery_suite": discovery_suite,
        "discovery_tasks": discovery_tasks,
        "discovery_encoder": encoders[0] if discovery_tasks else None,
    }
    if not discovery_tasks:  # a held-out piece keeps the column an earlier run laid out
        discovery = _earlier_discovery(out) or discovery
    body = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "kind": "transfer_manifest",
        "command": list(command),
        "suite": suite,
        "tasks": tasks,
        **discovery,
        "encoders": encoders,
        "programs": programs,
        "bootstrap": bootstrap.resamples,
        "shortlist": shortlist.describe(),
        "sample_queries": sample.describe(),
        "seed": bootstrap.seed,
        "executor": executor,
        "embedding_ttc": __version__,
        "search_run": _search_run_entry(out, search_run),
    }
    write_atomic(out / MANIFEST, json.dumps(body, indent=2) + "\n")


def _earlier_discovery(out: Path) -> dict[str, Any] | None:
    """The discovery column of the manifest already in ``out``, if it has one.

    A study run in pieces has held-out pieces with ``--discovery-suite none``; the manifest
    they write keeps the column of the run that laid it out, so ``report`` still shows it.
    """
    try:
        earlier = read_manifest(out)
    except ReportError:
        return None
    if not earlier or not earlier.get("discovery_tasks"):
        return None
    encoders = earlier.get("encoders") or [None]
    return {
        "discovery_suite": earlier.get("discovery_suite"),
        "discovery_tasks": earlier["discovery_tasks"],
        "discovery_encoder": earlier.get("discovery_encoder") or encoders[0],
    }


def _search_run_entry(out: Path, given: Path | None) -> str | None:
    """The search run the manifest records: ``given`` (checked), else the previous one.

    A run without ``--search-run`` keeps the one an earlier run of the same matrix recorded, so
    a matrix computed in phases still knows its search. The path is recorded relative to ``out``
    (where it can be), so a matrix and its search run moved or cloned together stay linked.
    """
    if given is not None:
        load_search_run(given)  # a missing or malformed ledger fails before any cell is computed
        try:
            return os.path.relpath(given.resolve(), out.resolve())
        except ValueError:  # another drive (Windows): no relative path
            return str(given.resolve())
    try:
        previous = read_manifest(out)
    except EmbeddingTTCError:
        return None
    recorded = (previous or {}).get("search_run")
    return str(recorded) if recorded else None
