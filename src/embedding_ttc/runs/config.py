"""A search run's configuration, ``RUN_DIR/search.json``: the settings a resume must match.

``search`` writes a :class:`RunConfig` into its run directory and, when the directory already
has one, refuses to resume under other settings (:meth:`RunConfig.check_resume` names every
field that differs). The report reads it to title the search's figures.

The proposer is a :class:`ProposerSpec`: a strategy, a backend and the strategy's options as
JSON (what :mod:`embedding_ttc.search.strategies` builds a proposer from); this module holds
it as data and imports no strategy.

Only schema 3 is read: a file of an older schema is refused, naming its schema (the files
committed before 0.1.0 were rewritten once by ``scripts/migrate_0_1_records.py``).

``limits`` records the sandbox's limits every candidate ran under (:class:`RunLimits`); a
run resumes under them unless others are asked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from embedding_ttc.durable import refuse_other_schema, write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.records import Objective
from embedding_ttc.runs.split import SplitSettings

RUN_CONFIG_FILE = "search.json"
RUN_CONFIG_SCHEMA_VERSION: Literal[3] = 3


class RunConfigError(EmbeddingTTCError):
    """A run directory's ``search.json`` is not a run configuration (the message names it)."""


class RunMismatchError(EmbeddingTTCError):
    """``search`` was pointed at a run directory made with other settings."""


class ProposerSpec(BaseModel):
    """Which proposer a run uses: a strategy, its backend and its options, as data.

    Attributes:
        strategy: a registered strategy (``structural``, ``draft``, ``edit``, ``guided``,
            ``external``).
        backend: a registered chat backend (``openai``, ``anthropic``, ``llama-cpp``), or
            ``None`` for a strategy that takes none.
        options: the strategy's options record as JSON (the strategy validates it).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: str
    backend: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    def __str__(self) -> str:
        """The backend, peer or strategy: the name a run was asked by before 0.1.0."""
        peer = self.options.get("peer") if self.strategy == "external" else None
        return str(self.backend or peer or self.strategy)


class RunLimits(BaseModel):
    """The sandbox's limits of a search run's candidates, per program per task.

    Attributes:
        timeout_seconds: the wall-time limit (``--timeout``).
        timeout_covers: what it counts: ``run`` (the program and the encodes the parent
            serves for it) or ``program`` (the program's own time: runs recorded before).
        encode_texts_per_item: the encoder budget in texts per query and document
            (``--encode-budget``).
        memory_gb: the address-space limit in GiB (``--memory-gb``).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_seconds: float = Field(gt=0)
    timeout_covers: Literal["run", "program"] = "run"
    encode_texts_per_item: float = Field(gt=0)
    memory_gb: int = Field(gt=0)


class RunConfig(BaseModel):
    """What a search run directory is tied to.

    Attributes:
        suite: the discovery suite named (``--suite``; its default even when tasks are given).
        tasks: the discovery tasks, in order.
        encoder: the encoder's name.
        proposer: the proposer: strategy, backend and options (:class:`ProposerSpec`).
        model: the LLM model name (``None``: the proposer's default, or no LLM).
        seed: the run's seed.
        shortlist: rerank each query's first-stage top K only (``None``: full ranking).
        split: how each task's queries are split into search and validation parts
            (``None``: no split; the cut itself is ``split.json``).
        reference: the library program every candidate is also compared with (``None``: none).
        objective: the baseline of the Δ the proposer is guided by (``p0`` or ``reference``).
        limits: the sandbox's limits of every candidate (``None`` only in a configuration
            made without them in memory; the search command always records them).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[3] = RUN_CONFIG_SCHEMA_VERSION
    suite: str
    tasks: list[str]
    encoder: str
    proposer: ProposerSpec
    model: str | None
    seed: int
    shortlist: int | None
    split: SplitSettings | None = None
    reference: str | None = None
    objective: Objective = "p0"
    limits: RunLimits | None = None

    @model_validator(mode="before")
    @classmethod
    def _current_schema(cls, data: Any) -> Any:
        """Refuse a file of another schema by its number (older ones are not read)."""
        return refuse_other_schema(data, RUN_CONFIG_SCHEMA_VERSION, "a run configuration")

    @model_validator(mode="after")
    def _objective_has_reference(self) -> RunConfig:
        if self.objective == "reference" and self.reference is None:
            raise ValueError("the objective 'reference' needs a reference program")
        return self

    def to_json(self) -> dict[str, object]:
        """The body of ``search.json``."""
        return self.model_dump(mode="json")

    def check_resume(self, recorded: RunConfig | None, default_model: str | None = None) -> None:
        """Refuse to resume a run directory recorded with other settings than these.

        Every setting asked is compared with the recorded one. A run
        recorded with no model name (local runs made before the local model was recorded)
        used the proposer's default: it resumes when ``default_model`` is asked.

        Raises:
            RunMismatchError: naming each setting that differs, as recorded and as asked.

        """
        if recorded is None:
            return
        asked, had = self.to_json(), recorded.model_dump(mode="json")
        if had.get("model") is None and default_model is not None:
            had["model"] = default_model
        diff = [k for k in asked if had.get(k) != asked[k]]
        if diff:
            detail = ", ".join(f"{k}: run has {had.get(k)!r}, asked {asked[k]!r}" for k in diff)
            raise RunMismatchError(
                f"the run directory was made with other settings ({detail}); "
                "use a new --run-dir or the same options to resume"
            )


def write_run_config(run_dir: Path, config: RunConfig) -> None:
    """Record ``config`` as ``run_dir/search.json`` (written whole, or not at all)."""
    write_atomic(run_dir / RUN_CONFIG_FILE, json.dumps(config.to_json(), indent=2) + "\n")


def read_run_config(run_dir: Path) -> RunConfig | None:
    """``run_dir/search.json``, or ``None`` when the run directory has none.

    Raises:
        RunConfigError: when the file is not JSON or not a run configuration.

    """
    path = run_dir / RUN_CONFIG_FILE
    if not path.is_file():
        return None
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunConfigError(f"{path} is not JSON: {exc}") from None
    try:
        return RunConfig.model_validate(loaded)
    except ValidationError as exc:
        raise RunConfigError(f"{path} is not a search run's configuration: {exc}") from None
