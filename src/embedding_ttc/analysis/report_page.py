"""The report page's inputs, computed: the layout the report covers and everything it shows.

:func:`build_page` reads the matrix directory (:mod:`embedding_ttc.analysis.inputs`), resolves
its layout (:func:`resolve_layout`), computes the
:class:`~embedding_ttc.analysis.transfer_report.TransferReport` and every figure's data, and
returns a :class:`ReportPage`; :mod:`embedding_ttc.analysis.report` renders and writes it.

The manifest is rewritten by every ``transfer`` run, so the layout is the manifest's *extended
by the cells found*: encoders and programs with held-out cells, and tasks of the manifest's
held-out suite that have cells. Without a manifest, the layout is the cells' own and there is
no discovery column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from embedding_ttc.analysis.cells import BASELINE, Cell, CellKey
from embedding_ttc.analysis.discovered import validation_means
from embedding_ttc.analysis.figure_data.base import Skipped
from embedding_ttc.analysis.figure_data.build import FigureData, FigureInputs, build_figures
from embedding_ttc.analysis.figure_data.prf import DEFAULT_PRF_TASK
from embedding_ttc.analysis.heads import HeadRecord
from embedding_ttc.analysis.inputs import (
    ReportError,
    SearchRun,
    load_heads,
    load_search_run,
    scan_cells,
)
from embedding_ttc.analysis.latency import read_latency
from embedding_ttc.analysis.manifest import (
    MANIFEST,
    TransferManifest,
    read_manifest,
    search_run_path,
)
from embedding_ttc.analysis.run_log import TransferRun, read_runs
from embedding_ttc.analysis.transfer_report import TransferReport, default_oracle
from embedding_ttc.errors import EmbeddingTTCError


@dataclass(frozen=True)
class Layout:
    """The matrix the report covers, and how it was found."""

    encoders: tuple[str, ...]
    tasks: tuple[str, ...]
    programs: tuple[str, ...]
    discovery_encoder: str | None
    discovery_tasks: tuple[str, ...]
    notes: tuple[str, ...]


def _suite(name: object) -> list[str]:
    from embedding_ttc.tasks.catalog import suite_tasks

    if not isinstance(name, str):
        return []
    try:
        return suite_tasks(name)
    except EmbeddingTTCError:
        return []


def _extend(base: Sequence[str], found: Sequence[str]) -> tuple[list[str], list[str]]:
    out = list(dict.fromkeys(base))
    extra = [x for x in dict.fromkeys(found) if x not in out]
    return out + extra, extra


def resolve_layout(manifest: TransferManifest | None, cells: Sequence[Cell]) -> Layout:
    """The manifest's layout extended by the cells found (see the module docstring)."""
    notes: list[str] = []
    if manifest is None:
        disc_suite = set(_suite("discovery"))
        held = [c for c in cells if c.task not in disc_suite]
        programs = sorted({c.program for c in held}, key=lambda p: (p != BASELINE, p))
        notes.append(f"no {MANIFEST}: the layout is that of the cells found")
        return Layout(
            encoders=tuple(sorted({c.encoder for c in held})),
            tasks=tuple(sorted({c.task for c in held})),
            programs=tuple(programs),
            discovery_encoder=None,
            discovery_tasks=(),
            notes=tuple(notes),
        )
    disc_tasks = list(manifest.discovery_tasks)
    m_tasks = list(manifest.tasks)
    m_encoders = list(manifest.encoders)
    suite = _suite(manifest.suite)
    held_tasks = {*m_tasks, *suite} - set(disc_tasks)
    held = [c for c in cells if c.task in held_tasks]
    tasks, extra_tasks = _extend(m_tasks, [t for t in suite if any(c.task == t for c in held)])
    # a piece's --task order would otherwise lead: the suite's own order, then other tasks
    tasks.sort(key=lambda t: suite.index(t) if t in suite else len(suite))
    encoders, extra_enc = _extend(m_encoders, sorted({c.encoder for c in held}))
    found = sorted({c.program for c in cells if c.task in held_tasks or c.task in disc_tasks})
    programs, extra_prog = _extend(manifest.programs, found)
    for kind, extra in (("encoders", extra_enc), ("tasks", extra_tasks), ("programs", extra_prog)):
        if extra:
            notes.append(f"{kind} beyond {MANIFEST}, found among the cells: {', '.join(extra)}")
    named = manifest.discovery_encoder
    disc_encoder = named if named else (m_encoders[0] if m_encoders else None)
    if disc_encoder in encoders:  # the discovery encoder leads the held-out columns, as in Table 2
        encoders.remove(disc_encoder)
        encoders.insert(0, disc_encoder)
    return Layout(
        encoders=tuple(encoders),
        tasks=tuple(tasks),
        programs=tuple(programs),
        discovery_encoder=disc_encoder if disc_tasks else None,
        discovery_tasks=tuple(disc_tasks),
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class ReportPage:
    """Everything the page shows, computed (:mod:`~embedding_ttc.analysis.report` writes it)."""

    out: Path
    layout: Layout
    report: TransferReport
    figures: dict[str, FigureData | Skipped]
    manifest: TransferManifest | None
    n_cells_found: int
    outside: tuple[CellKey, ...]
    search: SearchRun | None
    heads: tuple[HeadRecord, ...]
    notes: tuple[str, ...] = field(default=())
    runs: tuple[TransferRun, ...] = field(default=())


@dataclass(frozen=True)
class Matrix:
    """A matrix directory read: its cells, manifest, layout, search run and report."""

    cells: tuple[Cell, ...]
    manifest: TransferManifest | None
    layout: Layout
    search: SearchRun | None
    report: TransferReport


def read_matrix(out: Path, search_run: Path | None = None) -> Matrix:
    """Read the matrix in ``out`` and compute its report (the tables' data, no figure).

    Raises:
        ReportError: when there is no cell, or an input is malformed.

    """
    cells = scan_cells(out)
    if not cells:
        raise ReportError(f"no cells under {out / 'cells'}: run `embedding-ttc transfer` first")
    manifest = read_manifest(out)
    layout = resolve_layout(manifest, cells)
    path = search_run_path(out, manifest, search_run)
    try:
        search = load_search_run(path) if path is not None else None
    except ReportError as exc:
        if search_run is not None:
            raise
        raise ReportError(
            f"{exc} (the search run {out / MANIFEST} records; pass --search-run to use another)"
        ) from None
    report = TransferReport.from_cells(
        cells,
        encoders=layout.encoders,
        tasks=layout.tasks,
        programs=layout.programs,
        discovery_encoder=layout.discovery_encoder,
        discovery_tasks=layout.discovery_tasks,
        oracle_programs=default_oracle(layout.programs),
        validation=validation_means(search.records) if search is not None else None,
        latency=read_latency(out),
    )
    return Matrix(tuple(cells), manifest, layout, search, report)


def build_page(
    out: Path,
    *,
    search_run: Path | None = None,
    program: str | None = None,
    prf_task: str = DEFAULT_PRF_TASK,
    seed: int = 0,
) -> ReportPage:
    """Read the matrix in ``out`` and compute the report and every figure's data.

    Args:
        out: the matrix directory (``transfer --out``).
        search_run: the search run of the Pareto and trajectory figures (default: the one the
            manifest records).
        program: the program of the per-encoder bars (default LexicalHybridRRF when present).
        prf_task: the task of the Rocchio-against-SoftCentroid bars.
        seed: the seed of the trajectory's UMAP layout.

    Raises:
        ReportError: when there is no cell, or an input is malformed.

    """
    out = Path(out)
    matrix = read_matrix(out, search_run)
    cells, manifest, layout = matrix.cells, matrix.manifest, matrix.layout
    search, report = matrix.search, matrix.report
    used = {c.key for c in report.cells}
    outside = tuple(c.key for c in cells if c.key not in used)
    heads, heads_note = load_heads(out)
    inputs = FigureInputs(
        report=report,
        cells=tuple(cells),
        ledger=search.records if search is not None else None,
        search_label=search.label() if search is not None else "",
        search_objective=(
            search.config.objective if search is not None and search.config is not None else "p0"
        ),
        heads=heads,
        heads_note=heads_note,
        program=program,
        prf_task=prf_task,
        seed=seed,
    )
    notes = list(layout.notes)
    if heads_note and heads:
        notes.append(heads_note)
    return ReportPage(
        out=out,
        layout=layout,
        report=report,
        figures=build_figures(inputs),
        manifest=manifest,
        n_cells_found=len(cells),
        outside=outside,
        search=search,
        heads=heads,
        notes=tuple(notes),
        runs=tuple(read_runs(out)),
    )
