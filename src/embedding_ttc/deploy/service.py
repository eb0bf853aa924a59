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
* ``GET /ready``: readiness (200 once a warm-up query went through the encoder, the index and
  the program; 503 before), apart from liveness;
* ``GET /health``: status, what is served and the answering worker's process id (``serve
  --workers N`` runs several, :mod:`embedding_ttc.deploy.workers`); the OpenAPI schema at
  ``/openapi.json``.

A bad request gets a 422 in FastAPI's validation-error shape (``{"detail": [{"loc", "msg",
"type"}]}``, plus ``"error"``, one line naming the problem): malformed JSON, a missing or
unexpected field, ``k`` out of range, a query over :data:`MAX_QUERY_CHARS`, an empty, too long
or duplicated candidate list, an unknown candidate id (named); a body that is not UTF-8 text
gets FastAPI's 400. The app keeps serving after any of them. Endpoints are plain functions,
run in FastAPI's thread pool; the :class:`~embedding_ttc.deploy.reranker.Reranker` serialises
calls to the program and encoder.

A program deployed from a program file runs in the sandbox, a contained process per call
(:mod:`embedding_ttc.deploy.program_file`); ``/health`` says so (``"sandboxed": true``). When
such a call fails (it crashes, times out, exceeds its memory or returns an invalid matrix) the
request gets a 500 whose ``error`` names the program, the status and the reason, and the
service keeps serving.
"""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
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


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchRequest(_Request):
    """``POST /search``."""

    query: StrictStr = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    k: Count = Field(default=10, ge=1, le=MAX_K)


class RerankRequest(_Request):
    """``POST /rerank``."""

    query: StrictStr = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    candidates: list[StrictStr] = Field(min_length=1, max_length=MAX_CANDIDATES)
    k: Count = Field(default=10, ge=1, le=MAX_K)


DocumentText = Annotated[StrictStr, Field(min_length=1, max_length=MAX_DOCUMENT_CHARS)]


class V1Document(_Request):
    """A document of ``/v1/rerank``, as a record."""

    text: DocumentText


class V1RerankRequest(_Request):
    """``POST /v1/rerank``: Cohere's rerank request (v1), also Jina's.

    ``model`` is checked, not ignored: omit it, or name the program or the encoder this
    service serves (``GET /health``); any other name (another vendor's model) is a 422, so a
    client pointed at the wrong server finds out. Fields this service has no use for
    (Cohere's ``rank_fields``, ``max_chunks_per_doc``) are refused like any unknown field.
    """

    query: StrictStr = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    documents: list[DocumentText | V1Document] = Field(min_length=1, max_length=MAX_DOCUMENTS)
    top_n: Count | None = Field(default=None, ge=1, le=MAX_DOCUMENTS)
    return_documents: StrictBool = False
    model: StrictStr | None = None


class V2RerankRequest(_Request):
    """``POST /v2/rerank``: Cohere's current rerank request (``cohere.ClientV2``).

    As v1, but ``model`` is required and documents are texts only; ``model`` is checked as
    v1's is, and fields this service has no use for (``max_tokens_per_doc``: the encoder's own
    length applies) are refused like any unknown field.
    """

    model: StrictStr
    query: StrictStr = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    documents: list[DocumentText] = Field(min_length=1, max_length=MAX_DOCUMENTS)
    top_n: Count | None = Field(default=None, ge=1, le=MAX_DOCUMENTS)


class V2Result(BaseModel):
    """One ranked document of ``/v2/rerank``: its position in the request and its score."""

    index: int
    relevance_score: float = Field(
        description="the program's score (not normalised to [0, 1]; compare within a request)"
    )


class V1Result(BaseModel):
    """One ranked document: its position in the request, its score, its text if asked."""

    index: int
    relevance_score: float = Field(
        description="the program's score (not normalised to [0, 1]; compare within a request)"
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
    """The documents ranked, best first (ties: earlier in the request first)."""

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
    """A body FastAPI could not read at all (not UTF-8 text): ``400``."""

    detail: str


_UNREADABLE: dict[int | str, dict[str, Any]] = {
    400: {"model": Problem, "description": "The body is not UTF-8 text"}
}


class Reload(BaseModel):
    """``POST /admin/reload``: whether a new version now answers, its documents, any error."""

    swapped: bool
    documents: int
    error: str = ""


class Readiness(BaseModel):
    """``GET /ready``: ``ready``, or ``warming up`` (with status 503)."""

    status: str


class Health(BaseModel):
    """``GET /health``."""

    status: str
    program: str
    sandboxed: bool
    encoder: str
    documents: int
    first_stage: str
    shortlist: int
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
    reranker: Reranker, model: str | None, query: str, texts: list[str], top_n: int | None,
    models: tuple[str, str],
) -> tuple[Any, V1Meta | None]:  # fmt: skip
    """What ``/v1`` and ``/v2/rerank`` share: the model check, the ranking and its meta.

    Returns ``(ranking, meta)``, or ``(refusal, None)``: a 422 for an unknown model or a bad
    document.
    """
    refused = _unknown_model(model, models)
    if refused is not None:
        return refused, None
    documents: list[TextInput] = list(texts)
    try:
        ranked = reranker.rerank_texts(query, documents, min(top_n or len(texts), len(texts)))
    except CandidateRequestError as exc:
        return _candidate_problem("documents", exc), None
    meta = V1Meta(
        program=models[0], encoder=models[1], documents=len(texts), live_documents=ranked.live
    )
    return ranked, meta


def _rerank_v2(reranker: Reranker, body: V2RerankRequest, models: tuple[str, str]) -> Any:
    """Answer ``/v2/rerank`` (a 422 for an unknown model or a bad document)."""
    texts = list(body.documents)
    ranked, meta = _rank_texts(reranker, body.model, body.query, texts, body.top_n, models)
    if meta is None:
        return ranked
    return V2RerankResponse(
        id=str(uuid.uuid4()),
        results=[V2Result(index=r.position, relevance_score=r.score) for r in ranked.results],
        meta=meta,
    )


def _rerank_v1(reranker: Reranker, body: V1RerankRequest, models: tuple[str, str]) -> Any:
    """Answer ``/v1/rerank`` (a 422 for an unknown model or a bad document)."""
    texts = [d if isinstance(d, str) else d.text for d in body.documents]
    ranked, meta = _rank_texts(reranker, body.model, body.query, texts, body.top_n, models)
    if meta is None:
        return ranked
    results = [
        V1Result(
            index=r.position,
            relevance_score=r.score,
            document=V1Document(text=texts[r.position]) if body.return_documents else None,
        )
        for r in ranked.results
    ]
    return V1RerankResponse(results=results, meta=meta)


def _install_error_handlers(app: FastAPI, program: str) -> None:
    """422 for a malformed request, 500 naming the program for a failed run or live work."""
    from fastapi import Request
    from fastapi.encoders import jsonable_encoder
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _clean(jsonable_encoder(exc.errors()))
        summary = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in errors
        )
        return JSONResponse(status_code=422, content={"detail": errors, "error": summary})

    @app.exception_handler(CandidateError)
    async def failed(request: Request, exc: CandidateError) -> JSONResponse:
        error = _clean(f"program {program} failed ({exc.status.value}): {exc.reason}")
        return JSONResponse(status_code=500, content={"detail": error, "error": error})

    @app.exception_handler(DeployError)
    async def live_failed(request: Request, exc: DeployError) -> JSONResponse:
        # The recording pass over documents the index lacks failed (/v1/rerank).
        error = _clean(str(exc))
        return JSONResponse(status_code=500, content={"detail": error, "error": error})


def create_app(
    reranker: Reranker | LiveIndex,
    *,
    first_stage: FirstStage = "dense",
    shortlist: int = DEFAULT_SHORTLIST,
) -> FastAPI:
    """The FastAPI app serving ``reranker``.

    Args:
        reranker: the deployed program, or a :class:`~embedding_ttc.deploy.live_index.
            LiveIndex` of it (a bare reranker is wrapped in one: ``POST /admin/reload``
            then swaps in a newly published version; ``serve`` also watches for one).
        first_stage: the first stage of ``/search`` (``dense``, ``exact`` or ``bm25``).
        shortlist: candidates ``/search`` reranks (at least ``k``).

    Raises:
        MissingExtraError: FastAPI or uvicorn is not installed (the ``serve`` extra).

    """
    require_serve_extra()
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    live = reranker if isinstance(reranker, LiveIndex) else LiveIndex(reranker)

    def current() -> Reranker:
        """The reranker of the version answering now (read once per request)."""
        return live.current

    manifest = current().index.manifest
    app = FastAPI(
        title="embedding-ttc reranker",
        version=manifest.embedding_ttc_version,
        description=f"Program {manifest.program.name} over {manifest.counts.documents} "
        f"documents, encoder {manifest.encoder.name}.",
    )

    _install_error_handlers(app, manifest.program.name)

    @app.get("/health", response_model=Health)
    def health() -> Health:
        """Liveness, and what this service serves."""
        manifest = current().index.manifest
        return Health(
            status="ok",
            program=manifest.program.name,
            sandboxed=manifest.program.discovered is not None,
            encoder=manifest.encoder.name,
            documents=manifest.counts.documents,
            first_stage=first_stage,
            shortlist=shortlist,
            worker=os.getpid(),
        )

    @app.get("/ready", response_model=Readiness, responses={503: {"model": Readiness}})
    def ready() -> Any:
        """Readiness: 200 once a warm-up query was answered, 503 before.

        ``serve`` runs the warm-up (encoder, index pages, program) before the port opens;
        ``/health`` is liveness only.
        """
        if current().ready:
            return Readiness(status="ready")
        return JSONResponse(status_code=503, content={"status": "warming up"})

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

        A document the index holds (the same text) is scored from its stored index-time
        work; any other has it computed for this request.
        """
        return _rerank_v1(current(), body, models)

    @app.post(
        "/v2/rerank",
        response_model=V2RerankResponse,
        responses=_UNREADABLE,
    )
    def rerank_v2(body: V2RerankRequest) -> Any:
        """Rank the given documents (texts) for the query; Cohere's current rerank API (v2)."""
        return _rerank_v2(current(), body, models)

    @app.post("/admin/reload", response_model=Reload)
    def reload() -> Reload:
        """Swap in the index's newly published version, if any (``serve`` also watches)."""
        done = live.refresh()
        return Reload(swapped=done.swapped, documents=done.documents, error=done.error)

    return app


def serve(app: FastAPI, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info") -> None:
    """Run ``app`` under uvicorn until SIGINT or SIGTERM, then return (a clean shutdown).

    uvicorn drains open requests on a signal, then re-raises it with the handler that was
    installed before it started; installing handlers that only note the signal makes that
    re-raise a no-op, so the process ends normally (exit status 0, no traceback).
    """
    require_serve_extra()
    import signal

    import uvicorn

    received: list[int] = []

    def note(signum: int, frame: object) -> None:
        received.append(signum)

    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level))
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
