"""What a strategy is: its name, its frozen options record, the backend it needs, its factory.

A *strategy* is how a program is written (composed from a genome, drafted whole, edited from a
parent, chosen as a genome edit, handed over from elsewhere); a *backend*
(:mod:`embedding_ttc.search.backends`) is which model answers. The two vary independently, so
a combination is data: a :class:`~embedding_ttc.runs.config.ProposerSpec` names a
strategy, a backend and the strategy's options as JSON, and :func:`build_proposer` turns it
into a :class:`~embedding_ttc.search.proposer.Proposer` through the registry
:data:`STRATEGIES` (each strategy module registers itself; :mod:`.catalog` imports them).

A strategy's options are a frozen dataclass; :meth:`Strategy.read_options` validates a JSON
mapping into it (an unknown or ill-typed field is an error naming that field) and
:meth:`Strategy.write_options` turns it back into JSON, so ``search.json`` records exactly what
the factory was given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.registry import Registry
from embedding_ttc.search.backends.base import ChatBackend, JsonChatBackend
from embedding_ttc.search.prompts import DEFAULT_CONTEXT_TOKENS, DEFAULT_EDIT_CONTEXT_TOKENS

if TYPE_CHECKING:  # the pre-check imports the evaluator; reading options need not
    from embedding_ttc.search.precheck.check import PrecheckResult
    from embedding_ttc.search.proposer import Proposer

OptionsT = TypeVar("OptionsT")

BackendNeed = Literal["none", "chat", "json"]
"""What a strategy needs of a backend: none, any chat backend, or one that constrains JSON."""

STRICT = ConfigDict(extra="forbid")
"""The pydantic configuration of every options record: an unknown field is an error."""


class StrategyError(EmbeddingTTCError):
    """A strategy cannot be built as asked: bad options, or a backend it cannot use."""


def ranged(default: Any, low: float, high: float | None = None) -> Any:
    """A field of an options record that must lie in ``[low, high]`` (``high`` ``None``: no top).

    :class:`Ranged` checks it once, when the record is made (from JSON or in code).
    """
    return dataclasses.field(default=default, metadata={"range": (low, high)})


class Ranged:
    """Base of an options record: each :func:`ranged` field is checked once, on construction."""

    def __post_init__(self) -> None:
        """Refuse a field out of its range, naming it.

        Raises:
            StrategyError: naming the field, its range and the value.

        """
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            bounds = f.metadata.get("range")
            if bounds is None:
                continue
            low, high = bounds
            value = getattr(self, f.name)
            if value < low or (high is not None and value > high):
                span = f"at least {low}" if high is None else f"between {low} and {high}"
                raise StrategyError(f"{f.name} must be {span}, not {value}")


FlagKind = Literal["int", "float", "choice", "switch", "list"]
"""How a flag's value reads: a number, one of ``choices``, on/off (``--no-X``), repeatable."""


@dataclass(frozen=True)
class Flag:
    """One command-line option of a strategy, as data (the CLI adds every strategy's to its parser).

    Attributes:
        option: the option as typed (``--drafts``).
        field: the key it sets in what the strategy's ``from_flags`` reads.
        kind: how its value reads.
        help: the help line.
        choices: the values of a ``choice`` flag.
        metavar: the value's name in the help.

    """

    option: str
    field: str
    kind: FlagKind
    help: str
    choices: tuple[str, ...] = ()
    metavar: str | None = None

    def argv(self, value: object) -> list[str]:
        """The command line that gives ``value`` to this flag (what the parser reads back)."""
        if self.kind == "switch":
            return [self.option if value else f"--no-{self.option[2:]}"]
        if self.kind == "list":
            assert isinstance(value, list | tuple)
            return [a for v in value for a in (self.option, str(v))]
        return [self.option, str(value)]


@dataclass(frozen=True)
class Collaborators:
    """What a strategy's factory is given besides its backend and options.

    Attributes:
        seed: the run's seed (the parent choice's and, where the backend has none, the calls').
        precheck: the run's pre-check of a draft (``source -> PrecheckResult``), or ``None``.
        reference: the run's reference program's name, or ``None``.

    """

    seed: int = 0
    precheck: Callable[[str], PrecheckResult] | None = None
    reference: str | None = None


@dataclass(frozen=True)
class Strategy(Generic[OptionsT]):
    """One way of writing a program, as registered.

    Attributes:
        name: the registered name (``structural``, ``draft``, ``edit``, ``guided``, ``external``).
        options: the frozen options record; ``options()`` is a new run's default.
        needs: the backend it takes (``none``: it refuses one).
        build: ``(backend, options, collaborators) -> Proposer``.
        flags: its command-line options.
        from_flags: ``(given, backend) -> options``: a new run's options from the flags given
            (by field; an absent key: not given) over the backend named; ``None``: the
            strategy is not chosen on the command line (a peer's programs are handed over).

    """

    name: str
    options: type[OptionsT]
    needs: BackendNeed
    build: Callable[[ChatBackend | None, OptionsT, Collaborators], Proposer]
    flags: tuple[Flag, ...] = ()
    from_flags: Callable[[Mapping[str, Any], str | None], OptionsT] | None = None

    def read_options(self, raw: Mapping[str, Any]) -> OptionsT:
        """The options record from JSON (missing fields take the record's defaults).

        Raises:
            StrategyError: naming each field that is unknown or of the wrong type.

        """
        try:
            return TypeAdapter(self.options).validate_python(dict(raw))
        except StrategyError as exc:  # a field out of its range
            raise StrategyError(
                f"the {self.name} strategy's options are not valid ({exc})"
            ) from None
        except ValidationError as exc:
            bad = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(options)'}: {e['msg']}"
                for e in exc.errors()
            )
            raise StrategyError(
                f"the {self.name} strategy's options are not valid ({bad})"
            ) from None

    def write_options(self, options: OptionsT) -> dict[str, Any]:
        """The options record as JSON (what ``search.json`` records)."""
        body: dict[str, Any] = TypeAdapter(self.options).dump_python(options, mode="json")
        return body

    def check_backend(self, backend: ChatBackend | None) -> None:
        """Refuse a backend this strategy cannot use (or the lack of one it needs).

        Raises:
            StrategyError: saying which pair is refused and why.

        """
        if self.needs == "none":
            if backend is not None:
                raise StrategyError(
                    f"the {self.name} strategy takes no backend (it writes its programs "
                    f"without a language model), not {backend.name}"
                )
            return
        if backend is None:
            raise StrategyError(f"the {self.name} strategy needs a chat backend")
        if self.needs == "json" and not isinstance(backend, JsonChatBackend):
            raise StrategyError(
                f"the {self.name} strategy needs a backend that constrains JSON (llama-cpp or "
                f"openai), not {backend.name}"
            )


STRATEGIES: Registry[Strategy[Any]] = Registry("strategy")
"""Every strategy by name (filled by the strategy modules, imported by :mod:`.catalog`)."""


def register(strategy: Strategy[OptionsT]) -> Strategy[OptionsT]:
    """Add ``strategy`` to :data:`STRATEGIES` (a taken name is an error) and return it."""
    STRATEGIES.register(strategy.name, strategy)
    return strategy


def proposer_label(strategy: str, backend: str | None) -> str:
    """What the ledger records as the proposer: ``strategy:backend``, or the strategy alone."""
    return strategy if backend is None else f"{strategy}:{backend}"


REPAIR_ROUNDS = Flag(
    "--repair-rounds",
    "repair_rounds",
    "int",
    "repair turns per failed program: its error goes back to the model (draft, edit, guided; "
    "default 1 for edit and guided and for draft over llama-cpp, else 0)",
    metavar="N",
)
"""``--repair-rounds``: shared by the strategies that repair a model's reply."""

CONTEXT_TOKENS = Flag(
    "--context-tokens",
    "context_tokens",
    "int",
    f"token budget of the compact draft prompt (default {DEFAULT_CONTEXT_TOKENS}) or of the "
    f"edit prompt (default {DEFAULT_EDIT_CONTEXT_TOKENS})",
    metavar="N",
)
"""``--context-tokens``: shared by the strategies whose prompt has a budget."""

PRECHECK = Flag(
    "--precheck",
    "precheck",
    "switch",
    "check each program on a tiny synthetic task before the evaluation, after repairing its "
    "helper imports (draft: on whenever an aid is; edit: on); --no-precheck turns both off",
)
"""``--precheck``: shared by the strategies that pre-check a model's program."""
