"""The configuration of a transfer study run: what :func:`~.transfer.run_transfer` computes.

One frozen record, :class:`TransferConfig`, built by ``embedding-ttc transfer`` from its options
(or by a caller of :func:`~embedding_ttc.analysis.transfer.run_transfer` in Python). It is not
written to disk as such: the run records the study's layout and settings in ``OUT/transfer.json``
(:mod:`embedding_ttc.analysis.manifest`) and its command line in the run log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from embedding_ttc.analysis.cells import BootstrapConfig
from embedding_ttc.analysis.discovered import Selection, admitted_programs
from embedding_ttc.analysis.plan import QuerySample, ShortlistPolicy
from embedding_ttc.program_files.sandbox.limits import DEFAULT_LIMITS, SandboxLimits

NO_DISCOVERY = "none"
"""The discovery suite that means "no discovery column"."""


@dataclass(frozen=True)
class TransferConfig:
    """What a transfer run computes, and where.

    Attributes:
        out: the matrix directory: cells, tables, manifest, run log and learned heads.
        encoders: the held-out encoders; the first is the discovery encoder.
        programs: program names, groups (``all``, ``rocchio-grid``) and ``LearnedHead``;
            with a ``search_run``, ``frontier`` names the run's programs that ``select``
            chooses (without one, it is the library's group of the paper's frontier).
        program_files: program files evaluated in the sandbox, each under its file's stem.
        suite: the held-out suite.
        tasks: only these held-out tasks (empty: every task of ``suite``).
        discovery_suite: the suite of the discovery column, computed on the first encoder
            (:data:`NO_DISCOVERY`: no column).
        discovery_only: compute only the discovery column's cells (a piece of a study run in
            pieces).
        oracle: the oracle's program set (``None``:
            :func:`~embedding_ttc.analysis.transfer_report.default_oracle` of the programs).
        heads: add the learned-head baseline (as naming ``LearnedHead`` in ``programs`` does).
        head_seed: the seed of the heads' split and training.
        search_run: the search run the programs came from, recorded in the manifest (``None``:
            the one an earlier run recorded).
        select: which ledger records of ``search_run`` ``frontier`` names (default: the
            frontier's admitted programs, P0 out).
        program_limits: the sandbox's limits of every call of a program file.
        bootstrap: paired-bootstrap resamples per cell and base seed.
        shortlist: which tasks are scored over a dense shortlist, and how long it is.
        sample: which tasks are scored on a seeded sample of their queries, and how many.
        executor: where groups run (``inprocess`` or ``ray``), recorded in the manifest and
            the run log.
        ray_address: the Ray cluster of the ``ray`` executor (``None``: ``RAY_ADDRESS``, else
            a local Ray).
        data_dir: folder of task folders (``None``: the default data root).
        cache_dir: the embedding cache (``None``: the default cache directory).
        use_cache: wrap encoders in the on-disk embedding cache.
        backend: the encoder runtime.
        device: where encoders run (``auto``: each process takes its GPU if it has one); not
            recorded in the manifest: it changes where cells are computed, not what they are.
        command: the command line recorded in the manifest and the run log.

    """

    out: Path
    encoders: tuple[str, ...]
    programs: tuple[str, ...]
    program_files: tuple[Path, ...] = ()
    suite: str = "heldout"
    tasks: tuple[str, ...] = ()
    discovery_suite: str = "discovery"
    discovery_only: bool = False
    oracle: tuple[str, ...] | None = None
    heads: bool = False
    head_seed: int = 0
    search_run: Path | None = None
    select: Selection = admitted_programs
    program_limits: SandboxLimits = DEFAULT_LIMITS
    bootstrap: BootstrapConfig = field(default_factory=BootstrapConfig)
    shortlist: ShortlistPolicy = field(default_factory=ShortlistPolicy)
    sample: QuerySample = field(default_factory=QuerySample)
    executor: str = "inprocess"
    ray_address: str | None = None
    data_dir: Path | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    backend: str = "torch"
    device: str = "auto"
    command: tuple[str, ...] = ()
