import hashlib
import time

import numpy as np
import pytest

from embedding_ttc.analysis.stats import (
    BootstrapResult,
    benjamini_hochberg,
    cell_seed,
    paired_bootstrap,
    resampled_means,
)


def test_cell_seed_is_blake2b_of_the_parts_not_pythons_hash():
    expected = int.from_bytes(
        hashlib.blake2b(b"0\0enc\0task\0prog\0", digest_size=8).digest(), "little"
    )
    assert cell_seed(0, "enc", "task", "prog") == expected
    seeds = {
        cell_seed(0, "enc", "task", "prog"),
        cell_seed(1, "enc", "task", "prog"),
        cell_seed(0, "enc2", "task", "prog"),
        cell_seed(0, "enc", "task2", "prog"),
        cell_seed(0, "enc", "task", "prog2"),
        cell_seed(0, "enct", "ask", "prog"),  # the separator keeps the parts apart
    }
    assert len(seeds) == 6


def test_identical_positive_differences_collapse_the_interval():
    r = paired_bootstrap([0.25] * 7, resamples=999, seed=3)
    assert (r.ci_low, r.ci_high) == (0.25, 0.25)
    assert r.mean == pytest.approx(0.25)
    # No resampled mean reaches 0: p = 2 (1 + 0) / (999 + 1).
    assert r.p_value == pytest.approx(2 / 1000)
    assert r.significant_win and not r.significant_loss


def test_identical_negative_differences_are_a_significant_loss():
    r = paired_bootstrap([-0.1] * 4, resamples=99, seed=0)
    assert (r.ci_low, r.ci_high) == (-0.1, -0.1)
    assert r.p_value == pytest.approx(2 / 100)
    assert r.significant_loss and not r.significant_win


def test_all_ties_give_p_one_and_no_significance():
    r = paired_bootstrap([0.0] * 10, resamples=500, seed=1)
    assert (r.mean, r.ci_low, r.ci_high, r.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert not r.significant_win and not r.significant_loss


def test_two_queries_by_hand():
    # Resampling [0, 1] gives means 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4: a quarter of
    # the resamples sit at 0, on the "other side" of the observed mean 0.5, so p ~ 2 * 1/4,
    # and the 2.5th / 97.5th percentiles are 0 and 1: the CI touches 0, no significant win.
    r = paired_bootstrap([0.0, 1.0], resamples=10_000, seed=7)
    assert r.mean == 0.5
    assert r.p_value == pytest.approx(0.5, abs=0.03)
    assert (r.ci_low, r.ci_high) == (0.0, 1.0)
    assert not r.significant_win


def test_symmetric_differences_have_mean_zero_and_p_one():
    r = paired_bootstrap([1.0, -1.0, 0.5, -0.5], resamples=1000, seed=2)
    assert r.mean == 0.0
    assert r.p_value == 1.0
    assert r.ci_low < 0 < r.ci_high


def test_p_value_is_two_sided_and_capped():
    rng = np.random.default_rng(0)
    d = rng.normal(0.01, 0.2, size=200)
    up = paired_bootstrap(d, resamples=2000, seed=5)
    down = paired_bootstrap(-d, resamples=2000, seed=5)
    # Mirrored data with the same stream: the same p, mirrored interval.
    assert up.p_value == pytest.approx(down.p_value)
    assert (up.ci_low, up.ci_high) == pytest.approx((-down.ci_high, -down.ci_low))
    assert 0 < up.p_value <= 1


def test_reproducible_from_the_seed():
    d = np.random.default_rng(1).normal(0.02, 0.1, size=300)
    a = paired_bootstrap(d, resamples=3000, seed=11)
    b = paired_bootstrap(d, resamples=3000, seed=11)
    c = paired_bootstrap(d, resamples=3000, seed=12)
    assert a == b
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert isinstance(a, BootstrapResult) and a.seed == 11 and a.resamples == 3000


def test_resampled_means_match_a_direct_loop():
    d = np.array([0.0, 0.3, 1.0, -0.2])
    means = resampled_means(d, 5, np.random.default_rng(4))
    rng = np.random.default_rng(4)
    direct = d[rng.integers(0, 4, size=(5, 4))].mean(axis=1)
    np.testing.assert_allclose(means, direct)


def test_ten_thousand_resamples_of_1500_queries_are_fast():
    d = np.random.default_rng(0).normal(0.0, 0.1, size=1500)
    paired_bootstrap(d[:10], resamples=10, seed=0)  # warm up
    start = time.perf_counter()
    r = paired_bootstrap(d, resamples=10_000, seed=0)
    elapsed = time.perf_counter() - start
    assert r.resamples == 10_000
    # Well under a second on an idle core; the bound leaves room for a loaded CI machine.
    assert elapsed < 2.0, f"bootstrap took {elapsed:.2f} s"


@pytest.mark.parametrize(
    ("values", "resamples"),
    [([], 100), ([0.1, float("nan")], 100), ([0.1], 0)],
)
def test_bad_input_is_an_error(values, resamples):
    with pytest.raises(ValueError):
        paired_bootstrap(values, resamples=resamples)


def test_benjamini_hochberg_by_hand():
    # m = 4, sorted 0.01 0.03 0.04 0.2: m p / rank = 0.04 0.06 0.0533 0.2, then the running
    # minimum from the largest down; returned in the order given.
    adjusted = benjamini_hochberg([0.01, 0.04, 0.03, 0.2])
    assert adjusted == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.2])
    assert benjamini_hochberg([]) == []
    assert benjamini_hochberg([0.9, 0.8]) == pytest.approx([0.9, 0.9])
