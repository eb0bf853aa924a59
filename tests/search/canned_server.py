"""A canned LLM HTTP server for tests: OpenAI chat completions and Anthropic messages.

It listens on ``127.0.0.1`` at a free port, serves from a thread (stdlib ``http.server``), and
answers each request with the next item of a queue, recording every request it received. The
same queue serves both API shapes: a :class:`Reply` is rendered as an OpenAI
``chat.completion`` for ``POST .../chat/completions`` and as an Anthropic ``message`` for
``POST .../messages``, so one server backs every proposer in a contract test. Failure answers
(:func:`http_error`, :func:`malformed_json`, :func:`hang`) exercise the error paths.

Use it as a context manager, or wrap it in a fixture::

    with CannedServer([Reply("```python\\ndef program(Q, D, S, ctx): ...\\n```")]) as server:
        proposer = OpenAIBackend(model="canned", base_url=server.openai_base_url, api_key="x")
        proposal = proposer.propose(state)
    assert server.prompts == [render_prompt(state)]

    @pytest.fixture()
    def canned_server():
        with CannedServer() as server:
            yield server

Behaviour worth knowing:

* an empty queue answers 500 with ``x-should-retry: false`` (the official clients then do not
  retry) and the message ``canned server: no reply queued``, so a test that forgot a reply
  fails at once instead of hanging in retries;
* :func:`http_error` answers carry ``retry-after-ms: 1`` so the clients' built-in retries run
  in milliseconds instead of their default exponential backoff (0.5 s and up);
* :func:`hang` waits up to its delay *or until the server is closed*, so closing the server
  never waits for a hanging handler;
* an unknown path answers 404 without consuming the queue.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = [
    "CannedServer",
    "Raw",
    "RecordedRequest",
    "Reply",
    "hang",
    "http_error",
    "malformed_json",
]


@dataclass(frozen=True)
class Reply:
    """A successful completion, rendered in the shape of the API that was called.

    Attributes:
        text: the assistant's whole reply.
        tokens_in: reported prompt tokens (``prompt_tokens`` / ``input_tokens``).
        tokens_out: reported completion tokens (``completion_tokens`` / ``output_tokens``).
        model: the ``model`` field of the answer.
        usage: whether to include the usage object (some local servers omit it).

    """

    text: str
    tokens_in: int = 1234
    tokens_out: int = 321
    model: str = "canned-model"
    usage: bool = True


@dataclass(frozen=True)
class Raw:
    """A raw HTTP answer, sent as is after an optional delay.

    Attributes:
        status: the HTTP status code.
        body: the response body.
        headers: extra response headers.
        content_type: the ``Content-Type`` header.
        delay: seconds to wait before answering (cut short when the server closes).

    """

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str = "application/json"
    delay: float = 0.0


Canned = Reply | Raw


def http_error(status: int = 500, message: str = "canned failure") -> Raw:
    """An API error answer (JSON error body) that asks the client to retry after 1 ms."""
    body = json.dumps({"error": {"message": message, "type": "server_error"}}).encode()
    return Raw(status=status, body=body, headers=(("retry-after-ms", "1"),))


def malformed_json() -> Raw:
    """A 200 answer whose body claims to be JSON but does not parse."""
    return Raw(status=200, body=b'{"id": "broken", "choices": [{"message": ')


def hang(seconds: float = 30.0) -> Raw:
    """An answer that comes only after ``seconds`` (or never, if the server closes first)."""
    return Raw(status=200, body=b"{}", delay=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received.

    Attributes:
        method: the HTTP method.
        path: the request path (``/v1/chat/completions``, ``/v1/messages``).
        headers: the request headers, names lower-cased.
        body: the decoded JSON body (``None`` when it was not JSON).

    """

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def api(self) -> str:
        """``"openai"``, ``"anthropic"`` or ``"unknown"``, from the path."""
        if self.path.endswith("/chat/completions"):
            return "openai"
        if self.path.endswith("/messages"):
            return "anthropic"
        return "unknown"

    @property
    def prompt(self) -> str | None:
        """The text of the last user message (both API shapes), or ``None``."""
        if not isinstance(self.body, dict):
            return None
        users = [m for m in self.body.get("messages", []) if m.get("role") == "user"]
        if not users:
            return None
        content = users[-1].get("content")
        if isinstance(content, list):  # content blocks
            return "".join(b.get("text", "") for b in content if isinstance(b, dict))
        return content if isinstance(content, str) else None


def _openai_body(reply: Reply, serial: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": f"chatcmpl-canned-{serial}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": reply.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
    }
    if reply.usage:
        body["usage"] = {
            "prompt_tokens": reply.tokens_in,
            "completion_tokens": reply.tokens_out,
            "total_tokens": reply.tokens_in + reply.tokens_out,
        }
    return body


def _anthropic_body(reply: Reply, serial: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": f"msg_canned_{serial}",
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": [{"type": "text", "text": reply.text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
    }
    body["usage"] = {
        "input_tokens": reply.tokens_in if reply.usage else 0,
        "output_tokens": reply.tokens_out if reply.usage else 0,
    }
    return body


@dataclass
class _State:
    queue: deque[Canned] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)
    served: int = 0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the clients expect; every answer has a length
    state: _State  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet (pytest shows the test's own output)."""

    def do_GET(self) -> None:
        self._send(404, b'{"error": {"message": "not found"}}', "application/json", ())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = RecordedRequest(
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        if request.api == "unknown":
            self._send(404, b'{"error": {"message": "not found"}}', "application/json", ())
            return
        with self.state.lock:
            self.state.requests.append(request)
            canned = self.state.queue.popleft() if self.state.queue else None
            self.state.served += 1
            serial = self.state.served
        if canned is None:
            message = {"error": {"message": "canned server: no reply queued", "type": "test"}}
            headers = (("x-should-retry", "false"),)
            self._send(500, json.dumps(message).encode(), "application/json", headers)
        elif isinstance(canned, Reply):
            shape = _openai_body if request.api == "openai" else _anthropic_body
            self._send(200, json.dumps(shape(canned, serial)).encode(), "application/json", ())
        else:
            if canned.delay > 0 and self.state.closing.wait(canned.delay):
                return  # the server is closing: drop the connection without an answer
            self._send(canned.status, canned.body, canned.content_type, canned.headers)

    def _send(
        self, status: int, body: bytes, content_type: str, headers: Iterable[tuple[str, str]]
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except OSError:  # the client gave up (timeout) and closed the socket
            self.close_connection = True


class CannedServer:
    """An OpenAI- and Anthropic-compatible HTTP server answering from a queue.

    Args:
        replies: the answers, in order; more can be added with :meth:`enqueue`.

    Attributes:
        url: ``http://127.0.0.1:PORT`` (the Anthropic client's ``base_url``).
        openai_base_url: ``url + "/v1"`` (the OpenAI client's ``base_url``).

    """

    def __init__(self, replies: Iterable[Canned] = ()) -> None:
        self._state = _State(queue=deque(replies))
        handler = type("CannedHandler", (_Handler,), {"state": self._state})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a hanging handler must not delay close()
        self._thread: threading.Thread | None = None
        port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{port}"
        self.openai_base_url = f"{self.url}/v1"

    def start(self) -> CannedServer:
        """Start serving in a daemon thread; returns ``self``."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, release hanging handlers and close the socket."""
        self._state.closing.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> CannedServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def enqueue(self, *replies: Canned) -> None:
        """Append answers to the queue."""
        with self._state.lock:
            self._state.queue.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received on a known route, in order (a copy)."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def prompts(self) -> list[str | None]:
        """The last user message of every request, in order."""
        return [r.prompt for r in self.requests]

    @property
    def pending(self) -> int:
        """Answers still queued."""
        with self._state.lock:
            return len(self._state.queue)
