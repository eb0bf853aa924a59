"""The plan of a transfer run: ordered cells, groups by (encoder, task), per-task settings."""

import pytest

from embedding_ttc.analysis.cells import BootstrapConfig, CellKey
from embedding_ttc.analysis.plan import QuerySample, ShortlistPolicy, group_jobs, plan

BOOT = BootstrapConfig(resamples=200, seed=0)


def test_plan_is_ordered_and_groups_by_encoder_and_task():
    p = plan(["e1", "e2"], ["t1", "t2"], ["P0", "X"])
    assert len(p) == 8
    assert list(p)[:3] == [
        CellKey("e1", "t1", "P0"),
        CellKey("e1", "t1", "X"),
        CellKey("e1", "t2", "P0"),
    ]
    both = p + plan(["e1"], ["t1", "t3"], ["X"])
    assert len(both) == 9 and list(both)[-1] == CellKey("e1", "t3", "X")
    jobs = group_jobs(both, BOOT)
    assert [(j.encoder, j.task, j.programs) for j in jobs] == [
        ("e1", "t1", ("P0", "X")),
        ("e1", "t2", ("P0", "X")),
        ("e2", "t1", ("P0", "X")),
        ("e2", "t2", ("P0", "X")),
        ("e1", "t3", ("X",)),
    ]


def test_shortlist_policy_parses_a_default_and_per_task_lengths():
    policy = ShortlistPolicy.parse(["medquad=100", "50", "a=b=7"])
    assert policy.k_for("medquad") == 100 and policy.k_for("scifact") == 50
    assert policy.k_for("a=b") == 7  # only the last '=' separates the length
    assert policy.describe() == {"*": 50, "medquad": 100, "a=b": 7}
    assert ShortlistPolicy().k_for("medquad") is None
    for bad, needle in (("medquad=", "integer"), ("=5", "name the task"), ("x=ten", "integer")):
        with pytest.raises(ValueError, match=needle):
            ShortlistPolicy.parse([bad])
    with pytest.raises(ValueError, match="--shortlist: a shortlist length is at least 1"):
        ShortlistPolicy.parse(["medquad=0"])
    with pytest.raises(ValueError, match="--sample-queries 'x=ten': expected N or TASK=N"):
        QuerySample.parse(["x=ten"])
