"""The structural proposer's wider space: min-max and candidate-local normalisations, the convex
fusion and its share, the candidate-local channels; and the genomes already written in
results/search, which must render to their files byte for byte."""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.program_files.program_file import read_program_file
from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.programs.output import check_output
from embedding_ttc.programs.primitives.scores import minmax_rows
from embedding_ttc.search.novelty import fingerprint, structure
from embedding_ttc.search.state import SearchState
from embedding_ttc.search.structural.catalogue import CHANNELS
from embedding_ttc.search.structural.genome import (
    BASE_GENOME,
    DEFAULT_SHARE,
    SHARES,
    Genome,
    genome_from_source,
)
from embedding_ttc.search.structural.mutate import _step_share, _toggle_local
from embedding_ttc.search.structural.normalise import RENDERER
from embedding_ttc.search.structural.proposer import StructuralProposer
from embedding_ttc.search.structural.render import render_program
from ledger_records import evaluated

from .structural_support import (
    CANDIDATES,
    P0_SOURCE,
    TASKS,
    p0_record,
    state_at,
    synthetic_task,
)
from fakes import HashingEncoder
from library_support import direct_call

RESULTS = Path(__file__).resolve().parents[2] / "results"
LOCAL = ("consensus", "anti_hub")
EVERY_NEW_GENE = Genome.make(
    {
        "dense": "local",
        "sent_maxsim": "local",
        "bm25": "minmax",
        "consensus": "row",
        "anti_hub": "minmax",
    },
    "convex",
    1,
    "vprf",
    0.3,
)


def namespace_of(genome: Genome, renderer: int | None = None) -> dict:
    namespace: dict = {}
    source = (
        render_program(genome) if renderer is None else render_program(genome, renderer=renderer)
    )
    exec(compile(source, f"<structural {genome.key()}>", "exec"), namespace)
    return namespace


# --- genome forms -------------------------------------------------------------------------


def test_convex_genome_forms_round_trip():
    genome = Genome.make({"bm25": "minmax", "dense": "local"}, "convex", 1, "vprf", 0.3)
    assert genome.key() == "dense:local+bm25:minmax|convex:0.3|1|vprf"
    assert Genome.from_key(genome.key()) == genome
    assert Genome.from_json(genome.to_json()) == genome
    assert genome_from_source(render_program(genome)) == genome
    assert '"share": 0.3' in genome.to_json()
    assert "FUSION_SHARE = 0.3\n" in render_program(genome)


def test_the_share_is_a_gene_of_the_convex_fusion_only():
    # Every other fusion ignores it: canonical, absent from the key and the JSON.
    rrf = Genome.make({"dense": "row", "bm25": "row"}, "rrf", 0, share=0.8)
    assert rrf == BASE_GENOME and rrf.share == DEFAULT_SHARE
    assert "share" not in rrf.to_json() and rrf.key() == "dense:row+bm25:row|rrf|0"
    for off_grid in (0.0, 1.0, 0.35, 0.1 * 3):
        with pytest.raises(ValueError, match="share"):
            Genome.make({"dense": "row", "bm25": "row"}, "convex", share=off_grid)
    with pytest.raises(ValueError):
        Genome.from_key("dense:row+bm25:row|convex:0.25|0")


def test_genomes_in_results_render_to_their_files():
    """The proposer continues from these files' genomes: they must render as they were written.

    Every committed structural program was written by renderer version 1.
    """
    checked = 0
    for path in sorted(RESULTS.glob("*/programs/*.py")):
        source = path.read_text(encoding="utf-8")
        genome = genome_from_source(source)
        if genome is None:
            continue  # the library's P0
        header = dict(re.findall(r"^(Novelty|Hypothesis|Parent): (.*)$", source, re.MULTILINE))
        parent = None if header["Parent"] == "none" else header["Parent"]
        rendered = render_program(
            genome,
            novelty=header["Novelty"],
            hypothesis=header["Hypothesis"],
            parent_id=parent,
            renderer=1,
        )
        assert rendered == source, str(path.relative_to(RESULTS))
        checked += 1
    assert checked >= 300


# --- normalisations, pinned by hand -------------------------------------------------------


@pytest.mark.parametrize(
    ("renderer", "name"), [(RENDERER, "minmax_rows"), (1, "_minmax_rows")], ids=["primitive", "v1"]
)
def test_minmax_maps_each_querys_candidates_onto_the_unit_interval(renderer, name):
    minmax = namespace_of(EVERY_NEW_GENE, renderer)[name]
    scores = np.array([[1.0, 3.0, 2.0, 9.0], [5.0, 5.0, 5.0, np.nan]], dtype=np.float32)
    mask = np.array([[True, True, True, False], [True, True, True, False]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a NaN non-candidate is never read
        out = minmax(scores, mask)
    # Row 0: candidates 1, 3, 2 span [1, 3]; the non-candidate 9 neither counts nor scores.
    # Row 1: no spread, so all 0 (as the z-scores treat a constant row).
    np.testing.assert_allclose(out, [[0.0, 1.0, 0.5, 0.0], [0.0, 0.0, 0.0, 0.0]])
    assert out.dtype == np.float32
    np.testing.assert_allclose(minmax(scores[:1], None), [[0.0, 0.25, 0.125, 1.0]])


def test_the_version_1_helper_and_the_primitive_agree_bit_for_bit():
    """Parity where the two paths merge: committed programs' helper and the primitive."""
    helper = namespace_of(EVERY_NEW_GENE, 1)["_minmax_rows"]
    assert "_minmax_rows" not in namespace_of(EVERY_NEW_GENE)
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(40, 60)).astype(np.float32)
    scores[3] = 0.5  # a row without spread
    for mask in (None, rng.random((40, 60)) < 0.3):
        np.testing.assert_array_equal(minmax_rows(scores, mask), helper(scores, mask))


def test_local_zscore_takes_its_statistics_from_the_dense_head_and_clips_the_tail():
    namespace = namespace_of(EVERY_NEW_GENE)
    assert namespace["LOCAL_K"] == 20
    namespace["LOCAL_K"] = 2  # a head of two, to work the numbers out by hand
    local = namespace["_local_zscore"]
    dense = np.array([[0.9, 0.8, 0.1, 0.0, 0.5]], dtype=np.float32)
    scores = np.array([[4.0, 2.0, 10.0, -10.0, 3.0]], dtype=np.float32)
    # Head = documents 0 and 1 (the dense top 2): mean 3, deviation 1, z = 1 and -1. The tail's
    # z-scores 7, -13 and 0 are clipped to the head's range [-1, 1].
    np.testing.assert_allclose(local(scores, dense, None), [[1.0, -1.0, 1.0, -1.0, 0.0]])
    # Document 2 is no candidate: 0, and the head is unchanged.
    mask = np.array([[True, True, False, True, True]])
    np.testing.assert_allclose(local(scores, dense, mask), [[1.0, -1.0, 0.0, -1.0, 0.0]])
    # Without document 1 the head is 0 and 4 (mean 3.5, deviation 0.5).
    mask = np.array([[True, False, True, True, True]])
    np.testing.assert_allclose(local(scores, dense, mask), [[1.0, 0.0, 1.0, -1.0, -1.0]])
    # A head without spread gives 0 everywhere, whatever the tail holds.
    flat = np.array([[2.0, 2.0, 10.0, -10.0, 3.0]], dtype=np.float32)
    np.testing.assert_allclose(local(flat, dense, None), np.zeros((1, 5)))


# --- candidate-local channels -------------------------------------------------------------


def expected_local_channels(S, D, candidates, consensus_k):
    """Consensus and anti-hub, computed here from their definitions, one query at a time."""
    n_q, n_d = S.shape
    out = np.zeros((n_q, n_d))
    for i in range(n_q):
        cand = np.arange(n_d) if candidates is None else np.sort(candidates[i])
        head = sorted(cand, key=lambda j: (-S[i, j], j))[:consensus_k]
        head_centre = D[head].mean(axis=0)
        pool_centre = D[cand].mean(axis=0)
        consensus = D @ (head_centre / np.linalg.norm(head_centre))
        anti_hub = -(D @ (pool_centre / np.linalg.norm(pool_centre)))
        out[i, cand] = 0.5 * consensus[cand] + 0.5 * anti_hub[cand]
    return out


@pytest.mark.parametrize("candidates", [None, CANDIDATES])
def test_local_channels_match_their_definitions_and_encode_nothing(candidates):
    genome = Genome.make({"consensus": "none", "anti_hub": "none"}, "convex", share=0.5)
    namespace = namespace_of(genome)
    namespace["CONSENSUS_K"] = 2  # fewer than the candidates, so the head is a true subset
    Q, D, S, ctx, meter = direct_call(synthetic_task(), HashingEncoder(dim=32), candidates)
    out = namespace["program"](Q, D, S, ctx)
    expected = expected_local_channels(S, D, candidates, 2)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    assert meter.snapshot().total() == 0  # no encode at query time, nor at index time
    assert {CHANNELS[c].family for c in LOCAL} == {"local"}


# --- programs run, contained ----------------------------------------------------------------


@pytest.mark.parametrize("candidates", [None, CANDIDATES])
def test_every_new_gene_runs_in_the_sandbox_as_in_process(tmp_path, candidates):
    path = tmp_path / "every_new_gene.py"
    path.write_text(render_program(EVERY_NEW_GENE), encoding="utf-8")
    limits = SandboxLimits(wall_seconds=60.0, memory_bytes=2 * 2**30)
    program = read_program_file(path, task_names=["structural-synthetic"]).sandboxed(limits)
    Q, D, S, ctx, _meter = direct_call(
        synthetic_task(), HashingEncoder(dim=32, two_views=True), candidates
    )
    contained = check_output(program(Q, D, S, ctx), S.shape, program.name)
    in_process = namespace_of(EVERY_NEW_GENE)["program"](Q, D, S, ctx)
    np.testing.assert_array_equal(contained, in_process)
    assert contained.dtype == np.float32 and np.ptp(contained) > 0


# --- mutations and proposals ------------------------------------------------------------------


def test_a_share_step_moves_one_grid_step():
    assert _step_share(BASE_GENOME, random.Random(0)) is None  # no convex fusion, no share
    rng = random.Random(3)
    for share in SHARES:
        genome = Genome.make({"dense": "row", "bm25": "minmax"}, "convex", share=share)
        for _ in range(4):
            result = _step_share(genome, rng)
            assert result is not None
            moved, change = result
            assert abs(SHARES.index(moved.share) - SHARES.index(share)) == 1
            assert moved.channels == genome.channels and str(moved.share) in change


def test_toggling_a_local_channel_adds_it_or_drops_it():
    rng = random.Random(0)
    for _ in range(6):
        result = _toggle_local(BASE_GENOME, rng)
        assert result is not None
        added = set(result[0].names) - set(BASE_GENOME.names)
        assert len(added) == 1 and added <= set(LOCAL) and result[1].startswith("adds ")
    both = Genome.make({"dense": "row", "consensus": "row", "anti_hub": "local"})
    for _ in range(6):
        result = _toggle_local(both, rng)
        assert result is not None
        assert len(result[0].names) == 2 and result[1].startswith("drops ")


def state_after(genome: Genome) -> SearchState:
    """Generation 2 of a search whose one evaluated proposal (the frontier's best) is ``genome``."""
    novelty = f"A pinned parent [genome {genome.key()}]."
    source = render_program(genome, novelty=novelty, hypothesis="Pinned.", parent_id="g0000-P0")
    parent = evaluated(
        1,
        "g0001",
        dict.fromkeys(TASKS, 0.01),
        parent_id="g0000-P0",
        cost_ratio=1.5,
        novelty=novelty,
        hypothesis="Pinned.",
        proposer="structural",
        fingerprint=fingerprint(structure(source)),
    )
    return state_at(2, [p0_record(), parent], {"g0000-P0": P0_SOURCE, "g0001": source})


def genes_of(source: str) -> set[str]:
    """The new genes a proposal carries; ``share step`` when it moved a convex fusion's share."""
    genome = genome_from_source(source)
    assert genome is not None
    genes = {norm for _, norm in genome.channels} | set(genome.names) | {genome.fusion}
    novelty = source.split("Novelty:", 1)[1].split("\n", 1)[0]
    if "moves the share" in novelty and genome.fusion == "convex":
        genes.add("share step")
    return genes & {"minmax", "local", "convex", "share step", *LOCAL}


SEEDS_FROM_BASE = 60
SEEDS_FROM_CONVEX = 30


def test_seeded_proposals_reach_every_new_gene():
    """From the base genome, within a bounded number of seeds; each reproduced from its seed.

    A proposal mutates its parent once, or a few times until the result is new. A share step
    needs a convex parent, and lands only beside a structural change (alone it changes a
    constant, a duplicate under constraint 5): it is looked for one generation later, after
    the base genome switched to the convex fusion.
    """
    convex = Genome.make(dict(BASE_GENOME.channels), "convex", share=0.5)
    first: dict[str, tuple[SearchState, int, str]] = {}
    for state, seeds in (
        (state_after(BASE_GENOME), SEEDS_FROM_BASE),
        (state_after(convex), SEEDS_FROM_CONVEX),
    ):
        for seed in range(seeds):
            source = StructuralProposer(seed=seed).propose(state).source
            assert source is not None
            for gene in genes_of(source):
                first.setdefault(gene, (state, seed, source))
    assert first.keys() == {"minmax", "local", "convex", "share step", *LOCAL}
    for state, seed, source in first.values():
        assert StructuralProposer(seed=seed).propose(state).source == source
