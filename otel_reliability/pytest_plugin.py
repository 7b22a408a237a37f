"""The pytest plugin (entry point ``pytest11``): a ``reliability`` fixture, ``--reliability-expectations``,
snapshots (``--reliability-update``), eval set cases (``reliability_case``), and the session's verdicts
at the end of the run.

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

Snapshots: ``reliability.assert_matches_snapshot()`` judges the test's runs against an
expectation file beside the test, which ``--reliability-update`` writes from them
(``otel_reliability.snapshots``). Eval sets: a test that asks for ``reliability_case`` runs
once per case of the files its ``reliability_cases`` marker or ``--reliability-cases`` names
(``otel_reliability.eval_sets``).

Spans are judged as their runs end; ``assert_passed()`` and ``results`` wait for the
judging first. Under pytest-xdist the verdicts stay in the workers, so the summary at the
end lists none (not gathered yet); the assertions work the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest

if TYPE_CHECKING:
    from .expectations import Expectation
    from .results import RunResult

# Importing this module stays cheap (pytest imports every installed plugin at start-up):
# the processor, the SDK and the expectations load when a test or an option needs them.


@dataclass
class _Session:
    expectations: list[Expectation]
    verdicts: list[tuple[str, RunResult]] = field(default_factory=list)
    route: Any = None  # otel_reliability.testing.GlobalRoute, made by the first reliability test
    update: bool = False  # --reliability-update: tests write their snapshots rather than compare with them
    snapshots_written: list[str] = field(default_factory=list)


_SESSION = pytest.StashKey[_Session]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("reliability", "otel-reliability tool-call verdicts")
    group.addoption(
        "--reliability-expectations", action="append", default=[], metavar="FILE", dest="reliability_expectations",
        help="expectation file (YAML, TOML or JSON) for the runs the reliability fixture judges; "
        "repeatable, the first matching rule wins",
    )
    group.addoption(
        "--reliability-cases", action="append", default=[], metavar="FILE", dest="reliability_cases",
        help="eval set file: each test that asks for the reliability_case fixture runs once per case "
        "(unless marked @pytest.mark.reliability_cases(FILE, …)); repeatable",
    )
    group.addoption(
        "--reliability-update", action="store_true", default=False, dest="reliability_update",
        help="write or refresh the expectation snapshot of each test that calls "
        "reliability.assert_matches_snapshot(), from the runs it traced (beside the test, in __reliability__/)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "reliability_cases(*files): the eval set files (relative to the test file) whose cases "
        "the test's reliability_case fixture runs through, one test per case",
    )
    files = config.getoption("reliability_expectations")
    expectations = []
    if files:
        from .expectations import ExpectationError, load_expectations

        try:
            expectations = load_expectations(files)
        except ExpectationError as exc:
            raise pytest.UsageError(f"--reliability-expectations: {exc}") from exc
    config.stash[_SESSION] = _Session(expectations, update=config.getoption("reliability_update"))


@pytest.fixture
def reliability(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A ``ReliabilitySpanProcessor`` for this test (``otel_reliability.testing.Reliability``):
    see ``otel_reliability.pytest_plugin``."""
    from .snapshots import Snapshot, snapshot_path
    from .testing import GlobalRoute, Reliability

    session = request.config.stash[_SESSION]
    if session.route is None:
        session.route = GlobalRoute()
    judged = Reliability(session.expectations)
    session.route.attach(judged)
    judged.global_note = session.route.note
    judged.snapshot = Snapshot(snapshot_path(request.node.path, request.node.name), session.update, request.node.nodeid)
    try:
        yield judged
    finally:
        session.route.attach(None)
        judged.close()
        session.verdicts += [(request.node.nodeid, result) for result in judged.results]
        if judged.snapshot.written:
            session.snapshots_written.append(str(judged.snapshot.path))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per case of the eval sets, for each test that asks for ``reliability_case``."""
    if "reliability_case" not in metafunc.fixturenames:
        return
    from .eval_sets import load_eval_set
    from .expectations import ExpectationError
    from .testing import CaseRun

    marker = metafunc.definition.get_closest_marker("reliability_cases")
    if marker is not None:
        files = [metafunc.definition.path.parent / name for name in marker.args]
    else:
        files = [Path(name) for name in metafunc.config.getoption("reliability_cases")]
    if not files:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid} asks for reliability_case: give --reliability-cases FILE "
            "or mark it @pytest.mark.reliability_cases(FILE)"
        )
    runs = []
    for file in files:
        try:
            cases, base = load_eval_set(file)
        except ExpectationError as exc:
            raise pytest.UsageError(f"reliability_cases: {exc}") from None
        runs += [CaseRun(case, base) for case in cases]
    metafunc.parametrize("reliability_case", runs, ids=[run.id for run in runs], indirect=True)


@pytest.fixture
def reliability_case(request: pytest.FixtureRequest) -> Any:
    """One case of an eval set (``otel_reliability.testing.CaseRun``): the test runs once per case."""
    return request.param


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    session = config.stash.get(_SESSION, None)
    if session is not None and session.snapshots_written:
        terminalreporter.write_sep("=", "otel-reliability snapshots written")
        for path in session.snapshots_written:
            terminalreporter.write_line(path)
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
