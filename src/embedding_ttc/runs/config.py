"""A search run's configuration, ``RUN_DIR/search.json``: the settings a resume must match.

``search`` writes a :class:`RunConfig` into its run directory and, when the directory already
has one, refuses to resume under other settings (:meth:`RunConfig.check_resume` names every
field that differs). The report reads it to title the search's figures.

The file is the record's JSON, keys in field order, with ``drafting`` absent when the run does
not draft. Schema 2 added the validation split's settings, the reference program and the
objective; a file of schema 1 reads as a run without a split or a reference, against P0 (what
such a run was), and resumes only when asked the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from embedding_ttc.durable import write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.records import Objective
from embedding_ttc.runs.split import SplitSettings
from embedding_ttc.search.drafting.options import DraftingOptions
from embedding_ttc.search.editing.options import EditOptions

RUN_CONFIG_FILE = "search.json"
RUN_CONFIG_SCHEMA_VERSION: Literal[2] = 2


class RunConfigError(EmbeddingTTCError):
    """A run directory's ``search.json`` is not a run configuration (the message names it)."""


class RunMismatchError(EmbeddingTTCError):
    """``search`` was pointed at a run directory made with other settings."""


class RunConfig(BaseModel):
    """What a search run directory is tied to.

    Attributes:
        suite: the discovery suite named (``--suite``; its default even when tasks are given).
        tasks: the discovery tasks, in order.
        encoder: the encoder's name.
        proposer: the proposer's name (``structural``, ``openai``, ``llama-cpp`` ...).
        model: the LLM model name (``None``: the proposer's default, or no LLM).
        seed: the run's seed.
        shortlist: rerank each query's first-stage top K only (``None``: full ranking).
        drafting: how the LLM proposer drafts (``None``: it does not).
        editing: how the LLM proposer edits a parent instead (``None``: it does not).
        split: how each task's queries are split into search and validation parts
            (``None``: no split; the cut itself is ``split.json``).
        reference: the library program every candidate is also compared with (``None``: none).
        objective: the baseline of the Δ the proposer is guided by (``p0`` or ``reference``).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[2] = RUN_CONFIG_SCHEMA_VERSION
    suite: str
    tasks: list[str]
    encoder: str
    proposer: str
    model: str | None
    seed: int
    shortlist: int | None
    drafting: DraftingOptions | None = None
    editing: EditOptions | None = None
    split: SplitSettings | None = None
    reference: str | None = None
    objective: Objective = "p0"

    @model_validator(mode="before")
    @classmethod
    def _read_schema_1(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("schema_version") == 1:
            return {**data, "schema_version": RUN_CONFIG_SCHEMA_VERSION}
        return data

    @model_validator(mode="after")
    def _objective_has_reference(self) -> RunConfig:
        if self.objective == "reference" and self.reference is None:
            raise ValueError("the objective 'reference' needs a reference program")
        return self

    def to_json(self) -> dict[str, object]:
        """The body of ``search.json`` (no ``drafting`` entry when the run does not draft)."""
        body = self.model_dump(mode="json")
        if self.drafting is None:
            del body["drafting"]
        return body

    def check_resume(self, recorded: RunConfig | None, default_model: str | None = None) -> None:
        """Refuse to resume a run directory recorded with other settings than these.

        Every setting asked is compared with the recorded one; a run asked without drafting
        does not compare ``drafting`` (its ``search.json`` then has no such entry). A run
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
