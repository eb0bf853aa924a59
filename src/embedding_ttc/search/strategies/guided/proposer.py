"""The guided structural proposer: the model chooses the edit, the structural renderer writes it.

:class:`GuidedStructuralProposer` wraps a
:class:`~embedding_ttc.search.backends.base.JsonChatBackend`. Per generation it

1. chooses a parent among the programs that carry a genome
   (:func:`~embedding_ttc.search.population.choose_parent` over them; the base genome,
   under P0, when none does, and generation 1 proposes the base genome itself, as the
   structural proposer does);
2. asks the model for one edit and a one-sentence hypothesis as JSON under the schema of
   the parent's edits (:func:`~embedding_ttc.search.structural.edits.edit_schema`:
   a grammar on llama.cpp, ``response_format`` on OpenAI-compatible servers), with the
   parent's per-task results and its lineage's lessons in the prompt (:mod:`.prompt`); with
   ``share``, the reply also sets the convex fusion's share of the edited program. Only
   the edits whose result is new are offered (a genome not tried and structurally distinct
   from the known programs, :func:`~embedding_ttc.search.structural.known.is_new`),
   so the model's choice is never spent on a repeat; when the encoder's views collapse, the
   channels scored under another view are not offered either (they would equal S). With
   ``offers`` set, a seeded sample of that many open edits is offered, one of each kind of
   change first (:func:`sample_offers`), and the prompt lists them; otherwise every open edit
   is. The catalogue's channels are listed in a seeded order of their own each generation;
3. applies the edit (:func:`~embedding_ttc.search.structural.edits.apply_edit`);
   when the result is not new (a server that does not enforce the schema), stacks the
   structural proposer's random mutations until one is
   (:func:`~embedding_ttc.search.structural.known.first_new`), and says so. A parent
   whose every single edit was tried is passed over for the best program that still has an
   open edit (:func:`~embedding_ttc.search.population.open_genome_parent`), and the claim
   says so; only when no program has one are random mutations stacked on the parent without a
   call;
4. renders the program (:func:`~embedding_ttc.search.structural.render.render_program`).

A reply that is not a usable edit (only possible where the server does not enforce the schema)
gets ``repair_rounds`` repair turns; then the structural proposer's random change is used, and
the novelty claim says that the model's choice was not. Every failed call is an
:class:`~embedding_ttc.search.state.Attempt`. The program a generation writes is valid by
construction: the structural renderer wrote it.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from collections.abc import Sequence

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.backends.base import ChatReply, JsonChatBackend
from embedding_ttc.search.conversation import (
    Call,
    attempts,
    call_seed,
    converse,
    proposal_usage,
    require_an_answer,
)
from embedding_ttc.search.population import EXPLORE, SEED_MIX, genome_parent, open_genome_parent
from embedding_ttc.search.proposer import ProposerError, base_seed
from embedding_ttc.search.state import Proposal, SearchState, Usage
from embedding_ttc.search.strategies.guided.prompt import render_guided_prompt
from embedding_ttc.search.structural.catalogue import CHANNELS
from embedding_ttc.search.structural.edits import (
    Edit,
    GenomeEditError,
    apply_edit,
    apply_share,
    edit_schema,
    offered_channels,
)
from embedding_ttc.search.structural.genome import (
    BASE_GENOME,
    Genome,
)
from embedding_ttc.search.structural.known import (
    Known,
    first_new,
    is_new,
    known_programs,
    new_edits,
)
from embedding_ttc.search.structural.proposer import claims
from embedding_ttc.search.structural.render import render_program


@dataclasses.dataclass(frozen=True)
class _Choice:
    genome: Genome
    change: str
    hypothesis: str


class GuidedStructuralProposer:
    """A language model choosing the structural proposer's next genome edit.

    Args:
        inner: a chat backend that constrains replies to a JSON schema.
        explore: probability of a parent off the frontier.
        repair_rounds: repair turns after an unusable reply, ``>= 0``.
        seed: the base seed (default the backend's, else the run's).
        check_library: keep proposals structurally distinct from the library programs too.
        offers: how many open edits each generation offers (:func:`sample_offers`); ``0``
            offers every open edit.
        keep: channels no edit drops or swaps out (``("dense",)`` anchors every program on
            the cosine ``S``); the prompt says so.
        share: the reply also sets the convex fusion's share of the edited program
            (:func:`~embedding_ttc.search.structural.edits.apply_share`); without
            it a convex fusion keeps the middle share it starts at.
        name: what the ledger records as the proposer (default ``guided:<backend>``).

    Raises:
        ValueError: a channel of ``keep`` that is not in the catalogue, or a backend that
            cannot constrain JSON (the ranges are checked by
            :class:`~.options.GuidedOptions`).

    """

    def __init__(
        self,
        inner: JsonChatBackend,
        *,
        explore: float = EXPLORE,
        repair_rounds: int = 1,
        seed: int | None = None,
        check_library: bool = True,
        offers: int = 0,
        keep: Sequence[str] = (),
        share: bool = False,
        name: str = "",
    ) -> None:
        # repair_rounds, offers and explore are the options record's, checked there
        # (GuidedOptions); keep is checked here too, a wrong name being a KeyError later.
        unknown = [c for c in keep if c not in CHANNELS]
        if unknown:
            raise ValueError(
                f"cannot keep {', '.join(map(repr, unknown))}: not a channel; choose from "
                f"{', '.join(CHANNELS)}"
            )
        if not getattr(inner, "constrains_json", False):
            raise ValueError(
                f"the {inner.name} backend cannot constrain a reply to a JSON schema; the "
                "guided proposer needs llama-cpp or an OpenAI-compatible server"
            )
        self.inner = inner
        self.name = name or f"guided:{inner.name}"
        self.explore = explore
        self.repair_rounds = repair_rounds
        self.seed = seed
        self.check_library = check_library
        self.offers = offers
        self.keep = tuple(keep)
        self.share = share

    def _seed(self, state: SearchState) -> int:
        return self.seed if self.seed is not None else base_seed(self.inner, state)

    def _known(self, state: SearchState) -> Known:
        return known_programs(state, library=self.check_library)

    def propose(self, state: SearchState) -> Proposal:
        """Ask for one edit of a parent's genome and render it (module docstring)."""
        started = time.perf_counter()
        seed = self._seed(state)
        rng = random.Random(seed * SEED_MIX + state.generation)
        known = self._known(state)
        parent = genome_parent(state, seed=seed, explore=self.explore)
        if parent is None:
            root = next((r.program_id for r in state.history if r.generation == 0), None)
            if state.generation <= 1 and is_new(BASE_GENOME, known):
                return self._proposal(BASE_GENOME, [], "", root, (), None, started)
            record = next((r for r in state.history if r.generation == 0), None)
            if record is None:
                raise ProposerError("the state has no program to start from")
            parent = (record, BASE_GENOME)
        record, genome = parent
        offered = offered_channels(state.views_collapsed)
        edits = new_edits(genome, offered, known, self.keep)
        spent = ""
        if not edits:
            opened = open_genome_parent(state, record, offered, known, self.keep)
            if opened is None:
                stacked, changes = first_new(genome, known, rng, self.keep)
                changes = [*changes, f"(no single edit of {record.program_id} is new)"]
                return self._proposal(stacked, changes, "", record.program_id, (), None, started)
            spent = f"(every single edit of {record.program_id} is tried; the next open parent)"
            record, genome, edits = opened
        menu = None
        if self.offers:
            draw = random.Random(f"offers:{seed}:{state.generation}")
            edits = sample_offers(edits, self.offers, draw)
            menu = [(edit, apply_edit(genome, edit)[1]) for edit in edits]
        choice, calls = self._ask(state, record, genome, offered, edits, seed, menu)
        if choice is None:
            stacked, changes = first_new(genome, known, rng, self.keep)
            reason = calls[-1].reason if calls else "no reply"
            changes = [*changes, f"(the model's choice was unusable: {reason[:120]})"]
            hypothesis = ""
        else:
            stacked, changes, hypothesis = choice.genome, [choice.change], choice.hypothesis
            if not is_new(stacked, known):
                stacked, more = first_new(stacked, known, rng, self.keep)
                changes += [*more, "(the chosen change alone repeats a known program)"]
        if spent:
            changes.append(spent)
        require_an_answer(calls)
        return self._proposal(
            stacked, changes, hypothesis, record.program_id, calls, choice, started
        )

    def _ask(
        self,
        state: SearchState,
        record: LedgerRecord,
        genome: Genome,
        offered: Sequence[str],
        edits: Sequence[Edit],
        seed: int,
        menu: Sequence[tuple[Edit, str]] | None,
    ) -> tuple[_Choice | None, list[Call]]:
        schema = edit_schema(genome, offered, edits=edits, share=self.share)
        prompt = render_guided_prompt(
            state, record, genome, offered, len(edits), order_seed=seed + state.generation,
            menu=menu, keep=self.keep, share=self.share,
        )  # fmt: skip
        chosen: list[_Choice] = []

        def judge(reply: ChatReply, r: int) -> Call:
            try:
                chosen.append(_read(reply.text, genome, self.keep, share=self.share))
            except GenomeEditError as exc:
                return Call(reply, False, Status.REJECTED, f"choice: {exc}")
            return Call(reply, True, Status.OK)

        calls = converse(
            lambda messages, seed: self.inner.chat(messages, seed=seed, schema=schema),
            prompt,
            rounds=self.repair_rounds,
            seed=lambda r: call_seed(seed, state.generation, r),
            judge=judge,
            follow_up=lambda call: (
                f"That is not a usable edit: {call.reason.removeprefix('choice: ')}. Reply "
                "with JSON only, in the shape asked for, using the names listed."
            ),
        )
        return (chosen[0] if chosen else None), calls

    def _proposal(
        self,
        genome: Genome,
        changes: list[str],
        hypothesis: str,
        parent_id: str | None,
        calls: Sequence[Call],
        choice: _Choice | None,
        started: float,
    ) -> Proposal:
        novelty, default_hypothesis = claims(genome, changes, parent_id)
        hypothesis = hypothesis.strip() or default_hypothesis
        source = render_program(genome, novelty=novelty, hypothesis=hypothesis, parent_id=parent_id)
        chosen = calls[-1] if choice is not None else None
        if chosen is not None:
            own = chosen.reply.usage
        else:
            own = Usage(model=str(getattr(self.inner, "model", self.inner.name)))
        usage = dataclasses.replace(
            proposal_usage(own, calls),
            model=own.model or self.name,
            seconds=own.seconds if calls else time.perf_counter() - started,
        )
        return Proposal(
            source=source,
            novelty=novelty,
            hypothesis=hypothesis,
            usage=usage,
            proposer=self.name,
            parent_id=parent_id,
            raw_reply=chosen.reply.text if chosen is not None else source,
            attempts=attempts(calls, chosen, limit=None),
        )


def sample_offers(edits: Sequence[Edit], k: int, rng: random.Random) -> list[Edit]:
    """``k`` of ``edits`` (all when there are no more), in their order: one of each kind first.

    The kinds (ops) are visited in a shuffled order, each contributing one edit drawn at random,
    round after round until ``k`` are drawn. A small model left every open edit mostly adds a
    channel and steps it through the normalisations; a sample with every kind of change on
    offer puts a fusion, a feedback round or a drop beside the additions each generation.
    """
    if k <= 0 or len(edits) <= k:
        return list(edits)
    pools: dict[str, list[int]] = {}
    for i, edit in enumerate(edits):
        pools.setdefault(edit["op"], []).append(i)
    for pool in pools.values():
        rng.shuffle(pool)
    kinds = list(pools)
    rng.shuffle(kinds)
    chosen: list[int] = []
    while len(chosen) < k:
        for kind in kinds:
            if pools[kind] and len(chosen) < k:
                chosen.append(pools[kind].pop())
    return [edits[i] for i in sorted(chosen)]


def _read(text: str, genome: Genome, keep: Sequence[str] = (), *, share: bool = False) -> _Choice:
    try:
        data = json.loads(text)
    except ValueError:
        raise GenomeEditError("the reply is not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("edit"), dict):
        raise GenomeEditError("the reply has no 'edit' object")
    changed, change = apply_edit(genome, data["edit"], keep)
    if changed == genome:
        raise GenomeEditError("the edit leaves the program unchanged")
    if share:
        if "share" not in data:
            raise GenomeEditError("the reply has no 'share'")
        changed, moved = apply_share(changed, data["share"])
        change = f"{change}; {moved}" if moved else change
    hypothesis = data.get("hypothesis")
    return _Choice(changed, change, hypothesis if isinstance(hypothesis, str) else "")
