"""The plain data that flows through the pipeline.

spans (``SpanData``) → convention adapters → ``SpanRecord`` → trace assembly →
``Run`` with its ``Attempt`` chain → matcher → ``Verdict``.

Everything here is a slotted dataclass with no behaviour beyond small derived
properties: these objects sit on the hot path and in buffers, so they stay small
and cheap to build. Ids are ints (OpenTelemetry's own representation); they are
rendered as lowercase hex only at the edges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping

OK = "ok"
ERROR = "error"
REFUSED = "refused"
PENDING = "pending"
OUTCOMES = (OK, ERROR, REFUSED, PENDING)
# Never an outcome, only another reading of one (``Attempt.could_be``): the call may be a tool the
# framework called itself to end the run, no call of the agent's (read without it).
NOT_A_CALL = "not a call"

PASSED = "PASSED"
FAILED = "FAILED"
NOT_EVALUATED = "NOT_EVALUATED"  # no check failed, but one needed what the spans do not carry
STATUSES = (PASSED, FAILED, NOT_EVALUATED)

STATUS_UNSET = 0
STATUS_OK = 1
STATUS_ERROR = 2

EVALUATION_EVENT = "gen_ai.evaluation.result"  # an evaluator's judgement recorded on a span
POLICY_DENIED = "reliability.policy.denied"  # a tool call an access policy stopped before it ran
SERVICE_VERSION = "service.version"  # the resource attribute every reader keeps (``SpanData.service_version``)


@dataclass(slots=True)
class EventData:
    name: str
    attributes: Mapping[str, Any]
    time_ns: int = 0


@dataclass(slots=True)
class SpanData:
    """One span in a source-neutral shape, as every input reader produces it."""

    trace_id: int
    span_id: int
    parent_id: int  # 0 when the span is a root
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    events: tuple[EventData, ...] = ()
    status_code: int = STATUS_UNSET
    status_message: str = ""
    # the resource's ``service.version`` (the agent's version unless its run span names one);
    # the one resource attribute kept: readers pass the resource's value, never a copy of it
    service_version: str | None = None


@dataclass(slots=True)
class LogData:
    """One OpenTelemetry log record in a source-neutral shape, as every input reader produces it."""

    trace_id: int  # 0 when the record is not correlated with a trace
    span_id: int  # 0 when the record is not correlated with a span
    event_name: str  # the record's event name field ("" when unset)
    time_ns: int  # its time, else its observed time
    attributes: Mapping[str, Any]
    body: Any = None  # plain Python values, as attribute values are


class Role(Enum):
    AGENT_RUN = "agent_run"
    TOOL = "tool"
    MODEL = "model"
    OTHER = "other"


@dataclass(slots=True)
class ToolRequest:
    """A tool call a model asked for (read from model-call outputs only)."""

    name: str
    arguments: Any  # raw: a JSON string, a mapping, or None; parsed at evaluation
    call_id: str | None = None
    # a span says the call is held for a decision (an approval): that span is no call of its own
    held: bool = field(default=False, repr=False)


@dataclass(slots=True)
class ToolResponse:
    """A tool result handed back to a model (read from model-call inputs)."""

    call_id: str
    content: str
    # What this answer means for a call that no execution span records: True when the
    # tool never ran (refused), False when the producer counts it as a failed run.
    refusal: bool = True
    error: bool = False  # the producer flagged the result as an error
    # The refusal the framework's own answer names (ADK's "This tool call is rejected."): the
    # call never ran even where a failed tool span records it without its result.
    names_refusal: str | None = None
    # The producer flags failures and did not flag this one: the call ran and returned it
    # (a result the producer wrote with ``error=False``), for a run no span records the executions of.
    ran: bool = False


@dataclass(slots=True)
class SpanRecord:
    """What the engine keeps of one span: the normalised fields the adapters read."""

    trace_id: int
    span_id: int
    parent_id: int
    name: str
    start_ns: int
    end_ns: int
    role: Role = Role.OTHER
    error: str | None = None  # error text when the span failed, "" when failed without text
    # agent runs (on another span: the agent acting from then on, for a run that names none)
    agent_name: str | None = None
    run_key: str | None = None  # identity that survives a continuation (agno.run.id)
    attributes: Mapping[str, Any] | None = None  # run spans only: for expectation selectors
    output: str | None = None
    # tool executions
    tool_name: str | None = None
    # Raw, parsed at evaluation. None means the span does not carry them (not captured, e.g.
    # content capture off); an adapter that reads "no arguments" writes {} or "{}" instead.
    arguments: Any = None
    call_id: str | None = None
    refusal: str | None = None  # set when the span exists although the tool never ran
    handoff_to: str | None = None  # a handoff execution that names its target, not its tool
    # model calls (and dispatch spans that carry call ids, e.g. LangGraph's `tools` node)
    requests: tuple[ToolRequest, ...] = ()
    responses: tuple[ToolResponse, ...] = ()  # only the answers a model input adds, not those it replays
    dispatched: ToolRequest | None = None
    # a record no run span encloses that names the agent it speaks for (autogen's runtime
    # message spans): owned by that agent's run whose interval holds it
    sent_by: str | None = None
    # model calls only: a real call to a model (not a request record such as a held confirmation)
    # and its input plus output tokens, None when the span carries no usage
    model_call: bool = False
    tokens: int | None = None
    # any span: what evaluators and access policies said about it, for reputation
    evaluations: tuple[Mapping[str, Any], ...] = ()  # attributes of its gen_ai.evaluation.result events
    policy_denied: bool = False
    session_id: str | None = None  # the conversation the span belongs to (one session of runs), when it says
    # a span no convention marks as a run: the agent its attributes name (agent or graph-node name),
    # for a run assembly finds from structure (``assembly.inferred``); a run span that names no
    # agent: the name what encloses it gives (``inferred.name_unnamed_runs``)
    names_agent: str | None = None
    # assembly only: the rule that made this span a run no convention marks (``assembly.inferred``)
    inferred: str | None = None
    # tool executions: the other spans that recorded the same call (``assembly.layers``), outermost first
    layers: tuple[int, ...] = ()
    # the declarative profile (``adapters.profiles``) whose selector the span carries, if any
    profile: str | None = None
    # tool executions: the span records the call's result (so its body returned), not only that
    # the request went out and came back (an MCP client's span of a call)
    returned: bool = False
    # tool executions: a failed span that a refusal before the body ran would have left alike
    # (arguments that did not parse, an error a profile names as either)
    refusal_possible: bool = False
    # tool executions: an OK span whose result is not what a body's return would have left (a
    # convention's ``result_is_json``, the result not JSON): the call may have failed
    failure_possible: bool = False
    # tool executions: the instrumentation spans only some of the calls it runs (a convention's
    # ``spans_some_calls``), so a request of the trace with no execution span may still have run
    spans_some_calls: bool = False
    # run spans (and spans that may turn out to be runs): the agent's version, its
    # ``gen_ai.agent.version`` else its resource's ``service.version``; None when neither says
    agent_version: str | None = None
    # tool executions: the parameters the tool declares (a JSON schema, raw as the span carries
    # it; ``assembly.declared`` reads it only for a failed call); None: the span declares none
    parameters: Any = None
    # model calls and run spans: the tools declared to the model (raw: a JSON list of definitions,
    # or a tuple of one definition an item); None: the span declares none
    tool_definitions: Any = None
    # run spans only: the span closes when the run is started, not when it ends (an asynchronous
    # workflow's handle), so the run lasts until the last span under it ends (``assembly.as_read``)
    outlived: bool = False
    # model calls: its recorded finish reason says it stopped to have tools called (``assembly.unseen``)
    stopped_for_tools: bool = False
    # assembly only, tool executions: the span id of the tool execution whose body ran this call
    # with no run span between (an agent the tool started that no span records,
    # ``inferred.started_in_tools``); 0 when none did
    started_by: int = 0

    def contains(self, other: SpanRecord) -> bool:
        return self.start_ns <= other.start_ns and other.end_ns <= self.end_ns


@dataclass(slots=True)
class EventRecord:
    """What the engine keeps of one GenAI event log record: what it adds to its span's record.

    The engine joins it to the span record with the same trace and span id before judging,
    as if the span had carried these requests and responses itself.
    """

    trace_id: int
    span_id: int
    time_ns: int
    requests: tuple[ToolRequest, ...] = ()
    responses: tuple[ToolResponse, ...] = ()
    # An assistant message of the replayed history: the answers recorded before it under the
    # same span were replayed, not added by this model call (the span keeps only the newest).
    assistant_turn: bool = False


@dataclass(slots=True, frozen=True)
class UnseenCall:
    """A model call that asked for tools, naming none, and nothing of its run ran after it (``assembly.unseen``)."""

    span_name: str
    span_id: int
    start_ns: int
    until_ns: int | None  # the run's next model call's start; None: it was the run's last

    @property
    def reason(self) -> str:
        return (f"the model call {self.span_name!r} (span {self.span_id:016x}) finished asking for tools and no tool ran "
                "after it: a call the spans do not name may have been refused")


@dataclass(slots=True)
class Witnesses:
    """What saw one call, and how they were joined (``assembly.witnesses``): the *request* (a tool
    call in a model output), the *execution* (the tool span that ran the body) and the *answer*
    (the tool message handed to the model next). ``inspect`` shows them."""

    joined_by: str  # the rule that joined request and execution (``assembly.attempts.PAIRED_BY``)
    request: bool = False  # a model output asked for the call
    execution: str | None = None  # the execution span's status (``OK``, ``ERROR``); None: no span
    result: str | None = None  # what the execution recorded: its result's start, or its error text
    answer: str | None = None  # the tool message's text; None when no model input shows one
    # why the outcome is open: which witnesses disagree, and what each says (None: they agree,
    # or the open outcome is one the spans leave by their shape, not by what they say)
    doubt: str | None = None
    # the execution's instrumentation spans every call it runs: only then does another request of
    # its trace that has no execution say the call never ran (``witnesses.unexplained_in_traced``)
    spans_every_call: bool = True


@dataclass(slots=True)
class Attempt:
    """One tool-call attempt of a run: executed, errored, refused or still pending."""

    tool: str
    arguments: dict[str, Any]
    outcome: str
    agent: str
    agent_path: tuple[str, ...]
    call_id: str | None = None
    span_id: int | None = None  # the execution span; None when the tool never got one
    error: str | None = None
    start_ns: int = 0  # 0: the spans gave no time for it
    # False when neither the execution nor the request recorded the arguments: ``arguments``
    # is then {} for want of evidence, and a check that needs them cannot be evaluated.
    arguments_captured: bool = True
    # every span that recorded this call (the execution span's layers: framework, toolset, MCP
    # client and server), outermost first; () when only ``span_id`` (or none) did
    evidence: tuple[int, ...] = ()
    # False when no span records whether the call ran (an instrumentation that traces no tool
    # executions, only the model's requests): ``outcome`` is then a reading, and the checks
    # that depend on it cannot be evaluated
    outcome_known: bool = True
    # another outcome the spans cannot rule out (``REFUSED`` for a call nothing answered, which a
    # limit may have cut off; for an error span that a refusal before the body would have left
    # alike; ``NOT_A_CALL`` for a tool that ends runs, called last): the checks whose result it
    # would change cannot be evaluated
    could_be: str | None = None
    witnesses: Witnesses | None = None

    @property
    def clean(self) -> bool:
        return bool(self.tool) and self.outcome == OK

    @property
    def executed(self) -> bool:
        """Agno's notion of an execution: anything but a request that was refused."""
        return self.outcome != REFUSED


@dataclass(slots=True)
class Run:
    """An agent run with its member runs and the attempts it owns directly."""

    trace_id: int
    span_id: int
    agent: str
    span_name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)
    run_key: str | None = None
    output: str | None = None
    error: str | None = None
    session_id: str | None = None  # the conversation this run is a turn of, when its spans say
    # how assembly found a run no span marks (``assembly.inferred``); None for a marked run span
    inferred: str | None = None
    # False when no span names the run's agent (``agent`` is then its span's name): the checks
    # that ask which agent made a call cannot be evaluated on its calls
    agent_named: bool = True
    # (trace id, span id) of the earlier top-level run spans this run continues (their evidence is its own)
    continues: tuple[tuple[int, int], ...] = ()
    agent_version: str | None = None  # the run span's ``agent_version``: which version of the agent ran
    own_attempts: list[Attempt] = field(default_factory=list)
    members: list[Run] = field(default_factory=list)
    # the model calls the run owns directly (members' not included) and their tokens
    model_calls: int = 0
    tokens: int = 0  # over the calls whose spans carry usage
    untokened_model_calls: int = 0  # calls whose spans carry no usage
    # the spans the run owns directly that failed and are neither a tool's nor a model call's (a
    # step, a chain, a parser), each as "name: error": a failure no call of the run may show
    failed_steps: tuple[str, ...] = ()
    # the model calls that finished asking for tools with nothing run after them (``assembly.unseen``)
    unseen_calls: tuple[UnseenCall, ...] = ()
    # True when the run owns no record of a model turn (no model-call span, no turn read from its
    # transcript, no model record a log event or a runtime message made): a call the model asked
    # for that never ran leaves no trace. False where assembly did not say (runs built otherwise)
    requests_unseen: bool = False

    def evidence(self) -> list[Attempt]:
        """Depth-first pre-order: the run's own attempts, then each member's in start order."""
        out = list(self.own_attempts)
        for member in self.members:
            out.extend(member.evidence())
        return out

    def chain(self) -> list[Attempt]:
        """Every attempt of the run and its members, in start order."""
        return sorted(self.evidence(), key=lambda a: a.start_ns)

    def walk(self):
        yield self
        for member in self.members:
            yield from member.walk()

    @property
    def pending(self) -> bool:
        return any(a.outcome == PENDING for a in self.own_attempts)


@dataclass(slots=True)
class Trajectory:
    """Partial credit: how close the clean calls came to the expected ones (SPEC §5.2).

    ``precision``/``recall``/``f1`` compare tool names with ``expected_tool_calls`` as
    multisets; ``lcs_f1`` compares the attempted names with ``expected_chain``. Each is None
    when the expectation sets no such list.
    """

    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    lcs_f1: float | None = None


@dataclass(slots=True)
class Usage:
    """What a run consumed, members included: what the budgets are measured against.

    ``total_tokens`` is None when no model call's span carries usage; ``duration_ms``
    None when the run span's times are unknown.
    """

    model_calls: int = 0
    total_tokens: int | None = None
    duration_ms: float | None = None
    max_repeated_calls: int | None = 0  # the most attempts of one tool with equal arguments; None: none captured
    # not published (nor compared): why a token budget may not be judgeable
    untokened_model_calls: int = field(default=0, compare=False)


@dataclass(slots=True)
class Verdict:
    """The matcher's result for one run against one expectation."""

    eval_status: str
    expectation: str
    failed_tool_calls: list[str] = field(default_factory=list)
    passed_tool_calls: list[str] = field(default_factory=list)
    additional_tool_calls: list[str] = field(default_factory=list)
    missing_tool_calls: list[str] = field(default_factory=list)
    failed_argument_checks: list[str] = field(default_factory=list)
    passed_argument_checks: list[str] = field(default_factory=list)
    order_violations: list[str] = field(default_factory=list)
    policy_violations: list[str] = field(default_factory=list)
    errored_tool_calls: list[str] = field(default_factory=list)
    refused_tool_calls: list[str] = field(default_factory=list)
    pending_tool_calls: list[str] = field(default_factory=list)
    score: float = 1.0
    chain: list[Attempt] = field(default_factory=list)
    # each check that could not be judged, with why: "arguments of multiply not captured: …"
    unevaluated_checks: list[str] = field(default_factory=list)
    trajectory: Trajectory | None = None  # None: the expectation sets neither list
    usage: Usage | None = None

    @property
    def passed(self) -> bool:
        return self.eval_status == PASSED

    @property
    def failed(self) -> bool:
        return self.eval_status == FAILED
