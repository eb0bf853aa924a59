"""What the adapters share: candidates as records, metadata ids, the missing-framework hint."""

from __future__ import annotations

import pytest

from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.errors import MissingExtraError
from embedding_ttc.integrations.candidates import Candidate, metadata_string, missing_framework


def test_a_candidate_is_the_reranker_record():
    assert Candidate("body").record() == {"text": "body"}
    assert Candidate("body", "d1", "T").record() == {"text": "body", "id": "d1", "title": "T"}


def test_a_metadata_id_must_be_a_string():
    assert metadata_string({"doc": "d1"}, "doc", 0, "id") == "d1"
    assert metadata_string({}, "doc", 0, "id") is None
    assert metadata_string({"doc": "d1"}, None, 0, "id") is None
    with pytest.raises(
        CandidateRequestError, match=r"document 4: metadata\['doc'\] \(its id\) must be"
    ):
        metadata_string({"doc": 7}, "doc", 4, "id")


def test_only_the_framework_itself_missing_is_the_extra_missing():
    hint = missing_framework(
        ModuleNotFoundError(name="pyterrier.model"), "pyterrier", "pyterrier", "pyterrier", "X"
    )
    assert isinstance(hint, MissingExtraError)
    assert "pip install -e '.[pyterrier]'" in str(hint)
    broken = ModuleNotFoundError(name="statsmodels")  # a dependency of an installed framework
    with pytest.raises(ModuleNotFoundError) as err:
        missing_framework(broken, "pyterrier", "pyterrier", "pyterrier", "X")
    assert err.value is broken
