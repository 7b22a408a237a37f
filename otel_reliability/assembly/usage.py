"""The model calls a run owns and the tokens they used, for budgets (SPEC §5.2).

A model call is a span an adapter marked ``model_call``. Some producers wrap one call in
two such spans (Google ADK's legacy ``call_llm`` around ``generate_content``, LlamaIndex's
``astream_chat`` around itself): a model-call span inside another is the same call, so
only the outermost of a nest counts, with its own tokens, or else the tokens the spans
nested in it carry. Agent-run spans that repeat their calls' total are never read
(the adapters leave them without tokens).
"""

from __future__ import annotations

from typing import Sequence

from ..model import SpanRecord
from .ownership import MAX_DEPTH

_Key = tuple[int, int]


def model_usage(owned: Sequence[SpanRecord], run_spans: Sequence[SpanRecord] = ()) -> tuple[int, int, int]:
    """(model calls, their tokens, calls with no token count) among a run's own records;
    ``run_spans`` (the run's own spans) only spare the parent walk of calls made right under them.

    >>> outer = SpanRecord(1, 2, 1, "call_llm", 0, 9, model_call=True)
    >>> inner = SpanRecord(1, 3, 2, "generate_content", 1, 8, model_call=True, tokens=18)
    >>> model_usage([outer, inner, SpanRecord(1, 4, 1, "chat", 10, 12, model_call=True)])
    (2, 18, 1)
    """
    calls = [r for r in owned if r.model_call]
    if not calls:
        return 0, 0, 0
    runs = {(r.trace_id, r.span_id) for r in run_spans}
    if all((r.trace_id, r.parent_id) in runs for r in calls):  # the common shape: no call inside another
        counts = [r.tokens for r in calls if r.tokens is not None]
        return len(calls), sum(counts), len(calls) - len(counts)
    by_id: dict[_Key, SpanRecord] = {(r.trace_id, r.span_id): r for r in owned}
    nests: dict[_Key, list[SpanRecord]] = {}
    for record in calls:
        outermost = record
        parent = by_id.get((record.trace_id, record.parent_id))
        depth = MAX_DEPTH
        while parent is not None and depth:
            if parent.model_call:
                outermost = parent
            parent = by_id.get((parent.trace_id, parent.parent_id))
            depth -= 1
        nests.setdefault((outermost.trace_id, outermost.span_id), []).append(record)
    tokens = untokened = 0
    for key, nest in nests.items():
        outer = by_id[key]
        counted = outer.tokens
        if counted is None:
            inner = [r.tokens for r in nest if r.tokens is not None]
            counted = sum(inner) if inner else None
        if counted is None:
            untokened += 1
        else:
            tokens += counted
    return len(nests), tokens, untokened
