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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.registry import Registry
from embedding_ttc.search.backends.base import ChatBackend, JsonChatBackend

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

    """

    name: str
    options: type[OptionsT]
    needs: BackendNeed
    build: Callable[[ChatBackend | None, OptionsT, Collaborators], Proposer]

    def read_options(self, raw: Mapping[str, Any]) -> OptionsT:
        """The options record from JSON (missing fields take the record's defaults).

        Raises:
            StrategyError: naming each field that is unknown or of the wrong type.

        """
        try:
            return TypeAdapter(self.options).validate_python(dict(raw))
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
