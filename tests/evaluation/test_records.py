"""The evaluation's records: typed schema versions, the summary row's comparison, schema 1 read."""

import json

import pytest
from pydantic import ValidationError

from embedding_ttc.evaluation.comparison import WTL, Comparison
from embedding_ttc.evaluation.evaluate import evaluate
from embedding_ttc.evaluation.records import (
    SUMMARY_SCHEMA_VERSION,
    FailureRow,
    SummaryRow,
    summary_row,
)
from embedding_ttc.programs.p0 import P0

from fakes import HashingEncoder

# A line of summary.jsonl written by `evaluate --suite smoke --program all --out` at schema 1.
SUMMARY_V1 = (
    '{"schema_version":1,"status":"ok","reason":"","encoder":"all-MiniLM-L6-v2",'
    '"task":"aila_statutes","program":"LexicalHybridRRF","ndcg_at_10":0.24699195146917488,'
    '"delta_ndcg_at_10":0.04524171928446355,"wins":23,"ties":14,"losses":13,'
    '"cost_ratio":10.325757575757576,"base_calls":132,"program_calls":1231,"index_calls":1313,'
    '"query_calls":50,"encode_seconds":0.04381962699972064,"forward_seconds":0.0,'
    '"algebra_seconds":0.46843787400030124,"total_seconds":0.5401732420000371}'
)


def test_a_schema_1_summary_row_is_read_into_the_current_shape():
    row = SummaryRow.model_validate_json(SUMMARY_V1)
    assert row.schema_version == SUMMARY_SCHEMA_VERSION == 2
    assert row.comparison.ndcg_at_10 == 0.24699195146917488
    assert row.comparison.delta_ndcg_at_10 == 0.04524171928446355
    assert row.comparison.baseline_ndcg_at_10 == pytest.approx(0.20175023218471133, abs=1e-15)
    assert row.comparison.wtl == WTL(wins=23, ties=14, losses=13)
    assert (row.program, row.cost_ratio, row.index_calls) == (
        "LexicalHybridRRF",
        10.325757575757576,
        1313,
    )
    again = json.loads(row.model_dump_json())
    assert again["schema_version"] == 2 and "wins" not in again
    assert SummaryRow.model_validate(again) == row


def test_a_summary_row_needs_per_query_counts_and_a_known_version():
    body = SummaryRow.model_validate_json(SUMMARY_V1).model_dump()
    body["comparison"]["wtl"] = None
    with pytest.raises(ValidationError, match="per-query W/T/L"):
        SummaryRow.model_validate(body)
    body = {**json.loads(SUMMARY_V1), "schema_version": 3}
    with pytest.raises(ValidationError, match="schema_version"):
        SummaryRow.model_validate(body)


def test_a_summary_row_of_schema_1_without_counts_is_refused():
    body = json.loads(SUMMARY_V1)
    for key in ("wins", "ties", "losses"):
        body.pop(key)
    with pytest.raises(ValidationError, match="per-query W/T/L"):
        SummaryRow.model_validate(body)


def test_versions_are_typed_literals():
    row = FailureRow(encoder="e", task="t", program="p", status="timeout", reason="slow")
    assert row.schema_version == 1
    with pytest.raises(ValidationError):
        FailureRow(
            schema_version=2, encoder="e", task="t", program="p", status="timeout", reason="x"
        )
    cmp = Comparison(
        ndcg_at_10=0.5,
        baseline_ndcg_at_10=0.5,
        delta_ndcg_at_10=0.0,
        wtl=WTL(wins=0, ties=1, losses=0),
    )
    with pytest.raises(ValidationError):
        SummaryRow.model_validate(
            {
                "schema_version": 1.5,
                "encoder": "e",
                "task": "t",
                "program": "p",
                "comparison": cmp.model_dump(),
            }
        )


def test_a_summary_row_embeds_the_comparison_and_copies_cost_and_timings(tiny_task):
    p0 = evaluate(P0(), tiny_task, HashingEncoder())
    row = summary_row("enc", "tiny", p0, p0)
    assert (row.encoder, row.task, row.program) == ("enc", "tiny", "P0")
    assert row.comparison.wtl == WTL(wins=0, ties=len(p0.per_query), losses=0)
    assert row.comparison.ndcg_at_10 == row.comparison.baseline_ndcg_at_10 == p0.ndcg_at_10
    assert (row.cost_ratio, row.index_calls) == (p0.cost.cost_ratio, p0.cost.index_calls)
    assert row.total_seconds == p0.timings.total_seconds
