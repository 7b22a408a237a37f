"""Mistakes that must not pass a CI gate silently (issue 23): an expectation that selects no
run, and ``report`` / ``compare`` exiting 1 without saying why. Each scenario is the exit
code and the line on standard error a user would read.
"""

from __future__ import annotations

import json

import pytest

from otel_reliability.cli import main

from .corpus import CORPUS

CALCULATOR = CORPUS / "agno" / "agent_single_tool.json"  # "Calculator Agent" calls multiply(a=10, b=5)


def write(tmp_path, name: str, expectations: list[dict]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"expectations": expectations}))
    return str(path)


WRONG_ARGUMENTS = {"expected_tool_calls": ["multiply"], "expected_tool_call_arguments": {"multiply": {"a": 3}}}


@pytest.mark.parametrize(
    "expectations, flags, code, said",
    [
        pytest.param(
            [{"name": "calc", "match": {"agent": "Calculator Agnet"}, **WRONG_ARGUMENTS}], [], 0,
            ["warning: expectation 'calc' matched none of the 1 run(s): its match {agent: Calculator Agnet} "
             "selects none (agents seen: Calculator Agent)"],
            id="typo-in-agent-warns",
        ),
        pytest.param(
            [{"name": "calc", "match": {"agent": "Calculator Agnet"}, **WRONG_ARGUMENTS}], ["--strict-expectations"], 2,
            ["error: expectation 'calc' matched none of the 1 run(s)"],
            id="typo-in-agent-strict-is-an-error",
        ),
        pytest.param(
            [{"name": "any run"}, {"name": "calc", "match": {"agent": "Calculator Agent"}, **WRONG_ARGUMENTS}], [], 0,
            ["warning: expectation 'calc' matched none of the 1 run(s): the 1 run(s) it selects were judged "
             "by an earlier rule (any run)"],
            id="shadowed-by-an-earlier-rule",
        ),
        pytest.param(
            [{"name": "calc", "match": {"agent": "Calculator Agent"}, **WRONG_ARGUMENTS}], ["--strict-expectations"], 1,
            [],
            id="matched-and-failed-no-warning",
        ),
    ],
)
def test_an_expectation_that_selects_no_run_is_named(tmp_path, capsys, expectations, flags, code, said):
    path = write(tmp_path, "expectations.json", expectations)
    assert main(["eval", str(CALCULATOR), "--expectations", path, "--format", "json", *flags]) == code
    out, err = capsys.readouterr()
    for line in said:
        assert line in err
    if not said:
        assert "matched none" not in err
    if code == 2:
        assert out == ""  # an error: no report that reads like a verdict


def test_expectations_given_as_one_string_are_one_file(tmp_path):
    from otel_reliability.engine import Engine

    path = write(tmp_path, "expectations.json", [{"name": "calc", "expected_tool_calls": ["multiply"]}])
    assert [e.name for e in Engine(path).expectations] == ["calc"]
    assert [e.name for e in Engine(tmp_path / "expectations.json").expectations] == ["calc"]


def stores(tmp_path, capsys, degrade_second: bool) -> tuple[str, str]:
    """Two eval documents of the calculator run: the second judged by an expectation it fails."""
    documents = []
    for index, expectation in enumerate(
        [{"name": "calc", "expected_tool_calls": ["multiply"]},
         {"name": "calc", **(WRONG_ARGUMENTS if degrade_second else {"expected_tool_calls": ["multiply"]})}]
    ):
        path = write(tmp_path, f"e{index}.json", [expectation])
        output = tmp_path / f"side{index}.json"
        main(["eval", str(CALCULATOR), "--expectations", path, "--format", "json", "--output", str(output)])
        documents.append(str(output))
    capsys.readouterr()
    return documents[0], documents[1]


@pytest.mark.parametrize(
    "command, degrade, code, said",
    [
        pytest.param("report", True, 1, "exit 1: 1 of 1 run(s) did not pass (1 failed, 0 not evaluated); "
                     "the report was written to", id="report-failed-says-why"),
        pytest.param("report", False, 0, None, id="report-passed-silent"),
        pytest.param("compare", True, 1, "exit 1: pass rate fell by more than --max-drop 0: overall 100% → 0%; "
                     "'calc' 100% → 0% (1 run(s) newly failing)", id="compare-fell-says-why"),
        pytest.param("compare", False, 0, None, id="compare-same-silent"),
    ],
)
def test_report_and_compare_say_why_they_exit_1(tmp_path, capsys, command, degrade, code, said):
    baseline, candidate = stores(tmp_path, capsys, degrade)
    output = str(tmp_path / "out.md")
    args = ["report", candidate, "--output", output] if command == "report" else ["compare", baseline, candidate]
    assert main(args) == code
    _, err = capsys.readouterr()
    if said is None:
        assert "exit 1" not in err
    else:
        assert said in err
        assert len([line for line in err.splitlines() if "exit 1" in line]) == 1


def test_the_readme_expectations_example_orders_expected_chain(tmp_path):
    """The README's expectation example loads (the README test runs it too) and its ``order``
    sits with the ``expected_chain`` it orders; ``order`` with only ``expected_tool_calls`` is
    refused saying so (issue 23 point 6)."""
    import re

    from otel_reliability.expectations import ExpectationError, load_expectations

    readme = (CORPUS.parent.parent.parent / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(# expectations\.yaml\n.*?)```", readme, re.DOTALL).group(1)
    (tmp_path / "expectations.yaml").write_text(block)
    [example] = load_expectations([tmp_path / "expectations.yaml"])
    assert example.order == "in_order" and example.expected_chain == ["search", ["weather", "news"], "summarize"]
    (tmp_path / "bad.yaml").write_text("expectations: [{name: a, expected_tool_calls: [x, y], order: in_order}]")
    with pytest.raises(ExpectationError, match="it orders the steps of expected_chain, never expected_tool_calls"):
        load_expectations([tmp_path / "bad.yaml"])


def test_the_eval_table_shows_expected_against_got_arguments(tmp_path, capsys):
    """Issue 23 point 5: the reason names the argument, what was expected and what the call carried."""
    path = write(tmp_path, "expectations.json", [{"name": "calc", **WRONG_ARGUMENTS}])
    assert main(["eval", str(CALCULATOR), "--expectations", path]) == 1
    out = " ".join(capsys.readouterr().out.split())  # the terminal folds long lines
    assert "arguments: multiply (subset): a: expected 3, got 10" in out
