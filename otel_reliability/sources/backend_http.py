"""What the backend sources (``jaeger``, ``phoenix``) share: the query a user asks, the
errors they raise, and one bounded HTTP GET.

Pulling from a tracing backend is reading a file over the network, so the same rules hold:
every failure is one ``BackendError`` (a ``TraceInputError``: ``eval`` exits 2) whose
message starts with the backend URL the user gave and names the HTTP address it asked,
and every answer is read against a byte budget shared by the whole pull, so that a
backend cannot make the command hold more than ``max_bytes`` of answers.

Only the standard library's HTTP client is used: reading a backend needs no extra.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from typing import Any, Sequence
from urllib.error import HTTPError, URLError
from urllib.request import Request, urlopen

from ..model import SpanData
from .decoded import TraceInputError

DEFAULT_LIMIT = 1000  # traces per pull
DEFAULT_PAGE_SIZE = 100  # traces (Jaeger) or spans (Phoenix) asked for in one request
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_BYTES = 512 << 20  # answers of one pull, as much as one gzip trace file may inflate to
ERROR_BODY_BYTES = 2048  # of a refusal's body, enough for the backend's own message
USER_AGENT = "otel-reliability"


class BackendError(TraceInputError):
    """A backend that cannot be reached, refuses, or answers what cannot be read; the message
    starts with the backend URL."""


@dataclass(frozen=True, slots=True)
class BackendQuery:
    """Which traces to pull. Times are Unix nanoseconds, both ends included."""

    since_ns: int
    until_ns: int
    service: str | None = None  # Jaeger: a service name (default: every service it lists)
    operation: str | None = None  # Jaeger: a span name some span of the trace must have
    attributes: tuple[tuple[str, str], ...] = ()  # some span of the trace has each, compared as text
    trace_ids: tuple[int, ...] = ()  # these traces, instead of a search
    limit: int = DEFAULT_LIMIT
    page_size: int = DEFAULT_PAGE_SIZE
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_bytes: int = DEFAULT_MAX_BYTES


@dataclass(slots=True)
class Pulled:
    """The spans of the traces a pull found, and what a reader of them should know: what
    the backend cannot give (``limits``) and where this pull stopped short (``notes``)."""

    source: str
    spans: list[SpanData] = field(default_factory=list)
    traces: int = 0
    limits: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Budget:
    """Bytes of answers one pull may still read."""

    source: str
    left: int

    def take(self, size: int, address: str) -> None:
        if size > self.left:
            raise BackendError(
                f"{self.source}: the answers exceed the pull's byte bound (at {address}); narrow "
                "--since/--until, lower --limit, or raise --max-pulled-mib"
            )
        self.left -= size


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: bytes
    address: str

    def json(self, source: str) -> Any:
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError) as exc:
            raise BackendError(f"{source}: {self.address} answered {self.status} with what is not JSON ({exc})") from None

    def refusal(self, source: str) -> BackendError:
        """The error for an answer that is not a success, with the backend's own message."""
        said = _message_in(self.body)
        return BackendError(f"{source}: {self.address} refused with HTTP {self.status}{': ' + said if said else ''}")


def get(address: str, source: str, budget: Budget, timeout_s: float, headers: dict[str, str] | None = None) -> Reply:
    """GET ``address``; a reply of any status comes back (the caller knows which mean "none"),
    transport failures raise ``BackendError``."""
    request = Request(address, headers={"Accept": "application/json", "User-Agent": USER_AGENT, **(headers or {})})
    try:
        with urlopen(request, timeout=timeout_s) as response:  # noqa: S310 - the address is built from a user's URL
            body = response.read(budget.left + 1)
            status = response.status
    except HTTPError as exc:
        with exc:
            body = exc.read(ERROR_BODY_BYTES)
        return Reply(exc.code, body, address)
    except (TimeoutError, socket.timeout):
        raise BackendError(f"{source}: {address} did not answer within {timeout_s:g} s (--backend-timeout)") from None
    except URLError as exc:
        reason = exc.reason.strerror if isinstance(exc.reason, OSError) and exc.reason.strerror else exc.reason
        raise BackendError(f"{source}: cannot reach {address}: {reason}") from None
    except (OSError, ValueError) as exc:  # a connection reset mid-answer, an unusable address
        raise BackendError(f"{source}: cannot read {address}: {exc}") from None
    budget.take(len(body), address)
    return Reply(status, body, address)


def _message_in(body: bytes) -> str:
    """The human part of an error body: a JSON error's message (Jaeger nests it, Phoenix
    puts it at the top), else the text itself; one line, cut short."""
    text = body.decode("utf-8", "replace").strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        inner = parsed.get("error")
        if isinstance(inner, dict):
            parsed = inner
        for key in ("message", "detail", "error"):
            if isinstance(parsed.get(key), str):
                text = parsed[key]
                break
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."


def has_attributes(spans: Sequence[SpanData], wanted: Sequence[tuple[str, str]]) -> bool:
    """Some span of the trace has each wanted attribute, compared as text (as Jaeger compares
    tags): the ``--attribute`` filter, applied to what was pulled.

    >>> has_attributes([SpanData(1, 2, 0, "run", 0, 1, {"ok": True})], [("ok", "true")])
    True
    """
    return all(any(_text(span.attributes.get(key)) == value for span in spans) for key, value in wanted)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
