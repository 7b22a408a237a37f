"""The pytest plugin (entry point ``pytest11``): a ``reliability`` fixture, ``--reliability-expectations``,
and the session's verdicts at the end of the run.

.. code-block:: python

    def test_calculator(reliability):
        agent = Agent(model, instrument=InstrumentationSettings(tracer_provider=reliability.provider))
        with reliability.expect(tool_calls=["multiply"], arguments={"multiply": {"a": 10, "b": 5}}):
            agent.run_sync("What is 10 times 5?")
        reliability.assert_passed()   # fails with expected-against-got, field by field

Each test that asks for the fixture gets its own ``ReliabilitySpanProcessor`` (no store;
``--reliability-expectations`` files as its rules), on two entry points:

- ``reliability.provider``, a ``TracerProvider`` of the test's own: pass it to the
  instrumentation (pydantic-ai's ``InstrumentationSettings(tracer_provider=…)``,
  ``provider.get_tracer(…)``). Nothing global changes.
- the global provider, for code that traces through ``trace.get_tracer`` or
  ``instrument=True``. OpenTelemetry lets the global provider be set once per process
  and never replaced or restored, so the plugin replaces nothing: it adds one routing
  processor to the global provider the first time a test asks for the fixture, and
  that processor hands spans to the running test's processor while the test runs and
  to none between tests. When no global provider has been set by then, the plugin sets
  a plain SDK ``TracerProvider`` to carry it — **the limit**: from then on the API
  ignores ``trace.set_tracer_provider`` in that process (it logs a warning), so code
  under test that sets its own must do so before the first ``reliability`` test (in
  ``conftest.py``, say). A global provider without ``add_span_processor`` (not the
  SDK's) cannot take the router; then only ``reliability.provider`` is judged, and
  ``assert_passed()`` says so when it found no run.

Spans are judged as their runs end; ``assert_passed()`` and ``results`` wait for the
judging first. Under pytest-xdist the verdicts stay in the workers, so the summary at the
end lists none (not gathered yet); the assertions work the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from . import ReliabilitySpanProcessor, RunResult, expect
from .emitters.diff import verdict_diff
from .expectations import DEFAULT_EXPECTATION, Expectation, ExpectationError, load_expectations

__all__ = ["Check", "Reliability"]

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
    judged, the verdicts, and assertions on them.

    >>> reliability = Reliability([])
    >>> tracer = reliability.provider.get_tracer("example")
    >>> reliability.results
    []
    >>> reliability.close()
    """

    def __init__(self, expectations: list[Expectation], global_note: str = "") -> None:
        self.results: list[RunResult] = []
        self._rules = {e.name: e for e in expectations}
        self._checks: list[Check] = []
        self._global_note = global_note
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

    def close(self) -> None:
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
        if self._global_note:
            return f"{message}; {self._global_note}"
        return f"{message} or through the global tracer provider"


def _raise_failures(judged: list[tuple[RunResult, Expectation | None]]) -> None:
    __tracebackhide__ = True
    failures = [verdict_diff(result, expectation) for result, expectation in judged if not result.passed]
    if failures:
        raise AssertionError("\n\n".join(failures))


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


@dataclass
class _Session:
    expectations: list[Expectation]
    verdicts: list[tuple[str, RunResult]] = field(default_factory=list)
    router: _Router | None = None
    global_note: str | None = None  # None until the global provider was looked at

    def global_router(self) -> _Router | None:
        """The router on the global provider, set up on first use (see the module's docstring)."""
        if self.global_note is None:
            if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
                trace.set_tracer_provider(TracerProvider())
            provider = trace.get_tracer_provider()
            if hasattr(provider, "add_span_processor"):
                self.router = _Router()
                provider.add_span_processor(self.router)
                self.global_note = ""
            else:
                self.global_note = (
                    f"the global tracer provider ({type(provider).__name__}) takes no span processor, "
                    "so spans traced through it are not judged"
                )
        return self.router


_SESSION = pytest.StashKey[_Session]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("reliability", "otel-reliability tool-call verdicts")
    group.addoption(
        "--reliability-expectations", action="append", default=[], metavar="FILE", dest="reliability_expectations",
        help="expectation file (YAML, TOML or JSON) for the runs the reliability fixture judges; "
        "repeatable, the first matching rule wins",
    )


def pytest_configure(config: pytest.Config) -> None:
    try:
        expectations = load_expectations(config.getoption("reliability_expectations"))
    except ExpectationError as exc:
        raise pytest.UsageError(f"--reliability-expectations: {exc}") from exc
    config.stash[_SESSION] = _Session(expectations)


@pytest.fixture
def reliability(request: pytest.FixtureRequest) -> Iterator[Reliability]:
    """A ``ReliabilitySpanProcessor`` for this test: see ``otel_reliability.pytest_plugin``."""
    session = request.config.stash[_SESSION]
    router = session.global_router()
    judged = Reliability(session.expectations, session.global_note or "")
    if router is not None:
        router.target = judged.processor
    try:
        yield judged
    finally:
        if router is not None:
            router.target = None
        judged.close()
        session.verdicts += [(request.node.nodeid, result) for result in judged.results]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    session = config.stash.get(_SESSION, None)
    if session is None or not session.verdicts:
        return
    terminalreporter.write_sep("=", "otel-reliability verdicts")
    for nodeid, result in session.verdicts:
        verdict = result.verdict
        terminalreporter.write_line(
            f"{verdict.eval_status} {nodeid}: agent {result.agent!r}, expectation {result.expectation!r}, "
            f"score {verdict.score:.2f}",
            red=not result.passed,
            green=result.passed,
        )
    failed = sum(1 for _, result in session.verdicts if not result.passed)
    runs = len(session.verdicts)
    terminalreporter.write_line(f"{runs} run{'s' if runs != 1 else ''} judged: {runs - failed} passed, {failed} failed")
