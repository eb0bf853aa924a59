"""A tune run's records: what each step writes, read back on a resume.

Every record is a typed, versioned JSON file written whole (``fusion.json``,
``candidates.json``, ``pick.json``); :func:`read_record` reads one back, or says the step has
not written it yet.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from embedding_ttc.durable import write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.tune.candidates import Candidate
from embedding_ttc.tune.fusion import FusionTuning
from embedding_ttc.tune.rule import Verdict
from embedding_ttc.tune.scoring import ProgramScore

FUSION_FILE = "fusion.json"
CANDIDATES_FILE = "candidates.json"
PICK_FILE = "pick.json"


class TuneError(EmbeddingTTCError):
    """A tune run cannot go on (the message names the step and the cause)."""


class FusionRecord(BaseModel):
    """``fusion.json``: the fusions fitted on the inner cut and on all the tune queries.

    Attributes:
        cv: every fusion cross-validated over the tune queries (means over the folds).
        tuned: every fusion fitted on all the tune queries.
        chosen: the configuration with the best cross-validated score (``family method/norm``).
        inner_program: that configuration as fitted on the inner search part.
        program: that configuration as fitted on all the tune queries: the tuned fusion.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    cv: FusionTuning
    tuned: FusionTuning
    chosen: str
    inner_program: str
    program: str


class CandidatesRecord(BaseModel):
    """``candidates.json``: what the pick rule read.

    Attributes:
        validation: the validation query ids, in the order the rule read them.
        served_queries: the queries each served time is the median of.
        candidates: every candidate, including those left out.
        scores: each scored program's numbers on the tune queries (P0 and the fusion first).
        verdicts: the rule's verdict on each candidate that was scored.
        rule_sha256: the rule file's digest.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    validation: list[str]
    served_queries: int
    candidates: list[Candidate]
    scores: list[ProgramScore]
    verdicts: list[Verdict]
    rule_sha256: str


class TunePick(BaseModel):
    """``pick.json``: the second stage to deploy.

    Attributes:
        task: the task tuned on.
        encoder: the encoder it runs over.
        name: the pick's label in the run's tables.
        kind: what it is (``fusion``, ``library``, ``registered``, ``searched``).
        program: a library program with its parameters, or ``None``.
        program_file: a program file relative to the run folder, or ``None``.
        shortlist: the candidates per query it was chosen at.
        signal: its validation nDCG@10 above the tuned fusion's (0 for the fusion itself).
        rule_sha256: the digest of the rule that chose it.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    task: str
    encoder: str
    name: str
    kind: str
    program: str | None = None
    program_file: str | None = None
    shortlist: int
    signal: float
    rule_sha256: str


def read_record(path: Path, model: type[BaseModel]) -> Any:
    """A record file of the run as ``model``, or ``None`` when it is not there yet.

    Raises:
        TuneError: the file is not such a record.

    """
    if not path.is_file():
        return None
    try:
        return model.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise TuneError(f"{path} is not a {model.__name__} record: {exc}") from None


def write_record(path: Path, record: BaseModel) -> None:
    """Write ``record`` as ``path`` (whole, or not at all)."""
    write_atomic(path, record.model_dump_json(indent=1) + "\n")
