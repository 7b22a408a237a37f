"""``phoenix://HOST:PORT/PROJECT``: the traces of a Phoenix project, through its REST API.

``GET /v1/projects/{project}/spans`` lists a project's spans (cursor paging, newest
first, ``start_time``/``end_time``, ``trace_id``, ``attribute`` filters). A pull takes two
passes, so that every trace is whole however the window cuts it: the first pages through
the spans starting in the window to learn which traces they belong to (at most
``--limit`` traces, newest first); the second reads every span of those traces, a few
traces per request, with no time bound.

Phoenix keeps spans in its own shape, not OTLP's, so they are turned back into the
``SpanData`` an OTLP reader gives: ``span_kind`` becomes ``openinference.span.kind``
again (Phoenix lifts it out of the attributes), attribute lists become tuples, times come
from its RFC 3339 stamps. What does not survive the trip is listed in ``WHAT_IT_READS``
(``inspect`` prints it for a pulled trace; ``docs/backends.md``).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from ..adapters.openinference import KIND
from ..model import STATUS_ERROR, STATUS_OK, STATUS_UNSET, EventData, SpanData
from .backend_http import BackendError, BackendQuery, Budget, Pulled, Reply, get, has_attributes

SCHEME = "phoenix://"
SPANS_PER_REQUEST = 1000  # Phoenix's largest page
TRACES_PER_REQUEST = 20  # trace ids in one second-pass request (they travel in the URL)
SPAN_KIND = KIND  # where OpenInference says what a span is: Phoenix keeps it in a column of its own
JSON_STRING_KEYS = ("metadata", "llm.prompt_template.variables")  # what Phoenix parses as JSON at intake
UNKNOWN_KIND = "UNKNOWN"  # what Phoenix stores for a span that had no span kind
_STATUS = {"OK": STATUS_OK, "ERROR": STATUS_ERROR, "UNSET": STATUS_UNSET}
WHAT_IT_READS = [
    "Phoenix keeps times to the microsecond: spans that started within the same microsecond "
    "lose their order",
    "Phoenix stores no span kind, links or resource, and no log records: calls only log "
    "records carry are not seen",
    "Phoenix adds OpenInference attributes it derives from gen_ai.* ones (the corpus of "
    "every framework tested reads the same through it); the JSON text of metadata and "
    "llm.prompt_template.variables is rebuilt from the keys Phoenix parsed it into (the same "
    "content, not the same text), and those keys are kept too: Phoenix answers JSON text and "
    "flat keys alike",
]


def project_address(url: str) -> tuple[str, str]:
    """The HTTP base and the project of a ``phoenix://`` URL.

    >>> project_address("phoenix://localhost:6006/agents")
    ('http://localhost:6006', 'agents')
    >>> project_address("phoenix://localhost:6006")
    Traceback (most recent call last):
    ...
    otel_reliability.sources.backend_http.BackendError: phoenix://localhost:6006: expected phoenix://HOST:PORT/PROJECT
    """
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    project = parts.path.strip("/")
    if not parts.hostname or port is None or not project or "/" in project or parts.query or parts.fragment:
        raise BackendError(f"{url}: expected phoenix://HOST:PORT/PROJECT")
    return f"http://{parts.netloc}", project


def pull(url: str, query: BackendQuery) -> Pulled:
    """The traces of ``query`` in the Phoenix project at ``url``, every span of each, at most
    ``query.limit`` traces; ``BackendError`` when Phoenix cannot be read."""
    base, project = project_address(url)
    if query.service:
        raise BackendError(f"{url}: --service is Jaeger's; a Phoenix URL names its project instead")
    reader = _Reader(url, base, project, query)
    trace_ids = list(query.trace_ids) or reader.trace_ids_in_window()
    spans = reader.spans_of(trace_ids)
    pulled = Pulled(url, limits=list(WHAT_IT_READS), notes=reader.notes)
    by_trace: dict[int, list[SpanData]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    kept = [t for t in by_trace if has_attributes(by_trace[t], query.attributes)]
    missing = [t for t in query.trace_ids if t not in by_trace]
    if missing:
        raise BackendError(f"{url}: trace {missing[0]:032x} is not in project {project}")
    pulled.spans = [span for t in kept for span in by_trace[t]]
    pulled.traces = len(kept)
    return pulled


class _Reader:
    def __init__(self, url: str, base: str, project: str, query: BackendQuery) -> None:
        self.url, self.base, self.project, self.query = url, base, project, query
        self.budget = Budget(url, query.max_bytes)
        self.notes: list[str] = []

    def trace_ids_in_window(self) -> list[int]:
        """The traces with a span starting in the window, newest first, at most ``limit``."""
        params: dict[str, Any] = {
            "start_time": _rfc3339(self.query.since_ns),
            "end_time": _rfc3339(self.query.until_ns + 1),  # Phoenix's end is exclusive, ours inclusive
            "limit": min(SPANS_PER_REQUEST, max(self.query.page_size, 1)),
        }
        if self.query.operation:
            params["name"] = self.query.operation
        found: dict[int, None] = {}  # in order of first sight
        for span in self._pages(params):
            if span.trace_id not in found:
                if len(found) >= self.query.limit:
                    self.notes.append(
                        f"stopped at --limit {self.query.limit} traces: the window holds more "
                        "(narrow --since/--until, or raise --limit)"
                    )
                    break
                found[span.trace_id] = None
        return list(found)

    def spans_of(self, trace_ids: list[int]) -> list[SpanData]:
        spans: list[SpanData] = []
        for start in range(0, len(trace_ids), TRACES_PER_REQUEST):
            batch = trace_ids[start:start + TRACES_PER_REQUEST]
            params = {"trace_id": [f"{t:032x}" for t in batch], "limit": SPANS_PER_REQUEST}
            spans.extend(self._pages(params))
        return spans

    def _pages(self, params: dict[str, Any]):
        cursor = None
        while True:
            page = dict(params, **({"cursor": cursor} if cursor else {}))
            address = f"{self.base}/v1/projects/{quote(self.project, safe='')}/spans?{urlencode(page, doseq=True)}"
            reply = get(address, self.url, self.budget, self.query.timeout_s)
            if reply.status == 404:
                raise BackendError(f"{self.url}: Phoenix has no project {self.project!r} ({address} answered 404)")
            if reply.status != 200:
                raise reply.refusal(self.url)
            document = reply.json(self.url)
            data = document.get("data") if isinstance(document, dict) else None
            if not isinstance(data, list):
                raise BackendError(f"{self.url}: {address} answered no list of spans (no \"data\")")
            for index, item in enumerate(data):
                yield _span(item, reply, index, self.url)
            cursor = document.get("next_cursor")
            if not cursor:
                return


def _span(item: Any, reply: Reply, index: int, source: str) -> SpanData:
    """One span of Phoenix's answer as ``SpanData``; ``BackendError`` naming it when it is not one."""
    try:
        context = item["context"]
        attributes = {key: _value(value) for key, value in (item.get("attributes") or {}).items()}
        _restore_json_strings(attributes)
        kind = item.get("span_kind")
        if isinstance(kind, str) and kind and kind != UNKNOWN_KIND:
            attributes.setdefault(SPAN_KIND, kind)
        parent = item.get("parent_id")
        events = tuple(
            EventData(
                str(event.get("name", "")),
                {key: _value(value) for key, value in (event.get("attributes") or {}).items()},
                _ns(event["timestamp"]) if event.get("timestamp") else 0,
            )
            for event in item.get("events") or ()
        )
        return SpanData(
            int(context["trace_id"], 16),
            int(context["span_id"], 16),
            int(parent, 16) if parent else 0,
            str(item.get("name", "")),
            _ns(item["start_time"]),
            _ns(item["end_time"]) if item.get("end_time") else _ns(item["start_time"]),
            attributes,
            events,
            _STATUS.get(str(item.get("status_code") or "UNSET").upper(), STATUS_UNSET),
            str(item.get("status_message") or ""),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BackendError(f"{source}: {reply.address}: data[{index}] is not a span ({type(exc).__name__}: {exc})") from None


def _restore_json_strings(attributes: dict[str, Any]) -> None:
    """Phoenix parses the JSON text of ``metadata`` and ``llm.prompt_template.variables`` at
    intake and answers it as nested keys (``metadata.langgraph_node``), the same keys it
    answers for attributes sent flat (BeeAI sends ``metadata.class_name``): which form was
    sent cannot be told, so both are given, the keys as answered and the JSON text
    rebuilt from them (adapters read LangGraph's node and agent names there).

    >>> attributes = {"metadata.ls_integration": "langgraph", "metadata.steps.0.n": 1}
    >>> _restore_json_strings(attributes)
    >>> attributes["metadata"], attributes["metadata.ls_integration"]
    ('{"ls_integration": "langgraph", "steps": [{"n": 1}]}', 'langgraph')
    """
    for key in JSON_STRING_KEYS:
        prefix = key + "."
        nested = {k[len(prefix):]: attributes[k] for k in attributes if k.startswith(prefix)}
        if nested and key not in attributes:
            attributes[key] = json.dumps(_unflattened(nested), ensure_ascii=False)
        elif key in attributes and not isinstance(attributes[key], str):
            attributes[key] = json.dumps(_plain(attributes[key]), ensure_ascii=False)


def _unflattened(flat: dict[str, Any]) -> Any:
    """Dotted keys as nested objects; an object whose keys are 0…n-1 as a list (Phoenix's
    flattening of a list of objects)."""
    tree: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = tree
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else node
        node[leaf] = _plain(value)
    return _lists(tree)


def _lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    items = {k: _lists(v) for k, v in node.items()}
    if items and sorted(items) == sorted(map(str, range(len(items)))):
        return [items[str(i)] for i in range(len(items))]
    return items


def _plain(value: Any) -> Any:
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def _value(value: Any) -> Any:
    """An attribute value as the OTLP readers give it: arrays as tuples."""
    if isinstance(value, list):
        return tuple(_value(v) for v in value)
    if isinstance(value, dict):
        return {k: _value(v) for k, v in value.items()}
    return value


def _ns(stamp: str) -> int:
    """An RFC 3339 stamp (Phoenix writes microseconds) as Unix nanoseconds, exactly.

    >>> _ns("2026-12-01T10:00:00.000001+00:00") - _ns("2026-12-01T10:00:00Z")
    1000
    """
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    whole = moment.replace(microsecond=0)
    return int(whole.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _rfc3339(ns: int) -> str:
    """Unix nanoseconds as the RFC 3339 stamp Phoenix parses (microseconds, rounded down)."""
    seconds, fraction = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + f".{fraction // 1000:06d}Z"
