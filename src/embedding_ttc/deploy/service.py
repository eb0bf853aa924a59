"""The HTTP service of a deployed program (FastAPI; ``embedding-ttc serve DIR`` runs it).

Endpoints:

* ``POST /search {"query": str, "k": int}``: the built-in first stage, then the program;
* ``POST /rerank {"query": str, "candidates": [str], "k": int}``: the caller's shortlist;
* both answer ``{"results": [{"id": str, "score": float}]}``, best first;
* ``POST /v1/rerank``: the rerank API Cohere's, Jina's and compatible clients speak,
  documents given by their texts (:class:`V1RerankRequest`, :class:`V1RerankResponse`);
* ``POST /v2/rerank``: Cohere's current rerank API (``ClientV2``; ``model`` required, texts
  only, an ``id`` per response: :class:`V2RerankRequest`, :class:`V2RerankResponse`);
* ``POST /admin/reload``: swap in a newly published version of the index (after ``index
  add``, ``compact`` or ``ann``; :mod:`embedding_ttc.deploy.live_index`), which ``serve`` also
  does by itself within about a second unless started with ``--no-watch``;
* ``GET /ready``: readiness (200 once the warm-up ran the encoder itself, then the program
  on a real shortlist; 503 naming what it waits for before: :mod:`embedding_ttc.deploy.
  startup`), apart from liveness;
* ``GET /health``: liveness (200 from the moment the port opens), what is served and the
  answering worker's process id (``serve --workers N`` runs several,
  :mod:`embedding_ttc.deploy.workers`); the OpenAPI schema at ``/openapi.json``.

A bad request gets a 422 in FastAPI's validation-error shape (``{"detail": [{"loc", "msg",
"type"}]}``, plus ``"error"``, one line naming the problem): a missing or unexpected field,
``k`` out of range, a blank query or one over :data:`MAX_QUERY_CHARS`, an empty, too long or
duplicated candidate list, an unknown candidate id (named); a body that is not JSON (or not
UTF-8 text) gets a 400 with the same ``error`` line. Before the warm-up ends every endpoint
but ``/health`` answers 503. The app keeps serving after any of them.

``relevance_score`` (``/v1`` and ``/v2/rerank``) lies in [0, 1], as Cohere documents it:
:func:`relevance` maps the program's score ``s`` to ``1 / (1 + exp(-s))``, a monotone map, so
the ranking is the program's and a client's threshold means the same from one request to the
next; ``"raw_scores": true`` adds the program's own score as ``raw_score``.

Endpoints are plain functions, run in FastAPI's thread pool; the
:class:`~embedding_ttc.deploy.reranker.Reranker` serialises calls to the program and encoder.

A program deployed from a program file runs in the sandbox, a contained process per call
(:mod:`embedding_ttc.deploy.program_file`); ``/health`` says so (``"sandboxed": true``). When
such a call fails (it crashes, times out, exceeds its memory or returns an invalid matrix) the
request gets a 500 whose ``error`` names the program, the status and the reason, and the
service keeps serving.
"""

from __future__ import annotations

import math
import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
)

from embedding_ttc.deploy.errors import CandidateRequestError, DeployError
from embedding_ttc.deploy.first_stage import FirstStage
from embedding_ttc.deploy.live_index import LiveIndex
from embedding_ttc.deploy.reranker import DEFAULT_SHORTLIST, Reranker
from embedding_ttc.deploy.startup import NotReadyError, Startup
from embedding_ttc.deploy.text_documents import TextInput
from embedding_ttc.errors import MissingExtraError
from embedding_ttc.programs.outcome import CandidateError

if TYPE_CHECKING:
    from fastapi import FastAPI

MAX_QUERY_CHARS = 2048
"""Longest query accepted, in characters (an encoder truncates long inputs anyway)."""
MAX_K = 1000
"""Most results one request may ask for."""
MAX_CANDIDATES = 10_000
"""Longest candidate list one /rerank request may send."""
MAX_DOCUMENTS = 1000
"""Most documents one /v1/rerank request may send (each one the index lacks is encoded)."""
MAX_DOCUMENT_CHARS = 100_000
"""Longest document text /v1/rerank accepts, in characters."""


def require_serve_extra() -> None:
    """Raise :class:`MissingExtraError` (the ``serve`` extra) if FastAPI or uvicorn is absent."""
    for module in ("fastapi", "uvicorn"):
        try:
            __import__(module)
        except ImportError:
            raise MissingExtraError(module, "serve", "the HTTP service (serve)") from None


def _integral(value: object) -> object:
    """JSON Schema's integers: ``5`` and ``5.0``; not ``"5"``, ``true`` or ``5.5``."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Count = Annotated[StrictInt, BeforeValidator(_integral)]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("the query is blank (only whitespace)")
    return value


Query = Annotated[
    StrictStr, Field(min_length=1, max_length=MAX_QUERY_CHARS), AfterValidator(_not_blank)
]
"""A query: text of at most :data:`MAX_QUERY_CHARS` characters, not only whitespace."""


def relevance(score: float) -> float:
    """The program's score mapped into [0, 1]: ``1 / (1 + exp(-score))``, monotone.

    Written as ``(1 + tanh(score / 2)) / 2``, the same function, which cannot overflow.
    """
    return 0.5 * (1.0 + math.tanh(score / 2.0))


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchRequest(_Request):
    """``POST /search``."""

    query: Query
    k: Count = Field(default=10, ge=1, le=MAX_K)


class RerankRequest(_Request):
    """``POST /rerank``."""

    query: Query
    candidates: list[StrictStr] = Field(min_length=1, max_length=MAX_CANDIDATES)
    k: Count = Field(default=10, ge=1, le=MAX_K)


DocumentText = Annotated[StrictStr, Field(min_length=1, max_length=MAX_DOCUMENT_CHARS)]


class V1Document(_Request):
    """A document of ``/v1/rerank``, as a record: its text, and its id and title if known.

    An ``id`` and ``title`` the index holds with the same text let it reuse its stored work.
    """

    text: DocumentText
    id: StrictStr | None = Field(default=None, min_length=1)
    title: StrictStr | None = None

    def as_input(self, fields: list[str]) -> dict[str, str]:
        """The document as :meth:`Reranker.rerank_texts` reads it, ranked on ``fields``."""
        record = {"text": self.text}
        if self.id is not None:
            record["id"] = self.id
        if self.title is not None and "title" in fields:
            record["title"] = self.title
        return record


RANK_FIELDS = ("title", "text")
"""The fields ``rank_fields`` may name: ``text`` (required) and ``title``."""


def _rank_fields(value: list[str] | None) -> list[str] | None:
    if value is None:
        return None
    unknown = [f for f in value if f not in RANK_FIELDS]
    if unknown or "text" not in value or len(set(value)) != len(value):
        raise ValueError(
            f"rank_fields {value!r} is not supported: name 'text', and optionally 'title' "
            "(the only document fields this service ranks on)"
        )
    return value


class V1RerankRequest(_Request):
    """``POST /v1/rerank``: Cohere's rerank request (v1), also Jina's.

    ``model`` is checked, not ignored: omit it, or name the program or the encoder this
    service serves (``GET /health``); any other name (another vendor's model) is a 422, so a
    client pointed at the wrong server finds out. ``rank_fields`` (Cohere's) names the
    record fields ranked on: ``["text"]`` or ``["title", "text"]`` (the default: title and
    text joined as the index joins them); any other field is a 422 naming the supported ones.
    Fields this service has no use for (Cohere's ``max_chunks_per_doc``) are refused like any
    unknown field. ``raw_scores`` (this service's) adds each result's ``raw_score``.
    """

    query: Query
    documents: list[DocumentText | V1Document] = Field(min_length=1, max_length=MAX_DOCUMENTS)
    top_n: Count | None = Field(default=None, ge=1, le=MAX_DOCUMENTS)
    return_documents: StrictBool = False
    model: StrictStr | None = None
    rank_fields: Annotated[list[StrictStr] | None, AfterValidator(_rank_fields)] = None
    raw_scores: StrictBool = False


class V2RerankRequest(_Request):
    """``POST /v2/rerank``: Cohere's current rerank request (``cohere.ClientV2``).

    As v1, but ``model`` is required and documents are texts only; ``model`` is checked as
    v1's is, and fields this service has no use for (``max_tokens_per_doc``: the encoder's own
    length applies) are refused like any unknown field.
    """

    model: StrictStr
    query: Query
    documents: list[DocumentText] = Field(min_length=1, max_length=MAX_DOCUMENTS)
    top_n: Count | None = Field(default=None, ge=1, le=MAX_DOCUMENTS)
    raw_scores: StrictBool = False


class V2Result(BaseModel):
    """One ranked document of ``/v2/rerank``: its position in the request and its score."""

    index: int
    relevance_score: float = Field(
        ge=0.0,
        le=1.0,
        description="the program's score mapped into [0, 1] by 1 / (1 + exp(-score)), "
        "monotone: a threshold keeps its meaning from one request to the next",
    )
    raw_score: float | None = Field(
        default=None, description="the program's own score (asked with raw_scores)"
    )


class V1Result(BaseModel):
    """One ranked document: its position in the request, its score, its text if asked."""

    index: int
    relevance_score: float = Field(
        ge=0.0,
        le=1.0,
        description="the program's score mapped into [0, 1] by 1 / (1 + exp(-score)), "
        "monotone: a threshold keeps its meaning from one request to the next",
    )
    raw_score: float | None = Field(
        default=None, description="the program's own score (asked with raw_scores)"
    )
    document: V1Document | None = None


class V1Meta(BaseModel):
    """What served a ``/v1/rerank`` request."""

    program: str
    encoder: str
    documents: int
    live_documents: int = Field(
        description="documents the index does not hold, their index-time work computed live"
    )


class V1RerankResponse(BaseModel):
    """The documents ranked, best first (ties: earlier in the request first), with an id."""

    id: str
    results: list[V1Result]
    meta: V1Meta


class V2RerankResponse(BaseModel):
    """The documents ranked, best first (ties: earlier in the request first), with an id."""

    id: str
    results: list[V2Result]
    meta: V1Meta


class Result(BaseModel):
    """One ranked document."""

    id: str
    score: float


class Results(BaseModel):
    """The ranked documents, best first."""

    results: list[Result]


class Problem(BaseModel):
    """A body that is not JSON (or not UTF-8 text): ``400``."""

    detail: Any
    error: str = ""


class Unready(BaseModel):
    """A request before the warm-up ended: ``503``, naming what the service waits for."""

    detail: str
    error: str


_UNREADABLE: dict[int | str, dict[str, Any]] = {
    400: {"model": Problem, "description": "The body is not JSON (or not UTF-8 text)"},
    503: {"model": Unready, "description": "The service is still warming up"},
}


class Reload(BaseModel):
    """``POST /admin/reload``: whether a new version now answers, its documents, any error."""

    swapped: bool
    documents: int
    error: str = ""


class Readiness(BaseModel):
    """``GET /ready``: ``ready``, or ``warming up`` (with status 503) and what it waits for."""

    status: Literal["ready", "warming up"]
    waiting_for: str = ""


class Health(BaseModel):
    """``GET /health``."""

    status: str = Field(description="ok: the process is alive (it may still be warming up)")
    ready: bool = Field(description="whether the warm-up ended (GET /ready)")
    program: str
    sandboxed: bool
    encoder: str
    documents: int
    first_stage: str
    shortlist: int = Field(description="candidates /search hands the program")
    worker: int = Field(description="the process id of the worker that answered")


def _problem(loc: list[str | int], msg: str, kind: str) -> Any:
    """A 422 in FastAPI's validation-error shape, with a one-line ``error``."""
    from fastapi.responses import JSONResponse

    where = ".".join(str(p) for p in loc)
    return JSONResponse(
        status_code=422,
        content={"detail": [{"loc": loc, "msg": msg, "type": kind}], "error": f"{where}: {msg}"},
    )


def _clean(value: Any) -> Any:
    """A validation error made safe to send: echoed inputs dropped, strings UTF-8 encodable.

    Pydantic echoes the offending input; a query holding a lone UTF-16 surrogate (valid JSON
    escapes can spell one) would then make the error response itself unencodable (a 500), and
    an echoed candidate list can be megabytes.
    """
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k != "input"}
    return value


def _candidate_problem(field: str, exc: CandidateRequestError) -> Any:
    """A 422 located at the request's list ``field``, at the offending item when known."""
    loc: list[str | int] = ["body", field]
    if exc.position is not None:
        loc.append(exc.position)
    return _problem(loc, str(exc), "value_error")


def _unknown_model(model: str | None, models: tuple[str, str]) -> Any:
    """A 422 for a model this service does not serve (``None``: the model is served)."""
    if model is None or model in models:
        return None
    return _problem(
        ["body", "model"],
        f"model {model!r} is not served here; this service serves program "
        f"{models[0]!r} with encoder {models[1]!r} (name either, or omit model)",
        "value_error",
    )


def _rank_texts(
    reranker: Reranker, model: str | None, query: str, documents: list[TextInput],
    top_n: int | None, models: tuple[str, str],
) -> tuple[Any, V1Meta | None]:  # fmt: skip
    """What ``/v1`` and ``/v2/rerank`` share: the model check, the ranking and its meta.

    Returns ``(ranking, meta)``, or ``(refusal, None)``: a 422 for an unknown model or a bad
    document.
    """
    refused = _unknown_model(model, models)
    if refused is not None:
        return refused, None
    n = len(documents)
    try:
        ranked = reranker.rerank_texts(query, documents, min(top_n or n, n))
    except CandidateRequestError as exc:
        return _candidate_problem("documents", exc), None
    meta = V1Meta(program=models[0], encoder=models[1], documents=n, live_documents=ranked.live)
    return ranked, meta


def _scores(score: float, raw: bool) -> dict[str, Any]:
    """A result's ``relevance_score`` (in [0, 1]) and, if asked, its ``raw_score``."""
    return {"relevance_score": relevance(score), "raw_score": score if raw else None}


def _rerank_v2(reranker: Reranker, body: V2RerankRequest, models: tuple[str, str]) -> Any:
    """Answer ``/v2/rerank`` (a 422 for an unknown model or a bad document)."""
    texts: list[TextInput] = list(body.documents)
    ranked, meta = _rank_texts(reranker, body.model, body.query, texts, body.top_n, models)
    if meta is None:
        return ranked
    return V2RerankResponse(
        id=str(uuid.uuid4()),
        results=[
            V2Result(index=r.position, **_scores(r.score, body.raw_scores)) for r in ranked.results
        ],
        meta=meta,
    )


def _rerank_v1(reranker: Reranker, body: V1RerankRequest, models: tuple[str, str]) -> Any:
    """Answer ``/v1/rerank`` (a 422 for an unknown model or a bad document)."""
    fields = body.rank_fields or list(RANK_FIELDS)
    documents: list[TextInput] = [
        d if isinstance(d, str) else d.as_input(fields) for d in body.documents
    ]
    ranked, meta = _rank_texts(reranker, body.model, body.query, documents, body.top_n, models)
    if meta is None:
        return ranked

    def echoed(position: int) -> V1Document | None:
        if not body.return_documents:
            return None
        given = body.documents[position]
        return V1Document(text=given) if isinstance(given, str) else given

    results = [
        V1Result(index=r.position, **_scores(r.score, body.raw_scores), document=echoed(r.position))
        for r in ranked.results
    ]
    return V1RerankResponse(id=str(uuid.uuid4()), results=results, meta=meta)


def _json_problem(errors: list[dict[str, Any]]) -> str | None:
    """The one line of a 400 when the body is not JSON (``None``: it is JSON)."""
    for e in errors:
        if e.get("type") == "json_invalid":
            reason = e.get("ctx", {}).get("error", "") if isinstance(e.get("ctx"), dict) else ""
            at = e.get("loc", ("body", "?"))[-1]
            return f"the body is not valid JSON: {reason or 'unreadable'} at character {at}"
    return None


def _install_error_handlers(app: FastAPI, program: str) -> None:
    """400 (not JSON), 422 (malformed), 503 (warming up), 500 (a failed run, named)."""
    from fastapi import Request
    from fastapi.encoders import jsonable_encoder
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _clean(jsonable_encoder(exc.errors()))
        not_json = _json_problem(errors)
        if not_json is not None:
            return JSONResponse(status_code=400, content={"detail": errors, "error": not_json})
        summary = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in errors
        )
        return JSONResponse(status_code=422, content={"detail": errors, "error": summary})

    @app.exception_handler(NotReadyError)
    async def unready(request: Request, exc: NotReadyError) -> JSONResponse:
        return JSONResponse(status_code=503, content={"detail": str(exc), "error": str(exc)})

    @app.exception_handler(CandidateError)
    async def failed(request: Request, exc: CandidateError) -> JSONResponse:
        error = _clean(f"program {program} failed ({exc.status.value}): {exc.reason}")
        return JSONResponse(status_code=500, content={"detail": error, "error": error})

    @app.exception_handler(DeployError)
    async def live_failed(request: Request, exc: DeployError) -> JSONResponse:
        # The recording pass over documents the index lacks failed (/v1/rerank).
        error = _clean(str(exc))
        return JSONResponse(status_code=500, content={"detail": error, "error": error})


def _startup_of(reranker: Reranker | LiveIndex | Startup) -> Startup:
    """The startup an app answers through (one already done for a reranker or live index)."""
    if isinstance(reranker, Startup):
        return reranker
    return Startup.ready(reranker if isinstance(reranker, LiveIndex) else LiveIndex(reranker))


def _waiting_for(startup: Startup) -> str:
    """What ``/ready`` waits for ("" when ready)."""
    if startup.is_ready and startup.live.current.ready:
        return ""
    return startup.waiting_for or "the warm-up"


def create_app(
    reranker: Reranker | LiveIndex | Startup,
    *,
    first_stage: FirstStage = "dense",
    shortlist: int = DEFAULT_SHORTLIST,
) -> FastAPI:
    """The FastAPI app serving ``reranker``.

    Args:
        reranker: the deployed program, or a :class:`~embedding_ttc.deploy.live_index.
            LiveIndex` of it (a bare reranker is wrapped in one: ``POST /admin/reload``
            then swaps in a newly published version; ``serve`` also watches for one), or a
            :class:`~embedding_ttc.deploy.startup.Startup` still loading it (``/health``
            answers at once, the rest 503 until it is ready).
        first_stage: the first stage of ``/search`` (``dense``, ``exact`` or ``bm25``).
        shortlist: candidates ``/search`` reranks (at least ``k``).

    Raises:
        MissingExtraError: FastAPI or uvicorn is not installed (the ``serve`` extra).

    """
    require_serve_extra()
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    startup = _startup_of(reranker)

    def current() -> Reranker:
        """The reranker of the version answering now (read once per request; 503 before)."""
        return startup.live.current

    def manifest_now() -> Any:
        """The manifest served (the one loaded at start while warming up)."""
        return current().index.manifest if startup.is_ready else startup.index.manifest

    manifest = manifest_now()
    app = FastAPI(
        title="embedding-ttc reranker",
        version=manifest.embedding_ttc_version,
        description=f"Program {manifest.program.name} over {manifest.counts.documents} "
        f"documents, encoder {manifest.encoder.name}.",
    )

    _install_error_handlers(app, manifest.program.name)

    @app.get("/health", response_model=Health)
    def health() -> Health:
        """Liveness (from the moment the port opens), and what this service serves."""
        manifest = manifest_now()
        return Health(
            status="ok",
            ready=not _waiting_for(startup),
            program=manifest.program.name,
            sandboxed=manifest.program.discovered is not None,
            encoder=manifest.encoder.name,
            documents=manifest.counts.documents,
            first_stage=first_stage,
            shortlist=shortlist,
            worker=os.getpid(),
        )

    @app.get(
        "/ready",
        response_model=Readiness,
        response_model_exclude_defaults=True,
        responses={503: {"model": Readiness}},
    )
    def ready() -> Any:
        """Readiness: 200 once the warm-up ended, 503 naming what it waits for before.

        The warm-up runs the encoder itself (not the embedding cache), then the program on a
        real shortlist; ``/health`` is liveness only.
        """
        waiting = _waiting_for(startup)
        if not waiting:
            return Readiness(status="ready")
        return JSONResponse(
            status_code=503, content={"status": "warming up", "waiting_for": waiting}
        )

    @app.post("/search", response_model=Results, responses=_UNREADABLE)
    def search(body: SearchRequest) -> Any:
        """The best ``k`` documents for the query: first stage, then the program."""
        ranked = current().search(body.query, body.k, first_stage, shortlist)
        return Results(results=[Result(id=d, score=s) for d, s in ranked])

    @app.post("/rerank", response_model=Results, responses=_UNREADABLE)
    def rerank(body: RerankRequest) -> Any:
        """The best ``k`` of the caller's candidates for the query."""
        try:
            ranked = current().rerank(body.query, body.candidates, body.k)
        except CandidateRequestError as exc:
            return _candidate_problem("candidates", exc)
        return Results(results=[Result(id=d, score=s) for d, s in ranked])

    models = (manifest.program.name, manifest.encoder.name)

    @app.post(
        "/v1/rerank",
        response_model=V1RerankResponse,
        response_model_exclude_none=True,
        responses=_UNREADABLE,
    )
    def rerank_v1(body: V1RerankRequest) -> Any:
        """Rank the given documents (texts) for the query; Cohere's and Jina's rerank API.

        A document the index holds (the same text, or the same id and text) is scored from
        its stored index-time work; any other has it computed for this request.
        """
        return _rerank_v1(current(), body, models)

    @app.post(
        "/v2/rerank",
        response_model=V2RerankResponse,
        response_model_exclude_none=True,
        responses=_UNREADABLE,
    )
    def rerank_v2(body: V2RerankRequest) -> Any:
        """Rank the given documents (texts) for the query; Cohere's current rerank API (v2)."""
        return _rerank_v2(current(), body, models)

    @app.post("/admin/reload", response_model=Reload, responses=_UNREADABLE)
    def reload() -> Reload:
        """Swap in the index's newly published version, if any (``serve`` also watches)."""
        done = startup.live.refresh()
        return Reload(swapped=done.swapped, documents=done.documents, error=done.error)

    return app


def listen(host: str = "127.0.0.1", port: int = 8000) -> socket.socket:
    """A socket bound to ``host:port`` and listening: the port open before anything loads.

    Raises:
        DeployError: the address cannot be bound (a port in use, a host not of this
            machine, a privileged port), naming the address and the reason.

    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        hint = " (is another server running there? pick another --port)" if (
            exc.errno == 98
        ) else ""  # fmt: skip
        raise DeployError(f"cannot listen on {host}:{port}: {reason}{hint}") from None
    sock.set_inheritable(True)  # --workers hands it to the worker processes
    return sock


def serve(
    app: FastAPI,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "info",
    *,
    sock: socket.socket | None = None,
    startup: Startup | None = None,
) -> None:
    """Run ``app`` under uvicorn until SIGINT or SIGTERM, then return (a clean shutdown).

    Args:
        app: the app (:func:`create_app`).
        host: the address, when ``sock`` is not given.
        port: the port, when ``sock`` is not given.
        log_level: uvicorn's log level.
        sock: a socket already listening (:func:`listen`), so a bind failure was reported
            before anything loaded.
        startup: the app's :class:`Startup`, run in a thread once the server runs; if it
            fails the server stops and its error is raised.

    uvicorn drains open requests on a signal, then re-raises it with the handler that was
    installed before it started; installing handlers that only note the signal makes that
    re-raise a no-op, so the process ends normally (exit status 0, no traceback).

    Raises:
        DeployError: the address could not be bound, or the startup failed.

    """
    require_serve_extra()
    import signal

    import uvicorn

    if sock is None:
        sock = listen(host, port)
    received: list[int] = []

    def note(signum: int, frame: object) -> None:
        received.append(signum)

    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level))

    def stop(exc: BaseException) -> None:
        server.should_exit = True

    def start_when_serving() -> None:
        # The startup's imports and model load hold the GIL for seconds: begun only once the
        # server answers, they cannot delay the first /health.
        while not server.started and not server.should_exit:
            time.sleep(0.01)
        if server.started and startup is not None:
            startup.start(on_failure=stop)

    try:
        if startup is not None and not startup.is_ready:
            threading.Thread(target=start_when_serving, daemon=True).start()
        server.run(sockets=[sock])
    finally:
        sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if startup is not None and startup.error is not None:
        error = startup.error
        raise DeployError(f"the service could not start: {type(error).__name__}: {error}")
