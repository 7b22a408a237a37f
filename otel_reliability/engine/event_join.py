"""GenAI event log records joined to the record of the span they belong to.

The buffer joins them whenever it hands a trace out for judging, so that assembly sees
their requests and responses as if the span had carried them.
"""

from __future__ import annotations

from dataclasses import replace
from operator import attrgetter

from ..model import EventRecord, SpanRecord, ToolResponse

_time_ns = attrgetter("time_ns")


def with_events(record: SpanRecord, events: list[EventRecord]) -> SpanRecord:
    """A copy of ``record`` with the events' requests and responses added after its own, in the
    events' order. A call id the span (or an earlier event) already holds is not added twice (a
    producer that writes content both on the span and in events); an assistant-turn marker
    drops the events' answers before it (they were replayed history)."""
    requests = list(record.requests)
    own_responses = record.responses
    asked = {r.call_id for r in requests if r.call_id is not None}
    answered = {r.call_id for r in own_responses}
    own_requests = bool(requests)
    added: dict[str, ToolResponse] = {}  # the events' answers, by call id, in order
    for event in sorted(events, key=_time_ns):
        if event.assistant_turn:
            added.clear()
            continue
        for request in event.requests:
            if request.call_id is None:
                if own_requests:
                    continue  # no id to tell it from the span's own: the span's content wins
            elif request.call_id in asked:
                continue
            else:
                asked.add(request.call_id)
            requests.append(request)
        for response in event.responses:
            if response.call_id not in answered:
                added.setdefault(response.call_id, response)
    return replace(record, requests=tuple(requests), responses=(*own_responses, *added.values()))

