"""Convention adapters: one span in, one normalised ``SpanRecord`` out.

A span a convention file speaks of (``conventions``: by its name or an attribute, never by
framework name) is read as the file's first matching rule says; every convention the reader
knows is such a file. A span that none reads still becomes a plain record, because its ids and
times are needed to walk parent chains. A new convention is a new file in ``conventions/`` (or
a user's, ``conventions.use``). What any span may say
whichever convention reads it (the agent it names, the conversation, a tool's result) is read
for every record, at the keys ``any_span.yaml`` lists. GenAI events written as log records are
read by ``log_events``, as their convention file says.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from ..model import EVALUATION_EVENT, POLICY_DENIED, Role, SpanData, SpanRecord, ToolRequest
from . import conventions, frameworks
from .conventions.reading import read_by_rule
from .any_span import KEYS, session_of
from .common import RESULT_PREFIX, str_or_none
from . import profiles
from .profiles import has_selectors, profile_of
from .log_events import may_be_genai_event, to_event_record

logger = logging.getLogger(__name__)

__all__ = ["may_be_genai_event", "may_be_run", "to_event_record", "to_record"]

_OTHER = Role.OTHER
_RUN = Role.AGENT_RUN
_TOOL = Role.TOOL
# The keys any span may carry (``any_span.yaml``), read for every record: looked up, not walked
_AGENT_NAME_KEYS, _AGENT_VERSION_KEYS, _SESSION_KEYS, _TOOL_RESULT_KEYS = KEYS.agent_name, KEYS.agent_version, KEYS.session, KEYS.result


def may_be_run(span_name: str, attributes: Mapping[str, Any], local_root: bool) -> bool:
    """A cheap, conservative test for spans a convention may read as an agent run, for a front
    door's hot path (the span processor holds such spans back until judged). ``local_root``:
    the span has no parent in this process. ``to_record`` gives the exact answer.

    >>> may_be_run("work", {}, local_root=False)
    False
    """
    return conventions.holds_back(span_name, attributes, local_root)


def to_record(span: SpanData) -> SpanRecord:
    """Normalise one span as the convention file's rule that reads it says (``conventions.rule_for``).

    >>> from otel_reliability.model import SpanData
    >>> to_record(SpanData(1, 2, 0, "work", 0, 1, {})).role.value
    'other'
    """
    attributes = span.attributes
    record = None
    if (found := conventions.rule_for(span)) is not None:
        try:
            record = read_by_rule(span, found[0], found[2])
        except Exception:  # a producer's odd shape must not stop the trace from being judged
            logger.warning("could not read span %r with convention %s", span.name, found[1], exc_info=True)
    if record is None:
        record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
    if span.events:
        record.evaluations = tuple([e.attributes for e in span.events if e.name == EVALUATION_EVENT])
    if POLICY_DENIED in attributes and attributes[POLICY_DENIED] is True:
        record.policy_denied = True
    for key in _SESSION_KEYS:
        if key in attributes:
            record.session_id = session_of(attributes)
            break
    if record.role is _OTHER and record.names_agent is None:
        record.names_agent = _named_agent(attributes)
    if record.role is _RUN or record.names_agent is not None:  # a run, or a span that may turn out one
        record.agent_version = _agent_version(attributes, span.service_version)
    if record.role is _TOOL:
        if not record.returned:
            for key in _TOOL_RESULT_KEYS:  # a loop, not any(): this runs for every tool span
                if key in attributes:
                    record.returned = True
                    break
        if record.returned and not record.error and record.output is None:  # OK, or failed without a word of why
            _keep_result(record, attributes)
    if record.role is _TOOL:
        record = frameworks.read(record)
    if has_selectors():
        _read_by_profiles(record, span)
    return record


def _read_by_profiles(record: SpanRecord, span: SpanData) -> None:
    """Tag the span with the profile it selects, and read what the profiles say of a span: a tool
    span that holds a call for a decision (read as the request a later answer decides), and a
    failed span whose error names a call the framework refused before any tool span (read as
    that call)."""
    attributes = span.attributes
    name = profile_of(attributes, span.name)
    if name is not None:
        record.profile = name
    if record.role is _OTHER and record.error:
        _read_refused_call(record)
    if record.role is not _TOOL:
        return
    if profiles.marks_held(attributes):
        record.role, record.requests = Role.MODEL, (ToolRequest(record.tool_name or span.name, record.arguments, record.call_id, held=True),)


def _keep_result(record: SpanRecord, attributes: Mapping[str, Any]) -> None:
    """Keep the start of a tool span's result (``SpanRecord.output``): a witness of what the call
    returned, which the profiles' markers and the lexicon (``assembly.witnesses``) read."""
    record.output = None
    for key in _TOOL_RESULT_KEYS:
        result = attributes.get(key)
        if isinstance(result, str):
            record.output = result[:RESULT_PREFIX]
            return


def _read_refused_call(record: SpanRecord) -> None:
    """A failed span whose error a profile names as a call refused before any tool span: that call."""
    for pattern in profiles.refused_call_patterns():
        found = pattern.search(record.error or "")
        if found and found.group("tool"):
            record.role, record.tool_name, record.refusal = Role.TOOL, found.group("tool"), record.error
            return


def _named_agent(attributes: Mapping[str, Any]) -> str | None:
    """The agent a span names, should assembly find that it encloses an agent's loop: the
    conventions' agent or graph-node name (an empty one names none)."""
    for key in _AGENT_NAME_KEYS:
        if key in attributes:
            return str_or_none(attributes[key]) or None
    return None


def _agent_version(attributes: Mapping[str, Any], service_version: str | None) -> str | None:
    """The agent's version: its run span's (``any_span.yaml``), else its resource's
    ``service.version`` (the run span says which agent ran; the resource only which process)."""
    for key in _AGENT_VERSION_KEYS:
        named = attributes.get(key)
        if named is not None and named != "":
            return str(named)
    return service_version or None
