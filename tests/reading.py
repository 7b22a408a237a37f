"""How the reader does on a corpus folder, scenario by scenario: right, honest or wrong.

* **right** — the chain (agent, tool, outcome per attempt, in order) is the truth's, the
  framework's own pseudo-tools left out (``is_pseudo_tool``): they end a run, they are no
  call of the agent's; an outcome the reader leaves open (``Attempt.could_be``) is right when
  the truth's is either, since the matcher then judges only what both readings agree on; and
  the agent of a run no span names (named after its span, ``Run.agent_named`` False) is not
  claimed, so it reads any agent: the checks that ask whose call it was are not judged on it;
  and a call the reader says may be no call at all (``NOT_A_CALL``: a tool that ends runs,
  called last) is right whether the truth has it or not, the matcher judging both;
* **honest** — not right, but nothing confident was said: no run was found, or every run
  found was judged ``NOT_EVALUATED``;
* **wrong** — a ``PASSED`` or ``FAILED`` verdict stands on a chain that is not the truth's.

A chain is read as ``tests/test_corpus_truth.py`` reads it: a later run's view of a call (the
same call id) replaces an earlier run's, so a paused run resumed in the same trace counts
once. ``cold`` scores run with every declarative profile and every framework module removed
(``adapters.knowledge.removed``): the conventions and the generic reader alone. ``open`` counts
the attempts of a reading whose outcome the reader left open (``Attempt.could_be``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from otel_reliability.adapters import knowledge, to_record
from otel_reliability.assembly import assemble
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.model import NOT_A_CALL, NOT_EVALUATED
from otel_reliability.sources import read_telemetry

from .corpus import companion, logs_of, trace_files

RIGHT, HONEST, WRONG = "right", "honest", "wrong"
OPEN = "open"  # attempts left open, counted beside the marks
UNNAMED = "?"  # a run no span names (``Run.agent_named``): its agent is not claimed


@dataclass(frozen=True)
class Reading:
    scenario: str
    truth: tuple[str, ...]
    chain: tuple[str, ...]
    verdict: str

    @property
    def open(self) -> int:
        """How many of the attempts read have an outcome the reader left open (``error|refused``)."""
        return sum(1 for step in self.chain if "|" in step.rpartition(":")[2])

    @property
    def mark(self) -> str:
        if _aligned(self.truth, self.chain):
            return RIGHT
        return HONEST if self.verdict in ("no run", NOT_EVALUATED) else WRONG


def reads_as(read_agent: str, read_outcome: str, agent: str, outcome: str) -> bool:
    """A read attempt's agent and outcome say no more than the spans do about the true ones:
    equal, or an outcome the reader left open (``error|refused``: the spans cannot tell) that
    holds the true one, or the agent of a run no span names (``UNNAMED``), which claims none."""
    return read_agent in (agent, UNNAMED) and (read_outcome == outcome or outcome in read_outcome.split("|"))


def _aligned(truth: tuple[str, ...], chain: tuple[str, ...]) -> bool:
    """Whether ``chain`` reads ``truth`` step by step, once its steps that may be no call
    (``…|not a call``) are taken as calls or left out, as the truth needs."""
    if not chain:
        return not truth
    step = chain[0]
    if step.endswith("|" + NOT_A_CALL) and _aligned(truth, chain[1:]):
        return True
    return bool(truth) and _reads(truth[0], step) and _aligned(truth[1:], chain[1:])


def _reads(truth: str, step: str) -> bool:
    """A chain step (``agent:tool:outcome``) reads a truth step (``reads_as``, the tools equal)."""
    said, _, outcomes = step.rpartition(":")
    known, _, outcome = truth.rpartition(":")
    said_agent, _, said_tool = said.partition(":")
    known_agent, _, known_tool = known.partition(":")
    return said_tool == known_tool and reads_as(said_agent, outcomes, known_agent, outcome)


def is_pseudo_tool(truth: dict, entry: dict) -> bool:
    """A framework's own tool that the truth records but that is no call of the agent's: one that
    ends a run or hands back an answer. A framework tool the truth names as the way a run
    delegated (``delegation.via_tool``: a handoff, a coworker's task) is a call the model chose."""
    return bool(entry.get("framework_tool")) and entry["name"] != (truth.get("delegation") or {}).get("via_tool")


def truth_chain(truth: dict) -> tuple[str, ...]:
    in_order = sorted(truth["tool_executions"], key=lambda t: (t.get("run", 1), t["seq"]))
    return tuple(f"{t['agent']}:{t['name']}:{t['outcome']}" for t in in_order if not is_pseudo_tool(truth, t))


def read_scenario(trace: Path) -> Reading:
    truth = companion(trace, "truth")
    logs = logs_of(trace)
    spans = read_telemetry(trace).spans
    results = judge_spans(Engine(), spans, read_telemetry(logs).logs if logs else ())
    unnamed = {run.agent for top in assemble([to_record(s) for s in spans]) for run in top.walk() if not run.agent_named}
    known = {t.get("tool_call_id") for t in truth["tool_executions"]} - {None}
    steps: dict[object, str] = {}
    for index, attempt in enumerate(a for r in results for a in r.verdict.chain):
        key = attempt.call_id if attempt.call_id in known else index
        outcome = attempt.outcome if attempt.could_be is None else f"{attempt.outcome}|{attempt.could_be}"
        agent = UNNAMED if attempt.agent in unnamed else attempt.agent
        steps[key] = f"{agent}:{attempt.tool}:{outcome}"
    statuses = {r.verdict.eval_status for r in results}
    verdict = "no run" if not results else (NOT_EVALUATED if statuses == {NOT_EVALUATED} else "/".join(sorted(statuses)))
    return Reading(trace.stem, truth_chain(truth), tuple(steps.values()), verdict)


def read_folder(folder: str, *, cold: bool = False) -> list[Reading]:
    """Every scenario of a corpus folder that has a truth, as the reader reads it now."""
    traces = [t for t in trace_files(folder) if t.with_name(t.stem + ".truth.json").exists()]
    if not cold:
        return [read_scenario(t) for t in traces]
    with knowledge.removed():
        return [read_scenario(t) for t in traces]


def tally(readings: list[Reading]) -> dict[str, int]:
    """Scenarios read right, honest and wrong, and the attempts left open over them all."""
    counts = {RIGHT: 0, HONEST: 0, WRONG: 0, OPEN: 0}
    for reading in readings:
        counts[reading.mark] += 1
        counts[OPEN] += reading.open
    return counts
