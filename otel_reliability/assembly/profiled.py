"""What the declarative profiles of a trace's instrumentations say about its records.

A profile applies to every record of a trace one of whose spans carries its selector
(``SpanRecord.profile``, set by the adapters). It leaves out the framework's own
pseudo-tools (their executions and the requests for them: they end a run, they are no call
of the agent's); marks as refused the tool spans whose error is one the profile names as a
call whose body never ran, and as possibly refused those whose error a refusal leaves too
(as run, those whose error came after the body returned); reads the tool spans a profile
says record a call held for a decision as its request; unwraps the arguments its tool spans record wrapped; and reads
the OK tool spans whose result (its start, which the
adapters keep) says the call never ran, or failed. Records it changes are copies: the buffer keeps the originals.
"""

from __future__ import annotations

from dataclasses import replace

from ..adapters import profiles
from ..model import Role, SpanRecord, ToolRequest
from .arguments import parse_arguments

_TOOL, _MODEL = Role.TOOL, Role.MODEL


def apply_profiles(spans: dict[int, SpanRecord]) -> dict[int, SpanRecord]:
    """The trace's records as its profiles read them; ``spans`` itself when no profile applies."""
    named = {record.profile for record in spans.values() if record.profile is not None}
    if not named:  # most traces: this runs for every one
        return spans
    found = [p for p in map(profiles.get, sorted(named)) if p is not None]
    if not found:
        return spans
    pseudo = frozenset(tool for p in found for tool in p.pseudo_tools)
    refused_when = tuple(text for p in found for text in p.refused_when_error_contains)
    possibly_refused_when = tuple(text for p in found for text in p.refusal_possible_when_error_contains)
    ran_when = tuple(text for p in found for text in p.ran_when_error_contains)
    held_without_result = any(p.held_when_no_result for p in found)
    refused_by_result = tuple(text for p in found for text in p.refused_when_output_contains)
    failed_by_result = tuple(text for p in found for text in p.failed_when_output_contains)
    wrappers = [(p.arguments_in, frozenset(p.arguments_beside)) for p in found if p.arguments_in]
    read: dict[int, SpanRecord] = {}
    for span_id, record in spans.items():
        if record.role is _TOOL and (record.tool_name or record.name) in pseudo:  # a span named for no tool goes by its name
            continue
        if held_without_result and record.role is _TOOL and record.error is None and not record.returned and record.arguments is not None:
            held = ToolRequest(record.tool_name or record.name, record.arguments, record.call_id, held=True)
            read[span_id] = replace(record, role=_MODEL, requests=(held,))
            continue
        result = record.output if record.role is _TOOL and not record.error else None  # OK, or failed with no text
        if result is not None and any(t in result for t in refused_by_result):
            record = replace(record, error=result, refusal=result)
        elif result is not None and any(t in result for t in failed_by_result):
            record = replace(record, error=result)
        elif record.role is _TOOL and record.error and record.refusal is None and any(t in record.error for t in refused_when):
            record = replace(record, refusal=record.error)
        elif record.role is _TOOL and record.error and any(t in record.error for t in ran_when):
            record = replace(record, error=None)
        elif record.role is _TOOL and record.error and any(t in record.error for t in possibly_refused_when):
            record = replace(record, refusal_possible=True)
        if record.role is _TOOL and wrappers and record.arguments is not None:
            record = _unwrapped(record, wrappers)
        elif record.role is _MODEL and pseudo and any(r.name in pseudo for r in record.requests):
            # the call named what it asked for, the framework's own tool: no call it asked for is unseen
            kept = tuple(r for r in record.requests if r.name not in pseudo)
            record = replace(record, requests=kept, stopped_for_tools=record.stopped_for_tools and bool(kept))
        read[span_id] = record
    return read


def _unwrapped(record: SpanRecord, wrappers: list[tuple[str, frozenset[str]]]) -> SpanRecord:
    """The record with the arguments a profile says its span wraps (``{"input": {...}, "options": null}``)."""
    arguments = parse_arguments(record.arguments)
    for key, beside in wrappers:
        inner = arguments.get(key)
        if isinstance(inner, dict) and arguments.keys() - {key} <= beside:
            return replace(record, arguments=inner)
    return record
