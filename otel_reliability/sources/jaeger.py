"""``jaeger://HOST:PORT[/BASE]``: traces pulled from Jaeger's query API v3 (HTTP, OTLP/JSON).

- ``GET /api/v3/traces?query.service_name=…&query.start_time_min=…&query.start_time_max=…``
  finds the traces with a span starting in the window (of one service; without
  ``--service``, of every service ``GET /api/v3/services`` lists), at most
  ``query.num_traces`` per request; ``GET /api/v3/traces/{id}`` reads one trace by id.
- The API has no cursor, and a store need not answer in time order (Jaeger's memory store
  answers in arrival order), so a full page is paged by halving its window until each part
  answers less than a page: no trace is skipped whatever the order, and a trace found in
  two parts is kept once. Newer halves are read first, so ``--limit`` keeps the newest.
- ``query.raw_traces=true``: the spans as stored, without Jaeger's adjusters (clock-skew
  correction would move their times).
- Jaeger's HTTP gateway takes no attribute filter (its gRPC API does), so ``--attribute`` is
  applied here, to the traces read: ``--limit`` counts the traces kept.

The answer (``{"result": TracesData}``) is OTLP/JSON, read by the same decoder as trace
files: the same span objects, the same engine, the same verdicts.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable
from urllib.parse import quote, urlencode, urlsplit

from ..model import SpanData
from .backend_http import BackendError, BackendQuery, Budget, Pulled, Reply, get, has_attributes
from .decoded import Decoded, TraceInputError
from .otlp_json import decode_object

SCHEME = "jaeger://"
WHAT_IT_READS = [
    "Jaeger keeps what OTLP sent (attributes, events, links, status) in its v2 stores; a store "
    "fed through a v1 path (the Jaeger Thrift/Protobuf model) keeps array and map attributes as "
    "text, which conventions that carry tool lists in arrays then cannot read",
    "no log records: GenAI content that an instrumentation wrote as log records is not in "
    "Jaeger, so calls it alone records are not seen",
]


def base_address(url: str) -> str:
    """The HTTP base of a ``jaeger://`` URL.

    >>> base_address("jaeger://localhost:16686"), base_address("jaeger://tracing:80/jaeger/")
    ('http://localhost:16686', 'http://tracing:80/jaeger')
    >>> base_address("jaeger://")
    Traceback (most recent call last):
    ...
    otel_reliability.sources.backend_http.BackendError: jaeger://: expected jaeger://HOST:PORT (Jaeger's query API)
    """
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None or parts.query or parts.fragment:
        raise BackendError(f"{url}: expected jaeger://HOST:PORT (Jaeger's query API)")
    return f"http://{parts.netloc}{parts.path.rstrip('/')}"


def pull(url: str, query: BackendQuery) -> Pulled:
    """The traces of ``query`` in the Jaeger at ``url``: every span of each, at most
    ``query.limit`` traces; ``BackendError`` when Jaeger cannot be read."""
    base = base_address(url)
    reader = _Reader(url, base, query)
    if query.trace_ids:
        for trace_id in query.trace_ids:
            reader.read_trace(trace_id)
    else:
        services = [query.service] if query.service else reader.services()
        for service in services:
            if reader.full():
                break
            reader.search(service)
        if reader.full() and reader.more:
            reader.pulled.notes.append(
                f"stopped at --limit {query.limit} traces: the rest of the window was not read "
                "(narrow --since/--until, or raise --limit)"
            )
    reader.pulled.traces = len(reader.kept)
    reader.pulled.spans = [span for spans in reader.kept.values() for span in spans]
    return reader.pulled


class _Reader:
    def __init__(self, url: str, base: str, query: BackendQuery) -> None:
        self.url, self.base, self.query = url, base, query
        self.budget = Budget(url, query.max_bytes)
        self.kept: dict[int, list[SpanData]] = {}
        self.more = False  # the backend may hold traces of the query that were not read
        self.pulled = Pulled(url, limits=list(WHAT_IT_READS))

    def full(self) -> bool:
        return len(self.kept) >= self.query.limit

    def services(self) -> list[str]:
        reply = self._get("/api/v3/services", {})
        if reply.status != 200:
            raise reply.refusal(self.url)
        document = reply.json(self.url)
        services = document.get("services") if isinstance(document, dict) else None
        if not isinstance(services, list) or not all(isinstance(s, str) for s in services):
            raise BackendError(f"{self.url}: {reply.address} answered no list of services")
        return sorted(services)

    def search(self, service: str) -> None:
        """Every trace of ``service`` in the window, newest half first, halving full pages."""
        windows = [(self.query.since_ns, self.query.until_ns)]
        while windows:
            if self.full():
                self.more = True
                return
            low, high = windows.pop()
            found = self._find(service, low, high)
            if len(found) >= self.query.page_size:
                if high > low:
                    middle = (low + high) // 2
                    windows += [(low, middle), (middle + 1, high)]  # the newer half is popped first
                    continue
                self.pulled.notes.append(
                    f"service {service}: {len(found)} or more traces start within one nanosecond at "
                    f"{_rfc3339(low)}: only a page of them was read (raise --page-size)"
                )
            self._keep(found.values())

    def read_trace(self, trace_id: int) -> None:
        reply = self._get(f"/api/v3/traces/{trace_id:032x}", {"raw_traces": "true"})
        if reply.status == 404:
            raise BackendError(f"{self.url}: trace {trace_id:032x} is not in Jaeger ({reply.address} answered 404)")
        self._keep(self._traces(reply).values())

    def _find(self, service: str, low: int, high: int) -> dict[int, list[SpanData]]:
        params = {
            "query.service_name": service,
            "query.start_time_min": _rfc3339(low),
            "query.start_time_max": _rfc3339(high),
            "query.num_traces": str(self.query.page_size),
            "query.raw_traces": "true",
        }
        if self.query.operation:
            params["query.operation_name"] = self.query.operation
        reply = self._get("/api/v3/traces", params)
        if reply.status == 404 and b"No traces found" in reply.body:  # Jaeger's way of saying none
            return {}
        return self._traces(reply)

    def _keep(self, traces: Iterable[list[SpanData]]) -> None:
        for spans in traces:
            trace_id = spans[0].trace_id
            if trace_id in self.kept or not has_attributes(spans, self.query.attributes):
                continue
            if self.full():
                self.more = True
                return
            self.kept[trace_id] = spans

    def _traces(self, reply: Reply) -> dict[int, list[SpanData]]:
        if reply.status != 200:
            raise reply.refusal(self.url)
        document = reply.json(self.url)
        result = document.get("result") if isinstance(document, dict) else None
        if not isinstance(result, dict):
            raise BackendError(f"{self.url}: {reply.address} answered no traces (no \"result\" object)")
        decoded = Decoded()
        try:
            decode_object(result, decoded, "result.")
            decoded.raise_if_rejected()
        except TraceInputError as exc:
            raise BackendError(f"{self.url}: {reply.address}: {exc}") from None
        traces: dict[int, list[SpanData]] = {}
        for span in decoded.spans:
            traces.setdefault(span.trace_id, []).append(span)
        return traces

    def _get(self, path: str, params: dict[str, str]) -> Reply:
        address = self.base + quote(path) + (f"?{urlencode(params)}" if params else "")
        return get(address, self.url, self.budget, self.query.timeout_s)


def _rfc3339(ns: int) -> str:
    """Unix nanoseconds as RFC 3339 with nanoseconds, as Jaeger parses them.

    >>> _rfc3339(1_700_000_000_123_456_789)
    '2023-11-14T22:13:20.123456789Z'
    """
    seconds, fraction = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + f".{fraction:09d}Z"
