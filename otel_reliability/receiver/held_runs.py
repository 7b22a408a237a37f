"""Run spans held back from forwarding until their verdict is known.

With ``forward_endpoint`` set, the receiver forwards every span as it arrives, except the
agent-run spans: those wait for their trace's judgement and go downstream enriched with the
verdict. A verdict that changes after its run span went downstream (a late span, a resumed
run) goes on an evaluation carrier span, unless downstream already has the same verdict.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from ..emitters.span_attributes import verdict_attributes
from ..model import Role
from ..results import RunResult
from ..sources import Shard
from .forwarding import Forwarder, enrich, evaluation_carrier, owned_request, request_of, split_run_spans
from .intake import Payload


class HeldRunSpans:
    """One receiver's held run spans, by trace; ``lock`` is the receiver's intake lock, so
    that a run span is held before its trace can be judged and released."""

    def __init__(self, forwarder: Forwarder, shard: Shard, max_remembered: int, lock: threading.Lock) -> None:
        self._forwarder = forwarder
        self._shard = shard
        self._max_remembered = max_remembered
        self._lock = lock
        self._held: dict[int, list] = {}  # trace id → run spans waiting for their verdict
        # (trace id, run span id) → a digest of the verdict downstream last received
        self._forwarded: OrderedDict[tuple[int, int], int] = OrderedDict()

    def forward_holding_runs(self, payload: Payload, records: list) -> None:
        """Forward a request's spans, holding back its run spans (called under ``lock``)."""
        runs = {(r.trace_id, r.span_id) for r in records if r.role is Role.AGENT_RUN}
        request = payload.as_request()
        if self._shard.count > 1:
            request = owned_request(request, self._shard)
        for held in split_run_spans(request, lambda trace_id, span_id: (trace_id, span_id) in runs):
            trace_id = int.from_bytes(held.scope_spans[0].spans[0].trace_id, "big")
            self._held.setdefault(trace_id, []).append(held)
        self._forwarder.submit(request)

    def release(self, trace_id: int, results: list[RunResult]) -> None:
        """Forward a trace's held run spans, each with its verdict when it has one; a changed
        verdict for a run span sent earlier goes on a carrier span."""
        with self._lock:
            held = self._held.pop(trace_id, [])
        by_span = {result.run_span_id: result for result in results}
        out = []
        for wrapper in held:
            result = by_span.pop(int.from_bytes(wrapper.scope_spans[0].spans[0].span_id, "big"), None)
            if result is not None:
                self._remember(result, enrich(wrapper, result))
            out.append(wrapper)
        now_ns = time.time_ns()
        for result in by_span.values():  # their run spans went downstream with an earlier verdict
            attributes = verdict_attributes(result)
            if self._forwarded.get((result.trace_id, result.run_span_id)) != _digest(attributes):
                out.append(evaluation_carrier(result, attributes, now_ns))
                self._remember(result, attributes)
        if out:
            self._forwarder.submit(request_of(out))

    def forward_unjudged(self) -> None:
        """At shutdown: the run spans still held go on as they are."""
        with self._lock:
            unjudged = [held for spans in self._held.values() for held in spans]
            self._held.clear()
        self._forwarder.submit(request_of(unjudged))

    def _remember(self, result: RunResult, attributes: dict) -> None:
        key = (result.trace_id, result.run_span_id)
        self._forwarded[key] = _digest(attributes)
        self._forwarded.move_to_end(key)
        while len(self._forwarded) > self._max_remembered:
            self._forwarded.popitem(last=False)


def _digest(verdict_attributes: dict) -> int:
    """What downstream sees of a verdict, condensed: a superseding verdict equal to it is not re-sent."""
    return hash(tuple(sorted(verdict_attributes.items())))
