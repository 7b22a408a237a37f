"""OpenTelemetry SDK ``ReadableSpan`` → ``SpanData`` (the processor reads every span it sees this way).

The SDK has already cleaned attribute values into the shapes ``SpanData`` uses (str,
bool, int, float, bytes, None, tuples, dicts), so the only work is copying fields.

For the SDK's own span classes it reads the fields the public properties wrap (each
property costs a Python call; ``events`` even copies the list under a lock) and copies
the attributes with ``BoundedAttributes.copy()`` — one C-level ``dict.copy``. Anything
else, and any SDK whose internals differ, takes the public-API path with the same
result. ``from_ended_span`` skips even that copy, for a reader that only looks.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace import Event, ReadableSpan, Span
from opentelemetry.trace import StatusCode

from ..model import SERVICE_VERSION, STATUS_ERROR, STATUS_OK, STATUS_UNSET, EventData, LogData, SpanData

# The tracer creates the private ``_Span`` subclass; ``on_end`` hands processors a plain ``ReadableSpan``.
_FAST_TYPES = frozenset({Span, ReadableSpan, getattr(sdk_trace, "_Span", Span)})
_EMPTY: Mapping[str, Any] = {}
_ERROR = StatusCode.ERROR
_OK = StatusCode.OK


def _copy(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    if not attributes:
        return {}
    try:
        copied = attributes.copy()  # type: ignore[attr-defined]
    except AttributeError:
        return dict(attributes)
    return copied if isinstance(copied, dict) else dict(attributes)


def attributes_view(span: Any) -> Mapping[str, Any]:
    """The span's attributes for reading only, without a copy where the SDK allows.

    ``BoundedAttributes.get`` raises and catches ``KeyError`` for every missing key;
    its plain storage dict answers the same question about ten times faster.
    """
    if type(span) in _FAST_TYPES:
        attributes = getattr(span, "_attributes", None)
        storage = getattr(attributes, "_dict", attributes)
        if type(storage) is dict:
            return storage
    return span.attributes or _EMPTY


def events_or_links(span: Any, name: str) -> Sequence[Any]:
    """``span.events`` or ``span.links`` (``name``): what the property returns.

    For the SDK's own spans that is a tuple the property copies out of a ``BoundedList``
    under its lock; the list's deque gives the same tuple without the lock or the copy.
    """
    if type(span) in _FAST_TYPES:
        stored = getattr(span, "_" + name, None)
        if stored is not None:
            return tuple(getattr(stored, "_dq", stored))
    return getattr(span, name)


# The last resource read and its service.version: a process's spans share one resource, so the
# version costs one identity test per span, not a lookup in the resource's attributes.
_last_version: tuple[Any, str | None] = (None, None)


def service_version_of(resource: Any) -> str | None:
    """The SDK ``Resource``'s ``service.version`` (None when it has none or there is no resource)."""
    global _last_version
    last, version = _last_version
    if resource is last:
        return version
    attributes = getattr(resource, "attributes", None)
    value = attributes.get(SERVICE_VERSION) if attributes else None
    version = str(value) if value is not None and value != "" else None
    _last_version = (resource, version)  # one tuple assignment: threads see the old pair or the new
    return version


def _events(events: Any) -> tuple[EventData, ...]:
    return tuple([EventData(e.name, _copy(e.attributes), e.timestamp) for e in events])


def from_readable_span(span: Any) -> SpanData:
    """Copy what the engine needs out of an SDK ``ReadableSpan`` (the span itself is not kept)."""
    return _span_data(span, always_copy=True)


def from_ended_span(span: Any) -> SpanData:
    """``from_readable_span`` sharing the span's own attribute dict instead of copying it.

    The SDK freezes a span's attributes when it ends, so the dict can be read, never
    changed, and must not be written through the result. A span still open gets a copy.
    """
    return _span_data(span, always_copy=False)


def _span_data(span: Any, always_copy: bool) -> SpanData:
    if type(span) in _FAST_TYPES:
        try:
            context = span._context
            parent = span._parent
            status = span._status
            code = status._status_code
            end = span._end_time
            attributes = span._attributes
            if always_copy or end is None:
                attributes = attributes.copy() if type(attributes) is BoundedAttributes else _copy(attributes)
            else:
                attributes = getattr(attributes, "_dict", attributes)  # BoundedAttributes' plain storage
                if attributes is None:
                    attributes = _EMPTY
            events = span._events
            events = getattr(events, "_dq", events)  # BoundedList's deque: no copy, no lock
            resource = span._resource
            last = _last_version  # inlined service_version_of: this runs for every span
            version = last[1] if resource is last[0] else service_version_of(resource)
            return SpanData(
                context.trace_id,
                context.span_id,
                parent.span_id if parent is not None else 0,
                span._name,
                span._start_time or 0,
                end or 0,
                attributes,
                _events(events) if events else (),
                STATUS_ERROR if code is _ERROR else STATUS_OK if code is _OK else STATUS_UNSET,
                status._description or "",
                version,
            )
        except AttributeError:
            pass
    return _from_public_api(span, always_copy or span.end_time is None)


def _from_public_api(span: Any, copy_attributes: bool) -> SpanData:
    context = span.context
    parent = span.parent
    status = span.status
    code = status.status_code
    events = span.events
    return SpanData(
        context.trace_id,
        context.span_id,
        parent.span_id if parent is not None else 0,
        span.name,
        span.start_time or 0,
        span.end_time or 0,
        _copy(span.attributes) if copy_attributes else span.attributes or _EMPTY,
        _events(events) if events else (),
        STATUS_ERROR if code is _ERROR else STATUS_OK if code is _OK else STATUS_UNSET,
        status.description or "",
        service_version_of(getattr(span, "resource", None)),
    )


def with_additions(span: ReadableSpan, attributes: dict[str, Any], events: Sequence[Event] = ()) -> ReadableSpan:
    """A copy of an ended span with more attributes and events: the span itself can no longer change."""
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes={**attributes_view(span), **attributes},
        events=(*events_or_links(span, "events"), *events),
        links=events_or_links(span, "links"),
        kind=span.kind,
        status=span.status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def from_sdk_log_record(log_record: Any) -> LogData:
    """An SDK log record (``ReadWriteLogRecord`` / ``ReadableLogRecord``, or the API
    ``LogRecord`` itself) → ``LogData``; the body and attributes are referenced, not copied.

    >>> from opentelemetry._logs import LogRecord
    >>> from_sdk_log_record(LogRecord(trace_id=1, span_id=2, event_name="sdk.choice", body={})).event_name
    'sdk.choice'
    """
    record = getattr(log_record, "log_record", log_record)
    return LogData(
        record.trace_id or 0,
        record.span_id or 0,
        record.event_name or "",
        record.timestamp or record.observed_timestamp or 0,
        record.attributes or _EMPTY,
        record.body,
    )
