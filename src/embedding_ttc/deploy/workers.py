"""Several server processes over one index: ``embedding-ttc serve DIR --workers N``.

uvicorn runs ``N`` worker processes on one listening socket (its ``Multiprocess``
supervisor; the kernel spreads connections among them). A worker is a fresh process
(``spawn``), so it cannot be handed a loaded app: it imports :func:`worker_app`, which
reads :class:`ServeSettings` from the environment variable :data:`ENV` (the parent
writes it before starting them), loads the index and the encoder and builds the app.

Every worker opens the index's arrays with ``mmap_mode="r"``
(:mod:`embedding_ttc.deploy.index`), so the documents' embeddings and the store sit once in
the page cache, shared by all workers; each worker holds its own encoder (a model's weights
per process) and answers ``GET /health`` with its own ``worker`` (its process id).

SIGTERM or SIGINT to the parent stops every worker (each drains its open requests) and the
parent returns normally: the command exits 0. A worker that dies while serving is replaced;
one that cannot start (its app does not load) stops the whole service with an error.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from embedding_ttc.deploy.allocator import DEFAULT_RETAIN_MB, MAX_RETAIN_MB, retain_freed_memory
from embedding_ttc.deploy.errors import DeployError
from embedding_ttc.deploy.reranker import DEFAULT_SHORTLIST
from embedding_ttc.deploy.service import require_serve_extra
from embedding_ttc.encoders.threads import set_torch_threads

if TYPE_CHECKING:
    from fastapi import FastAPI

ENV = "EMBEDDING_TTC_SERVE"
"""The environment variable holding a worker's :class:`ServeSettings` (JSON)."""
FACTORY = "embedding_ttc.deploy.workers:worker_app"
"""What each worker process imports and calls to build its app."""
HEALTHCHECK_SECONDS = 60
"""How long the parent waits for a worker's answer before it counts it as hung: a worker
loading a model on a busy machine answers late (uvicorn's default, 5 s, is too short)."""


class ServeSettings(BaseModel):
    """What a worker needs to serve the index: the ``serve`` command's options, as values."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    directory: Path
    first_stage: Literal["dense", "exact", "bm25"] = "dense"
    shortlist: int = DEFAULT_SHORTLIST
    cache_dir: Path | None = None
    use_cache: bool = True
    device: str = "auto"
    threads: int | None = None
    retain_memory_mb: int = Field(default=DEFAULT_RETAIN_MB, ge=0, le=MAX_RETAIN_MB)
    watch: bool = True


def build_app(settings: ServeSettings) -> FastAPI:
    """Load the index (memory-mapped) and its encoder in this process; the app serving them."""
    from embedding_ttc.deploy.index import Index
    from embedding_ttc.deploy.live_index import LiveIndex
    from embedding_ttc.deploy.reranker import Reranker
    from embedding_ttc.deploy.service import create_app
    from embedding_ttc.encoders.named import NamedEncoder

    set_torch_threads(settings.threads)  # N workers at torch's default oversubscribe
    retain_freed_memory(settings.retain_memory_mb)
    index = Index.load(settings.directory)
    named = NamedEncoder(
        index.manifest.encoder.name,
        cache_dir=settings.cache_dir,
        use_cache=settings.use_cache,
        device=settings.device,
    )
    reranker = Reranker(index, named.load())
    reranker.warm_up(settings.first_stage, settings.shortlist)  # before the worker accepts
    live = LiveIndex(reranker)
    if settings.watch:
        live.watch()  # each worker swaps in a newly published version by itself
    return create_app(live, first_stage=settings.first_stage, shortlist=settings.shortlist)


def create_app_from_env() -> FastAPI:
    """The app of one worker, from the settings in :data:`ENV` (uvicorn's app factory)."""
    raw = os.environ.get(ENV)
    if raw is None:
        raise DeployError(f"{ENV} is not set: workers are started by `embedding-ttc serve`")
    try:
        settings = ServeSettings.model_validate_json(raw)
    except ValidationError as exc:
        raise DeployError(f"{ENV} holds no valid serve settings: {exc}") from None
    return build_app(settings)


def worker_app() -> FastAPI:
    """:func:`create_app_from_env` in a worker: a failure is logged in one line and ends it.

    It ends with uvicorn's startup-failure status, which tells the parent not to start the
    worker again (another worker would fail the same way) but to stop the service; any other
    end would be taken for a crash, and the worker restarted without end.
    """
    from uvicorn.config import STARTUP_FAILURE

    try:
        return create_app_from_env()
    except Exception as exc:
        logging.getLogger("uvicorn.error").error(
            "embedding-ttc worker %d could not start: %s: %s", os.getpid(), type(exc).__name__, exc
        )
        raise SystemExit(STARTUP_FAILURE) from None


def serve_workers(
    settings: ServeSettings,
    *,
    workers: int,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "info",
    sock: socket.socket | None = None,
) -> None:
    """Run ``workers`` processes serving ``settings`` until SIGINT or SIGTERM, then return.

    Args:
        settings: what each worker serves.
        workers: how many processes.
        host: the address, when ``sock`` is not given.
        port: the port, when ``sock`` is not given.
        log_level: uvicorn's log level.
        sock: a socket already listening (:func:`~embedding_ttc.deploy.service.listen`;
            closed here when the service stops), so a bind failure was reported before
            anything loaded.

    The port is open from the start; each worker accepts connections once it has loaded
    its encoder and warmed up (:meth:`Reranker.warm_up`).

    Raises:
        DeployError: the address could not be bound, or a worker could not start (its app
            failed to load; the worker's log says why).

    """
    require_serve_extra()
    if workers < 1:
        raise DeployError(f"--workers must be at least 1, got {workers}")
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE
    from uvicorn.supervisors import Multiprocess
    from uvicorn.supervisors.multiprocess import SIGNALS

    if sock is None:
        from embedding_ttc.deploy.service import listen

        sock = listen(host, port)
    os.environ[ENV] = settings.model_dump_json()  # inherited by the spawned workers
    config = uvicorn.Config(
        FACTORY,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        timeout_worker_healthcheck=HEALTHCHECK_SECONDS,
    )
    # The supervisor installs handlers for SIGINT, SIGTERM and others that only note the
    # signal, and leaves them installed; the caller's are put back when it returns.
    previous: dict[int, Any] = {sig: signal.getsignal(sig) for sig in SIGNALS}
    supervisor = Multiprocess(config, sockets=[sock])
    try:
        supervisor.run()
    finally:
        sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if any(p.exitcode == STARTUP_FAILURE for p in supervisor.processes):
        raise DeployError("a server worker could not start (its error is logged above)")
