"""With workers, a request is taken by every worker or by none.

Each worker buffers the spans of its own traces, and any of them may be full. So the
serving process asks in two steps: every worker first *reserves* room for its share of
the request; only when all did is the request committed (each worker then buffers its
share, which the reservation guarantees room for), otherwise every reservation is
released and the client is told to retry — no worker keeps a part of a refused request.

A reservation costs no decoding while a worker has ample room: it holds an upper bound
of the spans a body can carry (``span_bound``: no span is smaller than its two ids).
Only when that bound does not fit is the worker's share decoded and counted exactly.
A worker at the soft limit of its byte budget refuses every reservation: bytes are not
reserved (a body's retained size is known only once decoded), so a committed request may
take a worker past the soft limit, never refused there, and its hard limit evicts.

>>> span_bound(Body(b"x" * 300, "application/x-protobuf"))
11
"""

from __future__ import annotations

from dataclasses import dataclass

from .intake import Body, IntakeError, read_payload
from .outcomes import INTAKE_LOG_FULL, INTAKE_LOG_UNWRITABLE, OVERLOADED, SOFT_BYTE_LIMIT, VERDICTS_HELD
from .service import ReceiverService

MIN_SPAN_BYTES = 28  # a serialized span holds at least its trace id and span id, tagged


def span_bound(body: Body) -> int:
    """At most this many spans are in ``body`` (serialized protobuf or OTLP/JSON)."""
    return len(body.data) // MIN_SPAN_BYTES + 1


@dataclass(slots=True)
class _Held:
    spans: int
    body: Body
    exact: bool


class Reservations:
    """One worker's reservations, by the id of the call that made each."""

    def __init__(self, service: ReceiverService) -> None:
        self._service = service
        self._held: dict[int, _Held] = {}
        self._spans = 0
        self._bytes = 0  # of the bodies held: the intake log must have room for them too

    def reserve(self, call_id: int, body: Body) -> str | None:
        """Hold room for this worker's share of ``body``, in the buffer and in the intake log;
        the reason (its share counted as dropped for it) when it has none."""
        if self._service.at_soft_byte_limit():
            self._service.metrics.spans_dropped(self._share(body), SOFT_BYTE_LIMIT)
            return SOFT_BYTE_LIMIT
        if not self._service.log_has_room(self._bytes + len(body.data)):
            self._service.metrics.spans_dropped(self._share(body), INTAKE_LOG_FULL)
            return INTAKE_LOG_FULL
        if not self._service.log_writable():
            self._service.metrics.spans_dropped(self._share(body), INTAKE_LOG_UNWRITABLE)
            return INTAKE_LOG_UNWRITABLE
        if self._service.pipeline.held.at_bound:
            self._service.metrics.spans_dropped(self._share(body), VERDICTS_HELD)
            return VERDICTS_HELD
        room = self._room()
        bound = span_bound(body)
        if bound <= room:
            self._hold(call_id, _Held(bound, body, exact=False))
            return None
        share = self._share(body)
        if share <= room:
            self._hold(call_id, _Held(share, body, exact=True))
            return None
        self._service.metrics.spans_dropped(share, OVERLOADED)
        return OVERLOADED

    def commit(self, call_id: int) -> Body:
        """The reserved body, to buffer now; its room is the service's to use."""
        held = self._held.pop(call_id)
        self._spans -= held.spans
        self._bytes -= len(held.body.data)
        return held.body

    def release(self, call_id: int, reason: str) -> None:
        """Another worker refused the request: drop the reservation and count the share as
        refused, for the other worker's ``reason``."""
        held = self._held.pop(call_id)
        self._spans -= held.spans
        self._bytes -= len(held.body.data)
        self._service.metrics.spans_dropped(held.spans if held.exact else self._share(held.body), reason)

    def _hold(self, call_id: int, held: _Held) -> None:
        self._held[call_id] = held
        self._spans += held.spans
        self._bytes += len(held.body.data)

    def _room(self) -> int:
        return self._service.room() - self._spans

    def _share(self, body: Body) -> int:
        try:
            return len(read_payload(body, self._service.shard).decoded.spans)
        except IntakeError:
            return 0  # not OTLP: nothing to hold room for, and the commit refuses it as such
