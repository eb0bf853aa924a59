"""The evaluation's records: typed schema versions (older ones refused), the summary row's
comparison."""

import json

import pytest
from pydantic import ValidationError

from embedding_ttc.evaluation.comparison import WTL, Comparison
from embedding_ttc.evaluation.evaluate import evaluate
from embedding_ttc.evaluation.records import (
    SUMMARY_SCHEMA_VERSION,
    TASK_RESULT_SCHEMA_VERSION,
    FailureRow,
    SummaryRow,
    TaskResult,
    summary_row,
)
from embedding_ttc.programs.p0 import P0

from fakes import HashingEncoder

# Records of older schemas, which are refused. A line of summary.jsonl written by
# `evaluate --suite smoke --program all --out` at schema 1.
SUMMARY_V1 = (
    '{"schema_version":1,"status":"ok","reason":"","encoder":"all-MiniLM-L6-v2",'
    '"task":"aila_statutes","program":"LexicalHybridRRF","ndcg_at_10":0.24699195146917488,'
    '"delta_ndcg_at_10":0.04524171928446355,"wins":23,"ties":14,"losses":13,'
    '"cost_ratio":10.325757575757576,"base_calls":132,"program_calls":1231,"index_calls":1313,'
    '"query_calls":50,"encode_seconds":0.04381962699972064,"forward_seconds":0.0,'
    '"algebra_seconds":0.46843787400030124,"total_seconds":0.5401732420000371}'
)


# A line of summary.jsonl and a result file of `evaluate --out`, as schema 2 and 1 wrote them
# (P0 on the tiny task with the hashing fake), before the extra measures and first-stage runs.
SUMMARY_V2 = (
    '{"schema_version":2,"status":"ok","reason":"","encoder":"enc","task":"tiny","program":"P0",'
    '"comparison":{"ndcg_at_10":0.9690759580327596,"baseline_ndcg_at_10":0.9690759580327596,'
    '"delta_ndcg_at_10":0.0,"wtl":{"wins":0,"ties":3,"losses":0}},"cost_ratio":1.0,'
    '"base_calls":8,"program_calls":0,"index_calls":5,"query_calls":3,'
    '"encode_seconds":0.001361956001346698,"forward_seconds":0.001361956001346698,'
    '"algebra_seconds":0.00001713200254016556,"total_seconds":0.0018342630028200801}'
)
TASK_RESULT_V1 = (
    '{"schema_version":1,"kind":"task_result","encoder":{"name":"fake-hashing","family":"fake",'
    '"model_id":"fake/hashing","revision":"seed=0","dim":32,"views":{"retrieval.query":"shared",'
    '"retrieval.passage":"shared","text-matching":"shared","classification":"shared"},'
    '"collapsed":true},"task":{"name":"tiny","n_docs":5,"n_queries":3,"pool":false,'
    '"source":"beir","warnings":[]},"program":"P0","program_version":1,"shortlist":null,'
    '"first_stage":null,"ndcg_at_10":0.9690759580327596,"per_query":{"q1":0.9072278740982787,'
    '"q2":1.0,"q3":1.0},"cost":{"texts":{"base/index/retrieval.passage":5,'
    '"base/query/retrieval.query":3},"base_calls":8,"program_calls":0,"index_calls":5,'
    '"query_calls":3,"cost_ratio":1.0,"query_time_cost_ratio":1.0},"timings":{'
    '"total_seconds":0.0018342630028200801,"encode_seconds":0.001361956001346698,'
    '"forward_seconds":0.001361956001346698,"program_seconds":0.00001713200254016556,'
    '"algebra_seconds":0.00001713200254016556,"scoring_seconds":0.00012894199971924536},'
    '"versions":{"python":"3.11.7","embedding-ttc":"0.1.0","numpy":"2.4.6"}}'
)


@pytest.mark.parametrize(
    ("model", "text", "what", "version"),
    [
        (TaskResult, TASK_RESULT_V1, "a task result", 1),
        (SummaryRow, SUMMARY_V1, "a summary row", 1),
        (SummaryRow, SUMMARY_V2, "a summary row", 2),
    ],
)
def test_a_record_of_an_older_schema_is_refused_naming_its_schema(model, text, what, version):
    with pytest.raises(ValidationError, match=f"{what} of schema {version} is not read"):
        model.model_validate_json(text)


def test_a_summary_row_needs_per_query_counts_and_a_known_version():
    body = {**json.loads(SUMMARY_V2), "schema_version": SUMMARY_SCHEMA_VERSION}
    assert SummaryRow.model_validate(body).comparison.wtl == WTL(wins=0, ties=3, losses=0)
    body["comparison"]["wtl"] = None
    with pytest.raises(ValidationError, match="per-query W/T/L"):
        SummaryRow.model_validate(body)
    body = {**json.loads(SUMMARY_V2), "schema_version": 4}
    with pytest.raises(ValidationError, match="schema 4 is not read"):
        SummaryRow.model_validate(body)
    current = json.loads(TASK_RESULT_V1) | {"schema_version": TASK_RESULT_SCHEMA_VERSION}
    assert TaskResult.model_validate(current).metrics == {}


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
