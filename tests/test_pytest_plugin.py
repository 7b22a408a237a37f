"""The pytest plugin, run as users run it: real pytest subprocesses (``pytester``) over small test
files driving a real pydantic-ai agent (scripted ``FunctionModel``) or GenAI-shaped SDK spans."""

from __future__ import annotations

import re
import textwrap

import pytest

pytest_plugins = ["pytester"]

HELPERS = '''
import json

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def calculator(b, instrument, name="calculator"):
    """A pydantic-ai agent whose scripted model asks for multiply(a=10, b=b), then answers."""
    turns = [[ToolCallPart("multiply", {"a": 10, "b": b}, tool_call_id="c1")], "done"]

    def respond(messages, info):
        turn = turns.pop(0)
        return ModelResponse(parts=[TextPart(turn)] if isinstance(turn, str) else turn)

    agent = Agent(FunctionModel(respond), name=name)
    agent.instrument = instrument

    @agent.tool_plain
    def multiply(a: int, b: int) -> int:
        return a * b

    return agent


def genai_run(tracer, agent, calls):
    """One agent run as GenAI spans: a model call requesting (tool, arguments, error) calls, then each execution."""
    with tracer.start_as_current_span(
        f"invoke_agent {agent}", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
    ):
        parts = [{"type": "tool_call", "id": f"call_{i}", "name": n, "arguments": a} for i, (n, a, _) in enumerate(calls)]
        with tracer.start_as_current_span("chat model", attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
        }):
            pass
        for i, (name, arguments, error) in enumerate(calls):
            with tracer.start_as_current_span(f"execute_tool {name}", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": f"call_{i}", "gen_ai.tool.call.arguments": json.dumps(arguments),
            }) as span:
                if error:
                    span.set_status(Status(StatusCode.ERROR, error))
'''

# (test name, body, lines its failure report must show); None: the test passes.
CASES = [
    (
        "test_agent_on_the_fixture_provider_passes",
        """
        agent = calculator(5, InstrumentationSettings(tracer_provider=reliability.provider))
        with reliability.expect(tool_calls=["multiply"], arguments={"multiply": {"a": 10, "b": 5}}) as check:
            agent.run_sync("What is 10 times 5?")
        check.assert_passed()
        """,
        None,
    ),
    (
        "test_agent_on_the_global_provider_passes",
        """
        agent = calculator(5, True)
        with reliability.expect(tool_calls=["multiply"]) as check:
            agent.run_sync("What is 10 times 5?")
        check.assert_passed()
        [run] = [s for s in reliability.spans if s.attributes.get("reliability.status")]
        assert run.attributes["reliability.status"] == "PASSED"
        """,
        None,
    ),
    (
        "test_wrong_argument_shows_the_key",
        """
        agent = calculator(6, InstrumentationSettings(tracer_provider=reliability.provider))
        with reliability.expect(tool_calls=["multiply"], arguments={"multiply": {"a": 10, "b": 5}}) as check:
            agent.run_sync("What is 10 times 5?")
        check.assert_passed()
        """,
        ["E       AssertionError: ReliabilityEval failed: agent 'calculator', expectation 'inline', score 0.67",
         "E       arguments of multiply (subset):",
         "E         b: expected 5, got 6"],
    ),
    (
        "test_unexpected_tool_shows_expected_and_got",
        """
        with reliability.expect(tool_calls=["multiply"]) as check:
            genai_run(reliability.provider.get_tracer("t"), "calculator", [("add", {"a": 1}, None)])
        check.assert_passed()
        """,
        ["E       tool calls:",
         "E         expected:   ['multiply']",
         "E         got:        ['add']",
         "E         missing:    ['multiply']",
         "E         unexpected: ['add']"],
    ),
    (
        "test_order_shows_both_chains",
        """
        with reliability.expect(chain=["search", "summarize"], order="exact") as check:
            genai_run(trace.get_tracer("t"), "researcher", [("summarize", {}, None), ("search", {}, None)])
        check.assert_passed()
        """,
        ["E       order (exact):",
         "E         expected: ['search', 'summarize']",
         "E         got:      ['summarize', 'search']"],
    ),
    (
        "test_errored_call_fails_the_default_expectation",
        """
        genai_run(trace.get_tracer("t"), "divider", [("divide", {"b": 0}, "division by zero")])
        reliability.assert_passed()
        """,
        ["E       AssertionError: ReliabilityEval failed: agent 'divider', expectation 'default'",
         "E       policies:",
         "E       errored: ['divide']"],
    ),
    (
        "test_nothing_traced_says_where_to_trace",
        """
        with reliability.expect(tool_calls=["multiply"]) as check:
            pass
        check.assert_passed()
        """,
        ["E       AssertionError: ReliabilityEval failed: no agent run was judged inside the reliability.expect() block. "
         "Trace the agent through reliability.provider"],
    ),
]

LIMIT = '''
def test_zz_the_global_provider_cannot_be_replaced_afterwards():
    # The documented limit: the plugin set the global provider for the router, and the API keeps the first one.
    before = trace.get_tracer_provider()
    trace.set_tracer_provider(TracerProvider())
    assert trace.get_tracer_provider() is before
'''


def _test_file() -> str:
    header = "from opentelemetry.sdk.trace import TracerProvider\n"
    header += "from pydantic_ai.models.instrumented import InstrumentationSettings\nfrom helpers import *\n"
    tests = [f"\ndef {name}(reliability):\n{textwrap.indent(textwrap.dedent(body), '    ')}" for name, body, _ in CASES]
    return header + "".join(tests) + LIMIT


def _failure_sections(stdout: str) -> dict[str, str]:
    """Each failed test's report, by test name (pytest heads them ``____ name ____``)."""
    parts = re.split(r"^_{3,} (\w+) _{3,}$", stdout, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


@pytest.fixture
def plugin_run(pytester):
    pytester.makepyfile(helpers=HELPERS, test_agents=_test_file())
    return pytester.runpytest_subprocess("-p", "no:cacheprovider")


def test_each_failure_lists_expected_against_got_per_field_and_passing_tests_pass(plugin_run):
    failing = [name for name, _, lines in CASES if lines is not None]
    plugin_run.assert_outcomes(passed=len(CASES) - len(failing) + 1, failed=len(failing))
    sections = _failure_sections(plugin_run.stdout.str())
    assert sorted(sections) == sorted(failing)
    for name, _, lines in CASES:
        if lines is None:
            continue
        report = sections[name].splitlines()
        for line in lines:
            assert any(row.startswith(line) for row in report), f"{name}: no line {line!r} in\n{sections[name]}"
        assert "RunResult(" not in sections[name]  # fields, not one long repr
        assert not re.search(r"otel_reliability/[\w/]+\.py", sections[name])  # the test's line, not the plugin's frames


def test_the_session_ends_with_every_verdict_and_the_totals(plugin_run):
    plugin_run.stdout.fnmatch_lines([
        "*= otel-reliability verdicts =*",
        "PASSED test_agents.py::test_agent_on_the_fixture_provider_passes: agent 'calculator', expectation 'inline', score 1.00",
        "PASSED test_agents.py::test_agent_on_the_global_provider_passes: agent 'calculator', expectation 'inline', score 1.00",
        "FAILED test_agents.py::test_wrong_argument_shows_the_key: agent 'calculator', expectation 'inline', score 0.67",
        "FAILED test_agents.py::test_unexpected_tool_shows_expected_and_got: agent 'calculator', *",
        "FAILED test_agents.py::test_order_shows_both_chains: agent 'researcher', *",
        "FAILED test_agents.py::test_errored_call_fails_the_default_expectation: agent 'divider', expectation 'default', *",
        "6 runs judged: 2 passed, 4 failed",
    ])


EXPECTATION_FILES = {
    "calculator.yaml": """
        expectations:
          - name: calculator multiplies
            match: {agent: calculator}
            expected_tool_calls: [multiply]
            expected_tool_call_arguments: {multiply: {a: 10, b: 5}}
    """,
    "everyone.yaml": """
        expectations:
          - name: calculator is shadowed
            match: {agent: calculator}
            expected_tool_calls: [add]
          - name: greeter greets
            match: {agent: greeter}
            expected_tool_calls: [multiply]
    """,
}

FILE_RULE_TESTS = '''
from pydantic_ai.models.instrumented import InstrumentationSettings
from helpers import calculator


def test_calculator_by_the_first_file(reliability):
    calculator(6, InstrumentationSettings(tracer_provider=reliability.provider)).run_sync("10 times 5?")
    reliability.assert_passed()


def test_greeter_by_the_second_file(reliability):
    calculator(6, True, name="greeter").run_sync("10 times 6?")
    reliability.assert_passed()
'''


def test_expectation_files_are_repeatable_and_the_first_matching_rule_judges(pytester):
    for name, text in EXPECTATION_FILES.items():
        pytester.path.joinpath(name).write_text(textwrap.dedent(text))
    pytester.makepyfile(helpers=HELPERS, test_rules=FILE_RULE_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider",
        "--reliability-expectations", "calculator.yaml", "--reliability-expectations", "everyone.yaml",
    )
    result.assert_outcomes(passed=1, failed=1)
    report = _failure_sections(result.stdout.str())["test_calculator_by_the_first_file"]
    assert "expectation 'calculator multiplies'" in report
    assert "E         b: expected 5, got 6" in report.splitlines()
    result.stdout.fnmatch_lines(["PASSED test_rules.py::test_greeter_by_the_second_file: agent 'greeter', expectation 'greeter greets', *"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read expectation file"),
        ("expectations: [{name: x, expected_tool_calls: 3}]", "expectations[[]0].expected_tool_calls: expected a list, got 3"),
    ],
    ids=["missing file", "invalid rule"],
)
def test_a_bad_expectation_file_is_a_usage_error_naming_it(pytester, content, message):
    if content is not None:
        pytester.path.joinpath("rules.yaml").write_text(content)
    pytester.makepyfile(test_nothing="def test_nothing(): pass")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--reliability-expectations", "rules.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--reliability-expectations: rules.yaml: {message}*"])


APP_PROVIDER_CONFTEST = '''
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

APP_EXPORTER = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(APP_EXPORTER))
trace.set_tracer_provider(provider)
'''

APP_PROVIDER_TESTS = '''
from opentelemetry import trace
from conftest import APP_EXPORTER
from helpers import genai_run


def test_judged_while_the_fixture_is_active(reliability):
    genai_run(trace.get_tracer("app"), "planner", [("plan", {}, None)])
    reliability.assert_passed()
    assert [s.name for s in APP_EXPORTER.get_finished_spans()][-1] == "invoke_agent planner"


def test_not_judged_without_the_fixture():
    genai_run(trace.get_tracer("app"), "planner", [("plan", {}, "boom")])
    assert APP_EXPORTER.get_finished_spans()[-1].name == "invoke_agent planner"
'''


def test_an_app_global_provider_keeps_its_exporters_and_is_judged_only_during_fixture_tests(pytester):
    pytester.makeconftest(APP_PROVIDER_CONFTEST)
    pytester.makepyfile(helpers=HELPERS, test_app=APP_PROVIDER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["PASSED test_app.py::test_judged_while_the_fixture_is_active: agent 'planner', *", "1 run judged: 1 passed, 0 failed"])


def test_a_global_provider_that_takes_no_processor_is_named_when_nothing_was_judged(pytester):
    pytester.makeconftest("from opentelemetry import trace\ntrace.set_tracer_provider(trace.NoOpTracerProvider())\n")
    pytester.makepyfile(test_noop='''
from opentelemetry import trace


def test_traced_globally(reliability):
    with reliability.expect(tool_calls=["multiply"]) as check:
        with trace.get_tracer("app").start_as_current_span("invoke_agent calculator"):
            pass
    check.assert_passed()
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E       AssertionError: ReliabilityEval failed: no agent run was judged inside the reliability.expect() block. "
        "Trace the agent through reliability.provider (*); the global tracer provider (NoOpTracerProvider) "
        "takes no span processor, so spans traced through it are not judged",
    ])
