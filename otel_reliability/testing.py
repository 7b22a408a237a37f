"""Assertions on the verdicts of the agent runs a test traces: what the pytest plugin's
``reliability`` fixture gives (``otel_reliability.pytest_plugin``), usable without pytest too.

>>> from otel_reliability.testing import Reliability
>>> reliability = Reliability([])
>>> tracer = reliability.provider.get_tracer("example")   # trace the agent through it
>>> reliability.results
[]
>>> reliability.close()
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from . import ReliabilitySpanProcessor, RunResult, expect
from .adapters import to_record
from .case_runs import judge_cases
from .emitters.diff import verdict_diff
from .eval_sets import EvalCase
from .expectations import DEFAULT_EXPECTATION, Expectation
from .model import SpanRecord
from .snapshots import Snapshot
from .sources.sdk import from_readable_span

__all__ = ["CaseRun", "Check", "GlobalRoute", "Reliability"]

_JUDGING_TIMEOUT_SECONDS = 30.0


class Check(expect):
    """``reliability.expect(...)``: ``otel_reliability.expect`` whose ``assert_passed()``
    fails with expected-against-got per field."""

    def __init__(self, owner: Reliability, **options: Any) -> None:
        super().__init__(**options)
        self._owner = owner

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` unless a run was judged inside the block and every one passed."""
        __tracebackhide__ = True  # pytest shows the test's line, not the plugin's
        if not self.results:
            raise AssertionError(self._owner._no_run_message("inside the reliability.expect() block"))
        _raise_failures([(result, self.expectation) for result in self.results])


class Reliability:
    """What the ``reliability`` fixture gives a test: a tracer provider whose agent runs are
    judged, the verdicts, and assertions on them."""

    def __init__(self, expectations: list[Expectation]) -> None:
        self.results: list[RunResult] = []
        # Whether the global provider's spans come here too: None no (not routed), "" yes,
        # else why not. The pytest plugin sets it from its GlobalRoute.
        self.global_note: str | None = None
        # the test's expectation snapshot (``otel_reliability.snapshots``); the pytest plugin sets it
        self.snapshot: Snapshot | None = None
        self._rules = {e.name: e for e in expectations}
        self._checks: list[Check] = []
        self._exporter = InMemorySpanExporter()
        self.processor = ReliabilitySpanProcessor(
            SimpleSpanProcessor(self._exporter), expectations=expectations, store=None, on_result=self.results.append
        )
        self.provider = TracerProvider(shutdown_on_exit=False)
        self.provider.add_span_processor(self.processor)

    def expect(self, tool_calls: list[str] | None = None, arguments: dict[str, Any] | None = None, **options: Any) -> Check:
        """An inline expectation for the runs started inside a ``with`` block (``otel_reliability.expect``'s arguments)."""
        check = Check(self, tool_calls=tool_calls, arguments=arguments, **options)
        self._checks.append(check)
        return check

    @property
    def spans(self) -> tuple[ReadableSpan, ...]:
        """Every span that ended in this test, as exported: run spans carry the ``reliability.*`` attributes."""
        self.wait()
        return self._exporter.get_finished_spans()

    def wait(self) -> None:
        """Wait until every span ended so far is judged."""
        __tracebackhide__ = True
        if not self.processor.force_flush(int(_JUDGING_TIMEOUT_SECONDS * 1000)):
            raise AssertionError(f"otel-reliability: runs not judged within {_JUDGING_TIMEOUT_SECONDS:.0f} s")

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` unless a run was judged in this test and every one passed,
        each failure listed field by field against the expectation that judged it."""
        __tracebackhide__ = True
        self.wait()
        if not self.results:
            raise AssertionError(self._no_run_message("in this test"))
        _raise_failures([(result, self._expectation_of(result)) for result in self.results])

    def assert_matches_snapshot(self) -> None:
        """Judge the runs of this test against its snapshot, failing field by field as
        ``assert_passed()`` does; with ``pytest --reliability-update``, write the snapshot from
        them instead. A missing snapshot fails with the command that creates it."""
        __tracebackhide__ = True
        if self.snapshot is None:
            raise AssertionError("otel-reliability: assert_matches_snapshot() needs the pytest plugin's reliability fixture")
        records = self._records()
        if self.snapshot.update:
            if not self.snapshot.write(records):
                raise AssertionError(self._no_run_message("in this test"))
            return
        judged = self.snapshot.judge(records)
        if not judged:
            raise AssertionError(self._no_run_message("in this test"))
        for judgement, expectation in judged:
            if expectation is None:
                raise AssertionError(
                    f"otel-reliability: agent {judgement.result.agent!r} ran, and the snapshot {self.snapshot.path} "
                    f"has no expectation for it: refresh it with `{self.snapshot.command}`"
                )
        _raise_failures([(judgement.result, expectation) for judgement, expectation in judged])

    def _records(self) -> list[SpanRecord]:
        return [to_record(from_readable_span(span)) for span in self.spans]

    def close(self) -> None:
        """Judge what is left and shut the provider down."""
        self.wait()
        self.provider.shutdown()

    def _expectation_of(self, result: RunResult) -> Expectation | None:
        for check in self._checks:
            if any(r is result for r in check.results):
                return check.expectation
        if result.expectation == DEFAULT_EXPECTATION.name:
            return DEFAULT_EXPECTATION
        return self._rules.get(result.expectation)  # None: named by a span attribute only

    def _no_run_message(self, where: str) -> str:
        message = (
            f"ReliabilityEval failed: no agent run was judged {where}. Trace the agent through "
            "reliability.provider (e.g. InstrumentationSettings(tracer_provider=reliability.provider))"
        )
        if self.global_note == "":
            return f"{message} or through the global tracer provider"
        return f"{message}; {self.global_note}" if self.global_note else message


def _raise_failures(judged: list[tuple[RunResult, Expectation | None]]) -> None:
    __tracebackhide__ = True
    failures = [verdict_diff(result, expectation) for result, expectation in judged if not result.passed]
    if failures:
        raise AssertionError("\n\n".join(failures))


class CaseRun:
    """One case of an eval set (``otel_reliability.eval_sets``), as the pytest plugin's
    ``reliability_case`` fixture gives it: its ``id``, ``input`` and ``expectation``, and
    ``assert_passed()``, which judges the trace the case names."""

    def __init__(self, case: EvalCase, base: Path) -> None:
        self.case = case
        self.base = base  # the folder its trace paths are relative to (the eval set file's)

    @property
    def id(self) -> str:
        return self.case.id

    @property
    def input(self) -> str | None:
        return self.case.input

    @property
    def expectation(self) -> Expectation:
        return self.case.expectation

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` unless every run of the case's trace passed its expectation,
        field by field as ``Reliability.assert_passed()``; a case whose trace is missing fails, saying so."""
        __tracebackhide__ = True
        [outcome] = judge_cases([self.case], self.base)
        if outcome.missing is not None:
            raise AssertionError(f"otel-reliability: case {self.id}: missing: {outcome.missing}")
        _raise_failures([(result, self.expectation) for result in outcome.results])

    def __repr__(self) -> str:
        return f"CaseRun({self.id!r})"


class _Router(SpanProcessor):
    """Added once to the global provider: hands its spans to the running test's processor."""

    def __init__(self) -> None:
        self.target: SpanProcessor | None = None

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        target = self.target
        if target is not None:
            target.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        target = self.target
        if target is not None:
            target.on_end(span)


class GlobalRoute:
    """The router on the global provider, set up on first use (``otel_reliability.pytest_plugin``
    says why it is added, never replaced), and where it sends spans now."""

    def __init__(self) -> None:
        self._router: _Router | None = None
        self.note: str | None = None  # why global spans are not judged; None until looked at

    def attach(self, reliability: Reliability | None) -> None:
        """Send the global provider's spans to ``reliability``'s processor (``None``: to none)."""
        if self.note is None:
            self._install()
        if self._router is not None:
            self._router.target = reliability.processor if reliability is not None else None

    def _install(self) -> None:
        if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
            trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
        if hasattr(provider, "add_span_processor"):
            self._router = _Router()
            provider.add_span_processor(self._router)
            self.note = ""
        else:
            self.note = (
                f"the global tracer provider ({type(provider).__name__}) takes no span processor, "
                "so spans traced through it are not judged"
            )
