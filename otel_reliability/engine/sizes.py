"""What a buffered record costs in memory, estimated as it enters (the byte budget's unit).

Python objects are measured from the fields a record keeps, not by walking the object
graph: strings, bytes and numbers are the leaves (what ``sys.getsizeof`` says of one, read
from its header in constant time), tuples, lists and mappings are counted structurally, and a record's
own object, its integers and its slot in its trace's table are one measured constant.
Deeper than ``MAX_DEPTH`` a value is taken for ``DEEP_VALUE_BYTES``: attribute values and
tool arguments are flat in practice, and a hostile one must not make intake recurse.

``tests/test_engine_sizes.py`` checks the estimate against ``tracemalloc``: for spans
carrying their weight in strings (the case the budget is for: message content, tool
arguments, big attributes) it is within 10 % of what Python allocates; for small spans it
errs on the high side, by less than a factor of 2.

>>> from otel_reliability.model import SpanRecord
>>> small = record_size(SpanRecord(1, 2, 0, "tool", 0, 1))
>>> record_size(SpanRecord(1, 2, 0, "tool", 0, 1, output="x" * 10_000)) - small >= 10_000
True
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Iterable

from ..model import EventRecord, SpanRecord, ToolRequest, ToolResponse

MAX_DEPTH = 6
DEEP_VALUE_BYTES = 1_024
# A SpanRecord object, its five large integers (trace, span and parent ids, start, end) and
# its entry in its trace's table by span id (measured with tracemalloc, rounded up).
RECORD_BYTES = 480
EVENT_BYTES = 200  # an EventRecord, its ids and time, and its place in its span's list
REQUEST_BYTES = 72  # a ToolRequest or ToolResponse object
# A buffered trace: its _Trace, its table of records, its places in the buffer's queues,
# the id keying them, and its entries in the resumer index.
TRACE_BYTES = 1_000
_EMPTY = sys.getsizeof(())
_EMPTY_DICT = sys.getsizeof({})
_SLOT = 8  # a pointer in a tuple or list
_ENTRY = 64  # a key/value pair of a dict, with its share of the table's spare room
_LEAVES = frozenset({str, bytes, int, float, bool, type(None)})
_getsizeof = sys.getsizeof
# ``sys.getsizeof`` parses its arguments the slow way (about 150 ns a call, most of the cost
# of sizing a record); for a leaf, which carries no garbage-collector header, its own
# ``__sizeof__`` gives the same number three to four times faster.
_text_size = str.__sizeof__


def _texts_size(texts: Iterable[Any]) -> int:
    """Bytes of ``texts`` (a collection that may be iterated twice), as ``sys.getsizeof`` counts them."""
    try:
        return sum(map(_text_size, texts))
    except TypeError:  # one is no str (an adapter's odd value): measured the general way
        return sum(map(_getsizeof, texts))


def record_size(record: SpanRecord) -> int:
    """Estimated bytes ``record`` holds while buffered (what its fields hold that no other
    buffered record shares, plus the record itself)."""
    # Most fields are None on most spans; ``filter(None, ...)`` also passes over "", which
    # Python shares rather than allocates.
    size = RECORD_BYTES + value_size(record.name) + _texts_size(tuple(filter(None, (
        record.error, record.agent_name, record.run_key, record.output, record.tool_name,
        record.call_id, record.refusal, record.handoff_to, record.names_agent,
    ))))
    if record.attributes:
        size += _mapping_size(record.attributes, 1)
    if record.arguments is not None:
        size += value_size(record.arguments)
    if record.parameters is not None:
        size += value_size(record.parameters)
    if record.tool_definitions is not None:  # a model call's declared tools: often the largest field it keeps
        size += value_size(record.tool_definitions)
    if record.requests:
        size += _EMPTY + _SLOT * len(record.requests) + sum(map(_request_size, record.requests))
    if record.responses:
        size += _EMPTY + _SLOT * len(record.responses) + sum(map(_response_size, record.responses))
    if record.dispatched is not None:
        size += _request_size(record.dispatched)
    if record.evaluations:
        size += _EMPTY + _SLOT * len(record.evaluations) + sum(_mapping_size(e, 1) for e in record.evaluations)
    return size


def event_size(event: EventRecord) -> int:
    """Estimated bytes a GenAI event record holds while buffered."""
    size = EVENT_BYTES
    if event.requests:
        size += _EMPTY + _SLOT * len(event.requests) + sum(map(_request_size, event.requests))
    if event.responses:
        size += _EMPTY + _SLOT * len(event.responses) + sum(map(_response_size, event.responses))
    return size


def records_size(records: list[SpanRecord]) -> int:
    """Estimated bytes of a list of records held together (a paused run's)."""
    return _getsizeof(records) + sum(map(record_size, records))


def value_size(value: Any, depth: int = 0) -> int:
    """Estimated bytes of an attribute value or tool arguments: a leaf, or a container of them."""
    kind = type(value)
    if kind is str:
        return _text_size(value)
    if kind in _LEAVES:
        return value.__sizeof__()
    if depth >= MAX_DEPTH:
        return DEEP_VALUE_BYTES
    if kind is tuple or kind is list:
        return _getsizeof(value) + sum(value_size(item, depth + 1) for item in value)
    if isinstance(value, Mapping):
        return _mapping_size(value, depth + 1)
    return DEEP_VALUE_BYTES  # something an adapter made that is neither (rare): a round guess


def _mapping_size(mapping: Mapping[str, Any], depth: int) -> int:
    size = _EMPTY_DICT + _ENTRY * len(mapping) + _texts_size(mapping)
    for value in mapping.values():  # value_size's leaves inlined: a call a value was ~45 % of a flat mapping's cost
        kind = type(value)
        size += _text_size(value) if kind is str else value.__sizeof__() if kind in _LEAVES else value_size(value, depth)
    return size


def _request_size(request: ToolRequest) -> int:
    arguments = request.arguments
    size = REQUEST_BYTES + value_size(request.name) + (
        _mapping_size(arguments, 1) if type(arguments) is dict else value_size(arguments)
    )
    return size if request.call_id is None else size + value_size(request.call_id)


def _response_size(response: ToolResponse) -> int:
    return REQUEST_BYTES + value_size(response.call_id) + value_size(response.content)
