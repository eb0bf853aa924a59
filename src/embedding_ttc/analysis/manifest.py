"""A transfer matrix's manifest, ``OUT/transfer.json``: written by each run, read by ``report``.

Each ``transfer`` run rewrites it (:func:`write_manifest`) with the study's layout (encoders,
held-out and discovery tasks, programs), its settings (bootstrap, shortlist, query sample,
executor), the search run its programs came from, the program files it evaluated (path and
sha256 of the source, :class:`ProgramFileEntry`) and, when a search run's programs were
evaluated, which of them (:class:`SearchPrograms`). Two entries carry over from the manifest
already there, so that a study run in pieces into one ``OUT`` keeps them: the discovery column
a held-out piece does not compute, and the search run a later piece does not name.
:func:`read_manifest` reads it, a :class:`TransferManifest`, for the report's layout.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from embedding_ttc import __version__
from embedding_ttc.analysis.cells import BootstrapConfig
from embedding_ttc.analysis.inputs import ReportError, load_search_run
from embedding_ttc.analysis.plan import QuerySample, ShortlistPolicy
from embedding_ttc.durable import write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.program_files.program_file import ProgramFile

MANIFEST = "transfer.json"
MANIFEST_SCHEMA_VERSION: Literal[1] = 1


class ProgramFileEntry(BaseModel):
    """A program file the run evaluated.

    Attributes:
        name: its program name in the matrix (the file's stem).
        path: the file, relative to ``OUT`` where it can be.
        sha256: the sha256 of its source, as its cells record it.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    path: str
    sha256: str


class SearchPrograms(BaseModel):
    """Which programs of the search run (``search_run``) the run evaluated.

    Attributes:
        selection: the function that chose the ledger records (its qualified name).
        program_ids: the chosen records' program ids, in ledger order (their files are among
            ``program_files``).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    selection: str
    program_ids: list[str]


class TransferManifest(BaseModel):
    """``OUT/transfer.json``: the layout and settings of the last ``transfer`` run.

    Attributes:
        command: the command line as given.
        suite: the held-out suite.
        tasks: the held-out tasks this run laid out.
        discovery_suite: the suite of the discovery column (``none`` for a held-out piece).
        discovery_tasks: its tasks (empty: no column).
        discovery_encoder: the encoder of the discovery column (``None``: none, or a manifest
            written before it was recorded, where it is the first encoder).
        encoders: the held-out encoders.
        programs: the programs, P0 first.
        bootstrap: resamples per cell.
        shortlist: the shortlist setting, ``{"*": default, task: K}`` (``None`` in manifests
            written before it existed).
        sample_queries: the query-sample setting, in the same form (``None`` likewise).
        seed: the bootstrap's base seed.
        executor: where groups ran (``inprocess`` or ``ray``).
        embedding_ttc: the package version that ran.
        search_run: the search run the programs came from, relative to ``OUT`` where it can be.
        program_files: the program files evaluated (empty in manifests written before they
            could be).
        search_programs: the search run's programs evaluated (``None``: none).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = MANIFEST_SCHEMA_VERSION
    kind: Literal["transfer_manifest"] = "transfer_manifest"
    command: list[str]
    suite: str
    tasks: list[str]
    discovery_suite: str | None
    discovery_tasks: list[str]
    discovery_encoder: str | None = None
    encoders: list[str]
    programs: list[str]
    bootstrap: int
    shortlist: dict[str, int | None] | None = None
    sample_queries: dict[str, int | None] | None = None
    seed: int
    executor: str
    embedding_ttc: str
    search_run: str | None = None
    program_files: list[ProgramFileEntry] = Field(default_factory=list)
    search_programs: SearchPrograms | None = None


def read_manifest(out: Path) -> TransferManifest | None:
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
    try:
        return TransferManifest.model_validate(loaded)
    except ValidationError as exc:
        raise ReportError(f"{path} is not a valid transfer manifest: {exc}") from None


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
    program_files: Sequence[ProgramFile] = (),
    search_programs: SearchPrograms | None = None,
) -> None:
    """Write ``out/transfer.json``; ``search_run`` is checked first (a ledger must be there)."""
    out.mkdir(parents=True, exist_ok=True)
    column: tuple[str | None, list[str], str | None]
    column = (discovery_suite, discovery_tasks, encoders[0] if discovery_tasks else None)
    if not discovery_tasks:  # a held-out piece keeps the column an earlier run laid out
        column = _earlier_discovery(out) or column
    manifest = TransferManifest(
        command=list(command),
        suite=suite,
        tasks=tasks,
        discovery_suite=column[0],
        discovery_tasks=column[1],
        discovery_encoder=column[2],
        encoders=encoders,
        programs=programs,
        bootstrap=bootstrap.resamples,
        shortlist=shortlist.describe(),
        sample_queries=sample.describe(),
        seed=bootstrap.seed,
        executor=executor,
        embedding_ttc=__version__,
        search_run=_search_run_entry(out, search_run),
        program_files=[
            ProgramFileEntry(name=f.name, path=_relative(out, f.path), sha256=f.sha256)
            for f in program_files
        ],
        search_programs=search_programs,
    )
    # json.dumps, as before the manifest was typed: the same bytes for the same study.
    write_atomic(out / MANIFEST, json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n")


def _earlier_discovery(out: Path) -> tuple[str | None, list[str], str | None] | None:
    """The discovery column (suite, tasks, encoder) of the manifest already in ``out``, if any.

    A study run in pieces has held-out pieces with ``--discovery-suite none``; the manifest
    they write keeps the column of the run that laid it out, so ``report`` still shows it.
    """
    try:
        earlier = read_manifest(out)
    except ReportError:
        return None
    if not earlier or not earlier.discovery_tasks:
        return None
    encoder = earlier.discovery_encoder or (earlier.encoders[0] if earlier.encoders else None)
    return earlier.discovery_suite, earlier.discovery_tasks, encoder


def _search_run_entry(out: Path, given: Path | None) -> str | None:
    """The search run the manifest records: ``given`` (checked), else the previous one.

    A run without ``--search-run`` keeps the one an earlier run of the same matrix recorded, so
    a matrix computed in phases still knows its search. The path is recorded relative to ``out``
    (where it can be), so a matrix and its search run moved or cloned together stay linked.
    """
    if given is not None:
        load_search_run(given)  # a missing or malformed ledger fails before any cell is computed
        return _relative(out, given)
    try:
        previous = read_manifest(out)
    except EmbeddingTTCError:
        return None
    return previous.search_run if previous is not None and previous.search_run else None


def _relative(out: Path, path: Path) -> str:
    """``path`` relative to ``out`` where it can be (so they move together), else absolute."""
    try:
        return os.path.relpath(path.resolve(), out.resolve())
    except ValueError:  # another drive (Windows): no relative path
        return str(path.resolve())


def search_run_path(
    out: Path, manifest: TransferManifest | None, given: Path | None
) -> Path | None:
    """The search run of a study: ``given``, else the one its manifest records (``None``: none).

    A recorded path is relative to ``out`` unless absolute.
    """
    if given is not None:
        return given
    recorded = manifest.search_run if manifest is not None else None
    if not recorded:
        return None
    path = Path(recorded)
    return path if path.is_absolute() else (out / path).resolve()
