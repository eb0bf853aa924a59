"""Open a search run from its typed configuration: the one way a search starts.

:func:`open_search` wires the :class:`~embedding_ttc.search.loop.SearchLoop` of a run from a
:class:`~embedding_ttc.runs.config.RunConfig` (what the run directory is tied to) and a
:class:`SearchSetup` (where and how it runs: the run directory, the data, the encoder's cache
and device, the executor; none of it changes the records). It records the configuration and
the split in the run directory (refusing a resume under other settings), loads the tasks and
the encoder, and builds the checker, sandbox, evaluator and ledger. ``embedding-ttc search``
turns its flags into these two records and calls it; a benchmark, a test or another command
calls it the same way, with no command line.

Example::

    config = RunConfig(
        suite="discovery", tasks=["limit-small"], encoder="tokenlearn-static-64",
        proposer=ProposerSpec(strategy="structural"), model=None, seed=0, shortlist=None,
    )
    with open_search(config, SearchSetup(run_dir=Path("run"))) as loop:
        front = loop.run(Budget(2))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from embedding_ttc.errors import EmbeddingTTCError

if TYPE_CHECKING:  # the loop imports the evaluator and every program
    from embedding_ttc.encoders.base import Encoder
    from embedding_ttc.runs.config import RunConfig
    from embedding_ttc.runs.ledger import Ledger
    from embedding_ttc.runs.split import QuerySplit
    from embedding_ttc.search.backends.base import ChatBackend
    from embedding_ttc.search.evaluator import SuiteEvaluator
    from embedding_ttc.search.loop import SearchLoop
    from embedding_ttc.search.precheck.check import Precheck
    from embedding_ttc.search.proposer import Proposer
    from embedding_ttc.tasks.task import RetrievalTask

LOCAL_THREADS = 1
"""llama.cpp's threads when none are asked: on a busy two-core machine 1 generates faster."""

PURPOSE = "search --executor ray"
"""What needs Ray, in the install hint when the ``ray`` extra is missing."""


@dataclass(frozen=True)
class BackendSetup:
    """How the run's chat backend is reached (not recorded: a resume may change it).

    Attributes:
        base_url: an OpenAI-compatible server's URL (vLLM, Ollama, llama.cpp's server), or
            ``None``: the backend's default.
        threads: CPU threads of the local llama.cpp backend (``None``: :data:`LOCAL_THREADS`).

    """

    base_url: str | None = None
    threads: int | None = None

    def __post_init__(self) -> None:
        if self.threads is not None and self.threads < 1:
            raise EmbeddingTTCError(f"the backend's threads must be at least 1, not {self.threads}")


@dataclass(frozen=True)
class SearchSetup:
    """Where and how a search runs: what is not in its :class:`RunConfig`.

    None of it changes a record, so a run may resume under another setup.

    Attributes:
        run_dir: the run directory (ledger, program sources, ``search.json``, ``split.json``).
        data_dir: the data root the tasks are found in (``None``: the usual places).
        cache_dir: the encoder cache's folder (``None``: the default cache).
        use_cache: wrap the encoder in the on-disk cache.
        device: the encoder's device (``auto``, ``cpu``, ``cuda`` ...).
        executor: where candidates run on the tasks (``inprocess`` or ``ray``).
        ray_address: the Ray cluster of the ``ray`` executor (``None``: ``RAY_ADDRESS``, else a
            local Ray).
        top_k: how many frontier programs a proposer sees with their source.
        pick_rule: a pick-rule JSON file (``None``: the library's rule; a run with a split and
            a reference only).
        backend: how the chat backend is reached.

    """

    run_dir: Path
    data_dir: Path | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    device: str = "auto"
    executor: str = "inprocess"
    ray_address: str | None = None
    top_k: int = 5
    pick_rule: Path | None = None
    backend: BackendSetup = field(default_factory=BackendSetup)

    def __post_init__(self) -> None:
        if self.top_k < 0:
            raise EmbeddingTTCError(f"top_k must be at least 0, not {self.top_k}")


def default_model(backend: str | None) -> str | None:
    """The model a backend uses when none is named and the run records it (local GGUF)."""
    if backend == "llama-cpp":
        from embedding_ttc.llm.gguf import DEFAULT_LLM

        return DEFAULT_LLM
    return None


def check_executor(setup: SearchSetup) -> None:
    """Refuse an unknown executor (suggesting names) or a missing extra before anything runs.

    The executor is not part of the :class:`RunConfig`: it changes where the candidates run,
    not their records, so a run may resume under another executor.

    Raises:
        UnknownNameError: an unknown executor.
        MissingExtraError: ``ray`` without the ``ray`` extra.
        EmbeddingTTCError: a Ray address for another executor.

    """
    from embedding_ttc.executors import check_executor as known_executor
    from embedding_ttc.executors import import_ray

    if known_executor(setup.executor) == "ray":
        import_ray(PURPOSE)
    elif setup.ray_address:
        raise EmbeddingTTCError("search: --ray-address is for --executor ray")


def make_run_backend(config: RunConfig, setup: SearchSetup) -> ChatBackend | None:
    """The chat backend ``config.proposer`` names, or ``None`` for a strategy that takes none.

    The model is the run's (``config.model``: a GGUF file or packaged name for llama-cpp).
    """
    from embedding_ttc.search.backends.catalog import make_backend

    backend = config.proposer.backend
    if backend is None:
        return None
    options: dict[str, object] = {"seed": config.seed}
    if backend == "llama-cpp":
        if config.model:
            options["model_path"] = config.model
        options["n_threads"] = setup.backend.threads or LOCAL_THREADS
    elif config.model:
        options["model"] = config.model
    if setup.backend.base_url:
        options["base_url"] = setup.backend.base_url
    return make_backend(backend, **options)


def make_run_proposer(config: RunConfig, setup: SearchSetup, precheck: Precheck) -> Proposer:
    """The proposer ``config.proposer`` names, over the backend it names."""
    from embedding_ttc.search.strategies import Collaborators, build_proposer

    given = Collaborators(seed=config.seed, precheck=precheck, reference=config.reference)
    return build_proposer(config.proposer, make_run_backend(config, setup), given)


def _check_given(
    config: RunConfig, given: Sequence[RetrievalTask] | None, split: QuerySplit | None
) -> None:
    """Refuse tasks a search may not choose, or tasks or a split given that are not the run's."""
    from embedding_ttc.tasks.catalog import check_choosable

    check_choosable(config.tasks, "a program search")
    if split is not None and (config.split is None or split.settings != config.split):
        raise EmbeddingTTCError(
            f"search: the split given was cut with {split.settings!r}, the run asks "
            f"{config.split!r}"
        )
    if given is None:
        return
    names = [t.name for t in given]
    if names != list(config.tasks):
        raise EmbeddingTTCError(
            f"search: the tasks given ({', '.join(names)}) are not the run's "
            f"({', '.join(config.tasks)}), in its order"
        )


def _check_proposer(config: RunConfig) -> None:
    """Refuse a strategy's options that are not valid, or a backend it cannot take.

    Raises:
        UnknownNameError: an unknown strategy or backend.
        StrategyError: naming the option, or the strategy and the backend.

    """
    from embedding_ttc.search.backends.catalog import BACKENDS
    from embedding_ttc.search.strategies import StrategyError, get_strategy

    spec = config.proposer
    strategy = get_strategy(spec.strategy)
    strategy.read_options(spec.options)
    if spec.backend is not None:
        BACKENDS.get(spec.backend)
    if strategy.needs == "none" and spec.backend is not None:
        raise StrategyError(f"the {strategy.name} strategy takes no backend, not {spec.backend}")
    if strategy.needs != "none" and spec.backend is None:
        raise StrategyError(f"the {strategy.name} strategy needs a chat backend")


def _tasks(
    config: RunConfig, setup: SearchSetup, given: Sequence[RetrievalTask] | None
) -> tuple[list[RetrievalTask], set[str]]:
    """The run's tasks (given, else loaded by name) and every task name a program may know."""
    from embedding_ttc.tasks.catalog import available_task_names, find_data_root, load_task

    data_root = find_data_root(setup.data_dir)
    known = set(available_task_names(data_root)) | set(config.tasks)
    if given is not None:
        return list(given), known
    return [load_task(name, data_root) for name in config.tasks], known


def _split(
    config: RunConfig,
    tasks: Sequence[RetrievalTask],
    ledger: Ledger,
    given: QuerySplit | None,
) -> QuerySplit | None:
    """The run's query split (given, else cut from the config), recorded in the run directory."""
    from embedding_ttc.runs.split import record_split, split_queries

    if given is not None:  # of the run's settings (checked first)
        split = given
    elif config.split is not None:
        split = split_queries(tasks, config.seed, config.split)
    else:
        return None
    record_split(ledger.run_dir, split)
    return split


@contextmanager
def open_search(
    config: RunConfig,
    setup: SearchSetup,
    *,
    tasks: Sequence[RetrievalTask] | None = None,
    split: QuerySplit | None = None,
    make_proposer: Callable[[Precheck], Proposer] | None = None,
    say: Callable[[str], None] | None = None,
) -> Iterator[SearchLoop]:
    """The search loop of the run ``config`` describes, wired for the block.

    Args:
        config: what the run directory is tied to; ``limits`` ``None``: the limits recorded,
            else the defaults (:func:`~embedding_ttc.search.limits.run_limits`).
        setup: where and how it runs.
        tasks: the run's tasks, already loaded, named and ordered as ``config.tasks``
            (``None``: loaded by name from ``setup.data_dir``).
        split: the run's query split, already cut, of ``config.split``'s settings (``None``:
            cut from ``config.split`` and ``config.seed``, when it has one).
        make_proposer: replaces the proposer ``config.proposer`` names; it is given the
            pre-check a drafting proposer would use (a peer that writes its programs elsewhere,
            :mod:`~embedding_ttc.search.external`, passes its own).
        say: where progress lines go (a resume, a wait for the compute lock); ``None``: nowhere.

    Yields:
        The loop, its ledger open; its executor is closed when the block ends.

    Raises:
        RunMismatchError: the run directory was made with other settings.
        SplitError: the split recorded differs, or a validation task is not a run's task.
        EmbeddingTTCError: tasks or a split that are not the config's, a pick rule without a
            split and a reference, a Ray address for another executor.
        UnknownNameError: an unknown executor, task, strategy or backend.

    """
    from embedding_ttc.encoders.named import NamedEncoder
    from embedding_ttc.executors import open_executor
    from embedding_ttc.program_files.checks.source import check_source
    from embedding_ttc.program_files.sandbox.program import SandboxedProgram
    from embedding_ttc.programs.catalog import get_program
    from embedding_ttc.runs.config import read_run_config, write_run_config
    from embedding_ttc.runs.ledger import Ledger
    from embedding_ttc.search.evaluator import ComputeLock, SuiteEvaluator
    from embedding_ttc.search.limits import run_limits, sandbox_limits
    from embedding_ttc.search.loop import SearchLoop
    from embedding_ttc.search.novelty import library_structures
    from embedding_ttc.search.precheck.check import ledger_precheck
    from embedding_ttc.search.strategies.edit.seeds import seed_structures

    tell = say or (lambda _line: None)
    check_executor(setup)
    _check_given(config, tasks, split)
    if make_proposer is None:  # refused before anything is written
        _check_proposer(config)
    ledger = Ledger(setup.run_dir)
    recorded = read_run_config(ledger.run_dir)
    if config.limits is None:
        config = config.model_copy(update={"limits": run_limits(recorded)})
    assert config.limits is not None  # set just above
    reference = get_program(config.reference) if config.reference else None
    config.check_resume(recorded, default_model(config.proposer.backend))
    write_run_config(ledger.run_dir, config)
    if ledger.records:
        tell(
            f"resuming {setup.run_dir}: {len(ledger.records)} records, "
            f"last generation {ledger.last_generation}"
        )
    loaded, known_tasks = _tasks(config, setup, tasks)
    run_split = _split(config, loaded, ledger, split)
    named = NamedEncoder(
        config.encoder, cache_dir=setup.cache_dir, use_cache=setup.use_cache, device=setup.device
    )
    encoder: Encoder = named.load()
    lock = ComputeLock(
        Path(setup.cache_dir or _default_cache_dir()) / "compute.lock",
        on_wait=lambda p: tell(f"waiting for another evaluation to finish ({p})"),
    )
    limits = sandbox_limits(config.limits)
    library = {**library_structures(), **seed_structures(config.reference)}

    def checker(source: str) -> object:
        return check_source(source, task_names=known_tasks)

    precheck = ledger_precheck(checker, library, ledger, limits, encoder)
    if make_proposer is not None:
        proposer = make_proposer(precheck)
    else:
        proposer = make_run_proposer(config, setup, precheck)
    opened = open_executor(setup.executor, address=setup.ray_address, purpose=PURPOSE)
    with opened as executor:
        evaluator = SuiteEvaluator(
            loaded,
            encoder,
            lock=lock,
            shortlist=config.shortlist,
            split=run_split,
            reference=reference,
            executor=executor,
            named=named,
        )
        yield SearchLoop(
            proposer=proposer,
            checker=checker,
            sandbox=lambda source, pid: SandboxedProgram(source, pid, limits),
            evaluator=evaluator,
            ledger=ledger,
            seed=config.seed,
            top_k=setup.top_k,
            registered=library,
            objective=config.objective,
            pick_rule=register_pick(config, setup, ledger, evaluator),
        )


def _default_cache_dir() -> Path:
    from embedding_ttc.encoders.cache import default_cache_dir

    return Path(default_cache_dir())


def register_pick(
    config: RunConfig, setup: SearchSetup, ledger: Ledger, evaluator: SuiteEvaluator
) -> str | None:
    """Register the run's pick rule and its reference's numbers; the rule's digest.

    A run with a split and a reference gets a pick rule (``setup.pick_rule``, else the
    library's) and ``reference.json``; any other run, and a run started before rules were
    registered, has none.

    Raises:
        EmbeddingTTCError: a pick rule for a run without a split or a reference.

    """
    from embedding_ttc.runs.pick import (
        DEFAULT_RULE,
        read_rule,
        reference_record,
        register_rule,
        write_reference,
    )

    if config.split is None or config.reference is None:
        if setup.pick_rule is not None:
            raise EmbeddingTTCError(
                "search: --pick-rule needs a split (--validation-share) and a --reference"
            )
        return None
    rule = read_rule(setup.pick_rule) if setup.pick_rule is not None else DEFAULT_RULE
    digest = register_rule(
        ledger.run_dir, ledger.records, rule, explicit=setup.pick_rule is not None
    )
    if digest is not None:
        score = evaluator.reference_score()
        assert score is not None  # the run has a reference
        write_reference(ledger.run_dir, reference_record(config.reference, score))
    return digest
