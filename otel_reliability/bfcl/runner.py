"""Run an agent over a BFCL category under tracing, with the progressive schedule 5 → 50 → all.

The agent is yours, instrumented as in production: ``BfclRunner`` puts a
``ReliabilitySpanProcessor`` on the tracer provider your instrumentation uses,
calls ``agent(entry)`` for each dataset entry, and reads the tool calls the agent
made (or asked for) from the run's chain — the same evidence the processor
judges in production. Those calls are judged BFCL-style against the entry's
possible answer.

The schedule follows the BFCL article: judge the first 5 entries; if accuracy is
at or above the threshold (default 80 %), grow to the first 50; if it still is,
run the whole category. Entries already judged are not run again. ::

    runner = BfclRunner(underscore_to_dot=True)        # tools registered as math_factorial …
    agent.instrument = InstrumentationSettings(tracer_provider=runner.tracer_provider)
    run = runner.run(lambda entry: my_agent(entry), "simple_python")
    print(run.stages)                                   # [Stage(limit=5, …), Stage(limit=50, …), …]
    Path("report.html").write_text(render_html(bfcl_report(run.score)))

``function_schemas(entry)`` turns an entry's BFCL function docs into JSON-Schema tool
definitions for any framework.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from opentelemetry.sdk.trace import TracerProvider

from otel_reliability.bfcl.dataset import Entry, load_category
from otel_reliability.matcher.bfcl.judge import Compat
from otel_reliability.bfcl.score import BfclScore, SampleResult, judge_entry
from otel_reliability.processor import ReliabilitySpanProcessor
from otel_reliability.results import RunResult

__all__ = ["BfclRunner", "ProgressiveRun", "Stage", "function_schemas", "DEFAULT_SCHEDULE"]

DEFAULT_SCHEDULE: tuple[int | None, ...] = (5, 50, None)
"""Entries judged after each stage; ``None`` = the whole category."""


@dataclass(slots=True)
class Stage:
    """The accuracy over the first ``judged`` entries, after the stage that asked for ``limit``."""

    limit: int | None
    judged: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.judged if self.judged else 0.0


@dataclass(slots=True)
class ProgressiveRun:
    category: str
    threshold: float
    stages: list[Stage]
    score: BfclScore
    entries_in_category: int

    @property
    def completed(self) -> bool:
        """Whether the whole category was judged."""
        return self.score.total == self.entries_in_category

    @property
    def stopped_early(self) -> bool:
        """Whether a stage's accuracy fell below the threshold before the schedule ended."""
        return bool(self.stages) and self.stages[-1].accuracy < self.threshold and not self.completed


@dataclass(slots=True)
class _Collector:
    results: list[RunResult] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, result: RunResult) -> None:
        with self.lock:
            self.results.append(result)

    def since(self, start: int) -> list[RunResult]:
        with self.lock:
            return self.results[start:]

    def __len__(self) -> int:
        with self.lock:
            return len(self.results)


class BfclRunner:
    """Judges an agent's traced tool calls against BFCL categories.

    ``tracer_provider``: the provider your agent's instrumentation writes to (a new
    one, exposed as ``runner.tracer_provider``, when omitted — evaluation traffic then
    stays out of your production pipeline). ``underscore_to_dot``: your tools carry
    BFCL's dotted names with underscores (most model APIs forbid dots).
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        *,
        data: str | Path | None = None,
        compat: Compat = "official",
        underscore_to_dot: bool = False,
        agent_name: str = "agent",
        timeout: float = 30.0,
    ) -> None:
        self.tracer_provider = tracer_provider if tracer_provider is not None else TracerProvider()
        self._data = data
        self._compat: Compat = compat
        self._underscore_to_dot = underscore_to_dot
        self._agent_name = agent_name
        self._timeout = timeout
        self._collector = _Collector()
        self._processor = ReliabilitySpanProcessor(None, store=None, on_result=self._collector)
        self.tracer_provider.add_span_processor(self._processor)

    def judge(self, agent: Callable[[Entry], Any], entry: Entry) -> SampleResult:
        """Run ``agent`` on one entry and judge the tool calls its traced runs made."""
        start = len(self._collector)
        agent(entry)
        if not self._processor.drain(self._timeout):
            raise TimeoutError(f"the span processor did not finish within {self._timeout} s")
        runs = self._collector.since(start)
        calls = [{attempt.tool: attempt.arguments} for run in runs for attempt in run.verdict.chain if attempt.tool]
        return judge_entry(entry, calls, compat=self._compat, underscore_to_dot=self._underscore_to_dot, decoded=True)

    def run(
        self,
        agent: Callable[[Entry], Any],
        category: str,
        *,
        schedule: Sequence[int | None] = DEFAULT_SCHEDULE,
        threshold: float = 0.8,
        entries: Sequence[Entry] | None = None,
    ) -> ProgressiveRun:
        """Judge ``category`` stage by stage; stop as soon as a stage's accuracy is below ``threshold``."""
        entries = list(entries) if entries is not None else load_category(category, self._data)
        samples: list[SampleResult] = []
        stages: list[Stage] = []
        for limit in schedule:
            target = len(entries) if limit is None else min(limit, len(entries))
            for entry in entries[len(samples) : target]:
                samples.append(self.judge(agent, entry))
            stage = Stage(limit, len(samples), sum(s.valid for s in samples))
            stages.append(stage)
            if stage.accuracy < threshold or len(samples) == len(entries):
                break
        score = BfclScore(self._agent_name, self._compat, samples)
        return ProgressiveRun(category, threshold, stages, score, len(entries))

    def close(self) -> None:
        """Stop the runner's processor (the tracer provider stays yours to shut down)."""
        self._processor.shutdown()


_JSON_TYPES = {
    "dict": "object", "float": "number", "tuple": "array", "integer": "integer", "string": "string",
    "boolean": "boolean", "array": "array", "object": "object", "number": "number",
}


def function_schemas(entry: Entry, *, underscore_names: bool = False) -> list[dict[str, Any]]:
    """The entry's function docs as ``{name, description, parameters}`` with JSON-Schema parameters.

    BFCL writes ``dict``, ``float``, ``tuple`` and ``any``; JSON Schema says ``object``,
    ``number``, ``array`` and nothing. Java and JavaScript parameters become strings:
    their values are source text. ``underscore_names`` writes ``math.factorial`` as
    ``math_factorial``.
    """
    tools = []
    for doc in entry.function:
        name = doc["name"].replace(".", "_") if underscore_names else doc["name"]
        parameters = _json_schema(copy.deepcopy(doc.get("parameters", {})), entry.language)
        parameters.setdefault("type", "object")
        tools.append({"name": name, "description": doc.get("description", ""), "parameters": parameters})
    return tools


def _json_schema(schema: Any, language: str) -> Any:
    if not isinstance(schema, dict):
        return schema
    declared = schema.get("type")
    if language != "python" and "properties" not in schema and declared is not None:
        schema = {k: v for k, v in schema.items() if k not in ("items", "properties")}
        schema["type"] = "string"
        return schema
    if declared == "any":
        schema.pop("type")
    elif isinstance(declared, str) and declared in _JSON_TYPES:
        schema["type"] = _JSON_TYPES[declared]
    for key in ("properties",):
        if isinstance(schema.get(key), dict):
            schema[key] = {name: _json_schema(sub, language) for name, sub in schema[key].items()}
    if isinstance(schema.get("items"), dict):
        schema["items"] = _json_schema(schema["items"], language)
    return schema
