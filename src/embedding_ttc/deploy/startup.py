"""A service alive from its first second: the reranker loaded and warmed while the port is open.

``serve`` binds its port, then answers at once: ``GET /health`` says the process is alive,
``GET /ready`` answers 503 naming what it waits for (preloading the index, loading the encoder,
warming up) and every other endpoint a 503 with the same words, while a :class:`Startup`
loads the encoder and runs the warm-up (:meth:`Reranker.warm_up`: the encoder itself, bypassing
the embedding cache, then the program on a real shortlist) in a thread. Once that is done,
``/ready`` answers 200. A Kubernetes-style liveness probe then sees a live process from the
start instead of a refused connection, and the readiness probe sees the 503 it is written for.

A startup that fails (an encoder that does not load) is reported through ``on_failure``;
``serve`` then stops the server and exits with the error.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from embedding_ttc.deploy.errors import DeployError
from embedding_ttc.deploy.first_stage import FirstStage
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.live_index import LiveIndex
from embedding_ttc.deploy.reranker import DEFAULT_SHORTLIST, Reranker


class NotReadyError(DeployError):
    """A request reached the service before its warm-up ended (answered with a 503)."""


@dataclass(frozen=True)
class StartupPlan:
    """What a :class:`Startup` does before the service is ready.

    Attributes:
        load: opens the reranker over the index (loads the encoder).
        first_stage: the first stage the warm-up query goes through.
        shortlist: the candidates the warm-up hands the program.
        watch: whether the index is then watched for newly published versions.
        preload: reads every file of the index into the page cache first (``None``: not
            asked); returns the bytes read.

    """

    load: Callable[[], Reranker]
    first_stage: FirstStage = "dense"
    shortlist: int = DEFAULT_SHORTLIST
    watch: bool = True
    preload: Callable[[], int] | None = None


class Startup:
    """The reranker of a service, loaded and warmed in a thread (or given ready).

    Args:
        index: the index as loaded before the port opened (what ``/health`` describes until
            the reranker is ready).
        plan: what to do before the service is ready.
        report: receives one line per finished step (``serve`` prints them).

    """

    def __init__(
        self,
        index: Index,
        plan: StartupPlan,
        report: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.index = index
        self.plan = plan
        self._report = report
        self._live: LiveIndex | None = None
        self._waiting_for = "the start of the warm-up"
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def ready(cls, live: LiveIndex) -> Startup:
        """A startup already done: ``live`` answers from the first request."""
        startup = cls(live.current.index, StartupPlan(load=lambda: live.current))
        startup._live = live
        startup._waiting_for = ""
        return startup

    @property
    def live(self) -> LiveIndex:
        """The index that answers.

        Raises:
            NotReadyError: the warm-up has not ended (the message says what it waits for).

        """
        if self._live is None:
            raise NotReadyError(f"not ready: {self.waiting_for}")
        return self._live

    @property
    def is_ready(self) -> bool:
        """Whether the warm-up ended and requests are answered."""
        return self._live is not None

    @property
    def waiting_for(self) -> str:
        """What the service waits for before it is ready ("" once ready)."""
        if self.error is not None:
            return f"startup failed: {self.error}"
        return self._waiting_for

    def start(self, on_failure: Callable[[BaseException], None]) -> threading.Thread:
        """Run :meth:`run` in a daemon thread; ``on_failure`` receives what ended it."""

        def target() -> None:
            try:
                self.run()
            except Exception as exc:  # reported, then the service stops
                self.error = exc
                on_failure(exc)

        self._thread = threading.Thread(target=target, name="embedding-ttc-startup", daemon=True)
        self._thread.start()
        return self._thread

    def run(self) -> LiveIndex:
        """Preload (if asked), load the encoder, warm up, then answer; returns the live index."""
        plan = self.plan
        if plan.preload is not None:
            self._waiting_for = "reading the index into the page cache (--preload)"
            read = plan.preload()
            self._report(
                f"preloaded {read / 2**20:,.0f} MB of {self.index.directory} into the page cache"
            )
        self._waiting_for = f"loading the encoder {self.index.manifest.encoder.name}"
        started = time.perf_counter()
        reranker = plan.load()
        self._waiting_for = (
            f"the warm-up (the encoder, then {self.index.manifest.program.name} over a "
            f"shortlist of {plan.shortlist})"
        )
        warm = reranker.warm_up(plan.first_stage, plan.shortlist)
        live = LiveIndex(reranker)
        if plan.watch:
            live.watch()  # a version published by `index add`, `compact` or `ann` is swapped in
        self._live = live
        self._waiting_for = ""
        self._report(
            f"warmed up: one query in {warm * 1000:.0f} ms, through the encoder itself and "
            f"the program; ready {time.perf_counter() - started:.1f} s after the encoder began "
            "loading"
        )
        return live
