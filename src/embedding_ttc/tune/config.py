"""A tune run's configuration, ``RUN/tune.json``: the settings a resume must match."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from embedding_ttc.durable import write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.config import ProposerSpec
from embedding_ttc.tune.rule import TuneRule
from embedding_ttc.tune.split import TEST_SHARE

TUNE_CONFIG_FILE = "tune.json"

SHORTLIST = 100
"""The candidates a second stage reranks per query: a dense top 100, as served."""

INNER_VALIDATION_SHARE = 0.4
"""The share of the tune queries the pick reads and neither the search nor a fit sees."""

FINALISTS = 5
"""How many of the search's programs, best by their validation Δ against the tuned fusion,
the pick weighs beside the library's."""


class TaskSource(BaseModel):
    """Where a tune run's task comes from.

    Attributes:
        kind: ``name`` (a packaged or shared task, or one under ``--data-dir``), ``beir``
            (a BEIR folder of the user's: ``corpus.jsonl``, ``queries.jsonl``,
            ``qrels/test.tsv``) or ``files`` (a corpus, a queries and a qrels file).
        name: the task's name (a BEIR folder's name; the corpus file's stem for ``files``).
        path: the BEIR folder, for ``beir``.
        corpus: the corpus file, for ``files`` (read as ``index build`` reads one).
        queries: the queries file, for ``files``.
        qrels: the judgements file, for ``files``.
        fields: the corpus's JSON fields asked (``id``, ``text``, ``title``), for ``files``.
        skip_invalid: skip corpus records without text, for ``files``.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["name", "beir", "files"]
    name: str
    path: str | None = None
    corpus: str | None = None
    queries: str | None = None
    qrels: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)
    skip_invalid: bool = False


class TuneConfig(BaseModel):
    """What a tune run folder is tied to.

    Attributes:
        task: where the task comes from.
        encoder: the encoder's name.
        seed: the seed of the tune/test cut, the inner cut and the search.
        test_share: the share of judged queries kept for the test report.
        validation_share: the share of the tune queries the pick reads.
        shortlist: the candidates per query.
        strategy: the search's strategy, backend and options.
        model: the LLM model name, for an LLM strategy.
        generations: the search's last generation.
        finalists: the search's programs the pick weighs.
        rule: the pick rule (also ``pick-rule.json``).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    task: TaskSource
    encoder: str
    seed: int = 0
    test_share: float = Field(default=TEST_SHARE, gt=0.0, lt=1.0)
    validation_share: float = Field(default=INNER_VALIDATION_SHARE, gt=0.0, lt=1.0)
    shortlist: int = Field(default=SHORTLIST, ge=2)
    strategy: ProposerSpec = ProposerSpec(strategy="structural")
    model: str | None = None
    generations: int = Field(default=30, ge=0)
    finalists: int = Field(default=FINALISTS, ge=0)
    rule: TuneRule = TuneRule()


class TuneConfigError(EmbeddingTTCError):
    """A run folder's ``tune.json`` is unreadable, or records other settings than asked."""


def read_tune_config(run_dir: Path) -> TuneConfig | None:
    """``run_dir/tune.json``, or ``None`` for a new run.

    Raises:
        TuneConfigError: the file is not a tune configuration.

    """
    path = run_dir / TUNE_CONFIG_FILE
    if not path.is_file():
        return None
    try:
        return TuneConfig.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise TuneConfigError(f"{path} is not a tune run's configuration: {exc}") from None


def record_tune_config(run_dir: Path, config: TuneConfig) -> None:
    """Write ``config`` for a new run, or check a resumed run's, allowing more generations.

    A resume may raise ``generations`` (the search goes on from its ledger); every other
    setting is the run's.

    Raises:
        TuneConfigError: the run recorded other settings (naming each).

    """
    recorded = read_tune_config(run_dir)
    if recorded is not None:
        had = recorded.model_dump(mode="json", exclude={"generations"})
        asked = config.model_dump(mode="json", exclude={"generations"})
        diff = [k for k in asked if had.get(k) != asked[k]]
        if diff:
            detail = "; ".join(f"{k}: run has {had.get(k)!r}, asked {asked[k]!r}" for k in diff)
            raise TuneConfigError(
                f"{run_dir} was made with other settings ({detail}); use a new run folder or "
                "the same options to resume"
            )
    write_atomic(
        run_dir / TUNE_CONFIG_FILE, json.dumps(config.model_dump(mode="json"), indent=2) + "\n"
    )
