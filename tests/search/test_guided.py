"""The guided structural proposer: the JSON schema of a genome's edits, and a generation.

The schema is checked exhaustively (every value it admits is an applicable edit that changes
the genome) and compiled by llama.cpp's own JSON-schema-to-grammar converter; the proposer
talks to the canned OpenAI-compatible server, so the request carries the schema as a real
client sends it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import random
from typing import Any

import jsonschema
import pytest

from embedding_ttc.programs.outcome import Status
from embedding_ttc.search.backends.anthropic_chat import AnthropicBackend
from embedding_ttc.search.backends.openai_chat import OpenAIBackend
from embedding_ttc.search.state import FrontierProgram, SearchState
from embedding_ttc.search.strategies.base import StrategyError
from embedding_ttc.search.strategies.guided import GuidedOptions
from embedding_ttc.search.strategies.guided.proposer import GuidedStructuralProposer, sample_offers
from embedding_ttc.search.structural.catalogue import CHANNELS
from embedding_ttc.search.structural.edits import (
    GenomeEditError,
    apply_edit,
    apply_share,
    edit_schema,
    possible_edits,
)
from embedding_ttc.search.structural.genome import (
    BASE_GENOME,
    SHARES,
    Genome,
    genome_from_source,
)
from embedding_ttc.search.structural.known import is_new, known_programs, new_edits
from embedding_ttc.search.structural.render import render_program
from ledger_records import evaluated

from .canned_server import CannedServer, Reply

TASKS = ("alpha", "beta")
RICH = Genome.make({"dense": "row", "bm25": "col", "consensus": "local"}, "convex", 1, "vprf", 0.3)


def _instances(option: dict[str, Any]) -> list[dict[str, Any]]:
    props = option["properties"]
    keys = list(props)
    values = [[p["const"]] if "const" in p else p["enum"] for p in props.values()]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


@pytest.mark.parametrize("genome", [BASE_GENOME, RICH], ids=["base", "rich"])
def test_every_edit_the_schema_admits_applies_and_changes_the_genome(genome):
    schema = edit_schema(genome)
    jsonschema.Draft202012Validator.check_schema(schema)
    edits = [e for option in schema["properties"]["edit"]["anyOf"] for e in _instances(option)]
    assert len(edits) > 50
    results = set()
    for edit in edits:
        jsonschema.validate({"hypothesis": "h", "edit": edit}, schema)
        changed, label = apply_edit(genome, edit)
        assert changed != genome and label
        results.add(changed)
    assert len(results) == len(edits)  # no two admitted edits are the same change
    assert sorted(map(json.dumps, edits)) == sorted(map(json.dumps, possible_edits(genome)))


def test_a_schema_of_some_edits_admits_those_and_no_other():
    every = possible_edits(RICH)
    kept = every[::3]
    schema = edit_schema(RICH, edits=kept)
    jsonschema.Draft202012Validator.check_schema(schema)
    admitted = [e for option in schema["properties"]["edit"]["anyOf"] for e in _instances(option)]
    assert sorted(map(json.dumps, admitted)) == sorted(map(json.dumps, kept))
    for edit in every:
        reply = {"hypothesis": "h", "edit": edit}
        if edit in kept:
            jsonschema.validate(reply, schema)
        else:
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(reply, schema)
    with pytest.raises(ValueError, match="no edit to offer"):
        edit_schema(RICH, edits=[])


def test_edits_the_genome_does_not_allow_are_refused_by_schema_and_apply():
    schema = edit_schema(BASE_GENOME)  # dense + bm25, no round
    for bad in (
        {"op": "drop_channel", "channel": "dense"},  # two channels is the least
        {"op": "drop_round"},
        {"op": "add_channel", "channel": "bm25", "normalisation": "row"},  # has it already
        {"op": "change_normalisation", "channel": "bm25", "normalisation": "row"},  # is row
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"hypothesis": "h", "edit": bad}, schema)
        with pytest.raises(GenomeEditError):
            apply_edit(BASE_GENOME, bad)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="no llama-cpp-python")
def test_llama_cpp_compiles_the_schema_into_a_grammar():
    from llama_cpp.llama_grammar import LlamaGrammar

    for genome in (BASE_GENOME, RICH):
        grammar = LlamaGrammar.from_json_schema(json.dumps(edit_schema(genome)), verbose=False)
        assert "change_normalisation" in grammar._grammar
        # The model writes the edit first and then its reason, so the reason is about the
        # edit the grammar let through.
        root = next(line for line in grammar._grammar.splitlines() if line.startswith("root "))
        assert root.index("edit-kv") < root.index("hypothesis-kv")
    shared = LlamaGrammar.from_json_schema(json.dumps(edit_schema(RICH, share=True)), verbose=False)
    root = next(line for line in shared._grammar.splitlines() if line.startswith("root "))
    assert root.index("edit-kv") < root.index("share-kv") < root.index("hypothesis-kv")
    assert 'share ::= "0.1" | "0.2"' in shared._grammar


# --- the proposer ------------------------------------------------------------------------------


@pytest.fixture()
def server():
    with CannedServer() as canned:
        yield canned


def backend(server: CannedServer) -> OpenAIBackend:
    return OpenAIBackend(model="canned", base_url=server.openai_base_url, max_retries=0, timeout=10)


def _state(generation: int = 3) -> SearchState:
    p0 = evaluated(0, "g0000-P0", dict.fromkeys(TASKS, 0.0), novelty="the cosine baseline")
    base_novelty = f"Fuses the dense cosine S and BM25 [genome {BASE_GENOME.key()}]."
    g1 = evaluated(1, "g0001", {"alpha": 0.03, "beta": -0.01}, parent_id="g0000-P0",
                   novelty=base_novelty, hypothesis="lexical evidence helps")  # fmt: skip
    g1 = g1.model_copy(update={"lesson": "g0001 from g0000-P0: fuses BM25; up alpha +0.030"})
    source = render_program(BASE_GENOME, novelty=base_novelty, parent_id="g0000-P0")
    return SearchState(
        generation=generation,
        history=(p0, g1),
        frontier=(FrontierProgram(g1, source),),
        tasks=TASKS,
        seed=3,
    )


def _reply(edit: dict[str, Any], hypothesis: str = "consensus with the top-K is robust") -> str:
    return json.dumps({"hypothesis": hypothesis, "edit": edit})


def _with_tried(state: SearchState, *genomes: Genome) -> SearchState:
    """``state`` with one more evaluated record whose claim tags ``genomes`` as tried."""
    tags = " ".join(f"[genome {g.key()}]" for g in genomes)
    tried = evaluated(2, "g0002", dict.fromkeys(TASKS, 0.0), parent_id="g0001", novelty=tags)
    return dataclasses.replace(state, history=(*state.history, tried))


def test_a_chosen_edit_is_rendered_as_a_program_with_its_genome(server):
    edit = {"op": "add_channel", "channel": "consensus", "normalisation": "local"}
    server.enqueue(Reply(_reply(edit), 900, 40))
    proposer = GuidedStructuralProposer(backend(server), explore=0.0, check_library=False)
    bigram = Genome.make({"dense": "row", "bm25": "row", "bigram": "row"}, "rrf", 0)
    state = _with_tried(_state(), bigram)
    proposal = proposer.propose(state)
    want = Genome.make({"dense": "row", "bm25": "row", "consensus": "local"}, "rrf", 0)
    assert proposal.source is not None and genome_from_source(proposal.source) == want
    assert proposal.parent_id == "g0001" and proposal.proposer == "guided:openai"
    assert proposal.novelty.startswith("Relative to g0001, adds")
    assert f"[genome {want.key()}]" in proposal.novelty
    assert proposal.hypothesis == "consensus with the top-K is robust"
    assert proposal.attempts == () and proposal.usage.tokens_in == 900
    (request,) = server.requests
    sent = request.body["response_format"]
    assert sent["type"] == "json_schema"
    # Offered: the edits whose result is new; the tried genome, and those too close to it
    # in structure, are not.
    known = known_programs(state)
    offered = new_edits(BASE_GENOME, list(CHANNELS), known)
    every = possible_edits(BASE_GENOME)
    assert 0 < len(offered) < len(every)
    assert {"op": "add_channel", "channel": "bigram", "normalisation": "row"} not in offered
    assert edit in offered
    for e in every:
        assert (e in offered) == is_new(apply_edit(BASE_GENOME, e)[0], known)
    assert sent["json_schema"]["schema"] == edit_schema(BASE_GENOME, edits=offered)
    with pytest.raises(jsonschema.ValidationError):
        repeat = {"op": "add_channel", "channel": "bigram", "normalisation": "row"}
        jsonschema.validate({"hypothesis": "h", "edit": repeat}, sent["json_schema"]["schema"])
    prompt = server.prompts[0]
    assert prompt is not None and f"not offered ({len(offered)} remain open)" in prompt
    assert prompt is not None and "up alpha +0.030" in prompt  # the lineage's lesson
    assert "| alpha | +0.0300 | +0.0000 | +0.0300 |" in prompt  # results against its parent
    assert "- consensus:" in prompt and "- bm25:" in prompt  # the catalogue and the genome


def test_a_sample_of_offers_holds_each_kind_of_edit_and_is_seeded():
    every = possible_edits(RICH)
    kinds = {e["op"] for e in every}
    assert len(kinds) == 8 and len(every) > 50
    sample = sample_offers(every, 8, random.Random(1))
    assert len(sample) == 8 and {e["op"] for e in sample} == kinds  # one of each kind
    assert sample == [e for e in every if e in sample]  # in the schema's order
    assert sample == sample_offers(every, 8, random.Random(1))
    assert any(sample_offers(every, 8, random.Random(s)) != sample for s in range(2, 6))
    more = sample_offers(every, 20, random.Random(1))
    assert len(more) == 20 and len({json.dumps(e) for e in more}) == 20
    assert sample_offers(every[:5], 8, random.Random(1)) == every[:5]
    assert sample_offers(every, 0, random.Random(1)) == every


def test_offers_send_a_schema_of_the_sample_and_list_it_in_the_prompt(server):
    state = _state()
    open_edits = new_edits(BASE_GENOME, list(CHANNELS), known_programs(state))
    want = sample_offers(open_edits, 6, random.Random(f"offers:3:{state.generation}"))
    server.enqueue(Reply(_reply(want[-1])))
    proposer = GuidedStructuralProposer(
        backend(server), explore=0.0, check_library=False, seed=3, offers=6
    )
    proposal = proposer.propose(state)
    (request,) = server.requests
    sent = request.body["response_format"]["json_schema"]["schema"]
    assert sent == edit_schema(BASE_GENOME, edits=want)
    for edit in open_edits:
        reply = {"hypothesis": "h", "edit": edit}
        if edit in want:
            jsonschema.validate(reply, sent)
        else:
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(reply, sent)
    prompt = server.prompts[0]
    assert prompt is not None and "Choose one of the 6 edits on offer" in prompt
    menu = prompt.split("## The edits on offer", 1)[1].split("##", 1)[0]
    for edit in want:
        assert f"- {json.dumps(edit)}: {apply_edit(BASE_GENOME, edit)[1]}" in menu
    assert genome_from_source(proposal.source or "") == apply_edit(BASE_GENOME, want[-1])[0]
    with pytest.raises(StrategyError, match="offers must be at least 0, not -1"):
        GuidedOptions(offers=-1)  # the options record checks the range, once


def test_an_unusable_reply_gets_a_repair_turn_then_the_structural_change(server):
    server.enqueue(Reply("I think BM25 is great"), Reply(_reply({"op": "drop_round"})))
    proposer = GuidedStructuralProposer(backend(server), explore=0.0, check_library=False)
    proposal = proposer.propose(_state())
    assert [a.status for a in proposal.attempts] == [Status.REJECTED, Status.REJECTED]
    assert proposal.attempts[0].reason == "choice: the reply is not JSON"
    assert "drop_round" in proposal.attempts[1].reason
    assert "(the model's choice was unusable: choice: the edit 'drop_round'" in proposal.novelty
    genome = genome_from_source(proposal.source or "")
    assert genome is not None and genome != BASE_GENOME
    repair = server.requests[1].body["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]


def test_a_choice_that_repeats_a_known_program_is_stacked_until_new(server):
    # The canned server does not enforce the schema: a reply may still choose a repeat.
    known = Genome.make({"dense": "row", "bm25": "row", "bigram": "row"}, "rrf", 0)
    state = _with_tried(_state(), known)
    server.enqueue(
        Reply(_reply({"op": "add_channel", "channel": "bigram", "normalisation": "row"}))
    )
    proposal = GuidedStructuralProposer(backend(server), explore=0.0, check_library=False).propose(
        state
    )
    genome = genome_from_source(proposal.source or "")
    assert genome is not None and genome not in (known, BASE_GENOME)
    assert proposal.novelty.startswith("Relative to g0001, adds")
    assert "(the chosen change alone repeats a known program)" in proposal.novelty


def test_a_parent_with_no_new_single_edit_gets_random_changes_without_a_call(server):
    every = [apply_edit(BASE_GENOME, e)[0] for e in possible_edits(BASE_GENOME)]
    state = _with_tried(_state(), *every)
    proposer = GuidedStructuralProposer(backend(server), explore=0.0, check_library=False)
    proposal = proposer.propose(state)
    assert server.requests == []
    genome = genome_from_source(proposal.source or "")
    assert genome is not None and genome not in (*every, BASE_GENOME)
    assert "(no single edit of g0001 is new)" in proposal.novelty
    assert proposal.attempts == ()


def test_the_first_generation_is_the_base_genome_without_a_call(server):
    p0 = evaluated(0, "g0000-P0", dict.fromkeys(TASKS, 0.0))
    state = SearchState(generation=1, history=(p0,), frontier=(), tasks=TASKS)
    proposal = GuidedStructuralProposer(backend(server), check_library=False).propose(state)
    assert genome_from_source(proposal.source or "") == BASE_GENOME
    assert server.requests == [] and proposal.parent_id == "g0000-P0"


def test_a_backend_that_cannot_constrain_json_is_refused(server):
    with pytest.raises(ValueError, match="cannot constrain a reply to a JSON schema"):
        GuidedStructuralProposer(AnthropicBackend(base_url=server.url, max_retries=0))


def test_view_channels_are_not_offered_when_the_views_collapse(server):
    from embedding_ttc.search.structural.edits import offered_channels

    offered = offered_channels(views_collapsed=True)
    assert "reverse" not in offered and "xview" not in offered and "bm25" in offered
    assert offered_channels(views_collapsed=False) == list(CHANNELS)
    schema = edit_schema(BASE_GENOME, offered)
    with pytest.raises(jsonschema.ValidationError):
        edit = {"op": "add_channel", "channel": "reverse", "normalisation": "row"}
        jsonschema.validate({"hypothesis": "h", "edit": edit}, schema)
    edit = {"op": "add_channel", "channel": "consensus", "normalisation": "local"}
    server.enqueue(Reply(_reply(edit)))
    state = dataclasses.replace(_state(), views_collapsed=True)
    GuidedStructuralProposer(backend(server), explore=0.0, check_library=False).propose(state)
    (request,) = server.requests
    open_edits = new_edits(BASE_GENOME, offered, known_programs(state))
    sent = request.body["response_format"]["json_schema"]["schema"]
    assert sent == edit_schema(BASE_GENOME, offered, edits=open_edits)
    with pytest.raises(jsonschema.ValidationError):
        edit = {"op": "add_channel", "channel": "reverse", "normalisation": "row"}
        jsonschema.validate({"hypothesis": "h", "edit": edit}, sent)
    prompt = server.prompts[0]
    assert prompt is not None and "- reverse:" not in prompt and "none is offered" in prompt


def _catalogue_order(prompt: str) -> list[str]:
    section = prompt.split("Channels it lacks", 1)[1].split("Normalisations:", 1)[0]
    return [line[2:].split(":", 1)[0] for line in section.splitlines() if line.startswith("- ")]


def test_the_catalogue_order_is_seeded_per_generation():
    from embedding_ttc.search.strategies.guided.prompt import render_guided_prompt

    state = _state()
    record = state.history[1]
    offered = list(CHANNELS)

    def order(seed: int | None) -> list[str]:
        return _catalogue_order(render_guided_prompt(state, record, BASE_GENOME, offered,
                                                     order_seed=seed))  # fmt: skip

    registry = [c for c in CHANNELS if c not in BASE_GENOME.names]
    assert order(None) == registry
    assert order(7) == order(7) and sorted(order(7)) == sorted(registry)
    assert len({tuple(order(seed)) for seed in range(6)}) > 1


def test_a_kept_channel_is_never_dropped_or_swapped_out_by_schema_or_apply():
    keep = ("dense",)
    every = possible_edits(RICH)
    anchored = possible_edits(RICH, keep=keep)
    moves = {"drop_channel", "swap_channel"}
    removed = [e for e in every if e not in anchored]
    assert removed and all(e["op"] in moves and e["channel"] == "dense" for e in removed)
    assert any(e["op"] in moves and e["channel"] == "bm25" for e in anchored)
    assert {"op": "change_normalisation", "channel": "dense", "normalisation": "col"} in anchored
    schema = edit_schema(RICH, keep=keep)
    for bad in ({"op": "drop_channel", "channel": "dense"},
                {"op": "swap_channel", "channel": "dense", "new_channel": "bigram"}):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"hypothesis": "h", "edit": bad}, schema)
        with pytest.raises(GenomeEditError, match="keeps 'dense' in every program"):
            apply_edit(RICH, bad, keep)
        assert apply_edit(RICH, bad)[0] != RICH  # allowed without the anchor


def test_an_anchored_proposer_repairs_a_reply_dropping_the_kept_channel(server):
    # A server that does not enforce the schema lets a forbidden edit through: the reply is
    # refused, repaired, and the program written keeps the channel.
    server.enqueue(
        Reply(_reply({"op": "swap_channel", "channel": "dense", "new_channel": "bigram"}))
    )
    server.enqueue(
        Reply(_reply({"op": "swap_channel", "channel": "bm25", "new_channel": "bigram"}))
    )
    proposer = GuidedStructuralProposer(
        backend(server), explore=0.0, check_library=False, keep=("dense",)
    )
    proposal = proposer.propose(_state())
    assert proposal.source is not None
    genome = genome_from_source(proposal.source)
    assert genome is not None and "dense" in genome.names and "bigram" in genome.names
    assert "bm25" not in genome.names
    (refused,) = proposal.attempts
    assert refused.status is Status.REJECTED and "keeps 'dense'" in refused.reason
    assert "it always keeps dense" in (server.prompts[0] or "")
    sent = server.requests[0].body["response_format"]["json_schema"]["schema"]
    assert all(o["properties"]["channel"].get("const") != "dense"
               for o in sent["properties"]["edit"]["anyOf"]
               if o["properties"]["op"]["const"] in ("drop_channel", "swap_channel"))  # fmt: skip
    with pytest.raises(ValueError, match="cannot keep 'S': not a channel"):
        GuidedStructuralProposer(backend(server), keep=("S",))


def test_a_parent_whose_single_edits_are_spent_passes_to_the_next_open_parent(server):
    every = [apply_edit(BASE_GENOME, e)[0] for e in possible_edits(BASE_GENOME)]
    state = _with_tried(_state(), *every)  # g0001's every single edit is tried (g0002)
    novelty = f"Relative to g0001, adds consensus [genome {RICH.key()}]."
    rich = evaluated(3, "g0003", {"alpha": 0.02, "beta": 0.0}, parent_id="g0001",
                     novelty=novelty)  # fmt: skip
    sources = {"g0001": state.frontier[0].source,
               "g0003": render_program(RICH, novelty=novelty, parent_id="g0001")}  # fmt: skip
    state = dataclasses.replace(
        state,
        generation=4,
        history=(*state.history, rich),
        read_source=lambda record: sources.get(record.program_id),
    )
    edit = {"op": "add_channel", "channel": "bigram", "normalisation": "row"}
    server.enqueue(Reply(_reply(edit)))
    proposer = GuidedStructuralProposer(backend(server), explore=0.0, check_library=False)
    proposal = proposer.propose(state)
    assert len(server.requests) == 1 and proposal.parent_id == "g0003"
    assert "g0003" in (server.prompts[0] or "")
    genome = genome_from_source(proposal.source or "")
    assert genome == apply_edit(RICH, edit)[0]
    assert "(every single edit of g0001 is tried; the next open parent)" in proposal.novelty
    # With no other program to pass to, the spent parent gets random changes, no call.
    alone = dataclasses.replace(state, history=state.history[:-1])
    fallback = GuidedStructuralProposer(backend(server), explore=0.0, check_library=False)
    assert "(no single edit of g0001 is new)" in fallback.propose(alone).novelty
    assert len(server.requests) == 1


# --- the convex share beside the edit (--guided-share) ------------------------------------------


def test_the_share_schema_asks_for_a_share_on_the_grid_between_edit_and_hypothesis():
    schema = edit_schema(RICH, share=True)
    assert list(schema["properties"]) == ["edit", "share", "hypothesis"]
    assert schema["required"] == ["edit", "share", "hypothesis"]
    assert schema["properties"]["share"] == {"enum": list(SHARES)}
    edit = {"op": "drop_round"}
    jsonschema.validate({"edit": edit, "share": 0.8, "hypothesis": "h"}, schema)
    no_share = {"edit": edit, "hypothesis": "h"}
    for bad in (no_share, {**no_share, "share": 0.85}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    assert "share" not in edit_schema(RICH)["properties"]  # runs recorded before: no share


def test_a_share_moves_a_convex_fusion_only_and_off_the_grid_is_refused():
    moved, words = apply_share(RICH, 0.8)
    assert moved.share == 0.8 and moved.channels == RICH.channels and moved.rounds == RICH.rounds
    assert words == "moves the share of the channels after the first from 0.3 to 0.8"
    assert apply_share(RICH, 0.3) == (RICH, "")  # the share it has
    assert BASE_GENOME.fusion != "convex" and apply_share(BASE_GENOME, 0.8) == (BASE_GENOME, "")
    for bad in (0.85, 1, True, "0.8", None):
        with pytest.raises(GenomeEditError, match="share must be one of"):
            apply_share(RICH, bad)


def test_a_guided_share_reply_sets_the_share_of_the_convex_program_it_makes(server):
    convex = {"op": "change_fusion", "fusion": "convex"}
    server.enqueue(Reply(json.dumps({"edit": convex, "share": 0.8, "hypothesis": "BM25 first"})))
    proposer = GuidedStructuralProposer(backend(server), explore=0.0, check_library=False,
                                        share=True)  # fmt: skip
    proposal = proposer.propose(_state())
    genome = genome_from_source(proposal.source or "")
    assert genome is not None and genome.fusion == "convex" and genome.share == 0.8
    assert "moves the share of the channels after the first from 0.5 to 0.8" in proposal.novelty
    prompt = server.prompts[0] or ""
    assert '"share": <one of 0.1, 0.2' in prompt and "it fuses otherwise now" in prompt
    sent = server.requests[0].body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["share"] == {"enum": list(SHARES)}


def test_a_guided_share_reply_without_a_share_gets_a_repair_turn(server):
    edit = {"op": "add_channel", "channel": "bigram", "normalisation": "row"}
    server.enqueue(Reply(_reply(edit)))  # no share: a server that does not enforce the schema
    server.enqueue(Reply(json.dumps({"edit": edit, "share": 0.2, "hypothesis": "h"})))
    proposer = GuidedStructuralProposer(backend(server), explore=0.0, check_library=False,
                                        share=True)  # fmt: skip
    proposal = proposer.propose(_state())
    genome = genome_from_source(proposal.source or "")
    assert genome is not None and "bigram" in genome.names
    assert genome.share == BASE_GENOME.share  # rank fusion: the share is ignored
    (refused,) = proposal.attempts
    assert refused.status is Status.REJECTED and "no 'share'" in refused.reason
