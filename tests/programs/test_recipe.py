"""Deployment recipes: every registered program declares one; names, artifacts, the manifest form.

Whether a recipe matches what its program really encodes is checked against built indexes in
``tests/deploy/test_reranker.py`` (over the whole registry too).
"""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.errors import UnknownNameError
from embedding_ttc.programs.catalog import PROGRAMS, get_program, recipe_for
from embedding_ttc.programs.recipe import BATCH_ANSWERS, Artifact, Recipe, recipe_of


@pytest.mark.parametrize("name", PROGRAMS.names())
def test_every_registered_program_declares_its_recipe(name):
    program = get_program(name)
    assert isinstance(type(program).__dict__.get("recipe"), Recipe)  # on the class itself
    assert recipe_for(name) is recipe_of(program)


def test_a_parametrised_name_deploys_as_its_program():
    assert recipe_for("Rocchio:K=3,beta=0.5") is get_program("Rocchio").recipe
    with pytest.raises(UnknownNameError, match="SoftCentroid"):
        recipe_for("SoftCentriod")


def test_a_program_without_a_recipe_is_named():
    class Bare:
        name = "Bare"

    with pytest.raises(TypeError, match="program 'Bare' declares no deployment recipe"):
        recipe_of(Bare())


def test_amortised_library_programs():
    """The programs whose only query-time encode is the query's own embedding."""
    amortised = {n for n in PROGRAMS.names() if recipe_for(n).amortised}
    assert amortised == {
        "P0", "SoftCentroid", "Rocchio", "BidirZScore", "SentMaxSim", "AdaptGranularity",
        "CoverageTriple", "LexicalHybridRRF", "CrossRoundRRF", "BM25", "BM25DenseRRF",
        "ConvexHybrid", "WeightedRRF", "RanxFusion",
    }  # fmt: skip


def test_the_manifest_form_of_a_recipe():
    # Written into every index manifest: an index built earlier compares equal to it.
    assert recipe_for("LexicalHybridRRF").describe() == {
        "artifacts": [
            "document@retrieval.passage",
            "sentence@retrieval.passage",
            "pair@retrieval.passage",
            "paragraph@retrieval.passage",
            "document@retrieval.passage[128 tok]",
            "document@retrieval.query",
        ],
        "lexical": True,
        "query_encodes": 0,
        "query_encodes_collapsed": 0,
        "batch": "reference",
        "batch_answer": BATCH_ANSWERS["reference"],
        "note": "",
    }
    backbone = recipe_for("MomentumProg")
    assert [a.describe() for a in backbone.artifacts] == [
        "sentence@retrieval.passage",
        "document@retrieval.query (unless views collapse)",
    ]
    assert [a.describe() for a in backbone.active_artifacts(collapsed=True)] == [
        "sentence@retrieval.passage"
    ]
    assert (backbone.expected_query_encodes(False), backbone.expected_query_encodes(True)) == (8, 4)


def test_artifacts_check_their_unit_and_view_and_list_their_texts():
    with pytest.raises(ValueError, match="unknown artifact unit 'word'"):
        Artifact("word", "retrieval.passage")
    with pytest.raises(UnknownNameError, match="unknown view"):
        Artifact("sentence", "retrieval.passages")
    docs = ["One. Two.", "Three."]
    sentences = Artifact("sentence", "retrieval.passage", max_length=64)
    assert sentences.key == ("retrieval.passage", None, 64)
    chunks = sentences.texts(docs)
    assert chunks.texts == ["One.", "Two.", "Three."]
    np.testing.assert_array_equal(chunks.owner, [0, 0, 1])
    whole = Artifact("document", "retrieval.query").texts(docs)
    assert whole.texts == docs and whole.owner.tolist() == [0, 1]
