"""Expectations reloaded on a running receiver (SPEC §10, ``serve``): ``SIGHUP`` and
``POST /api/v1/reload`` (behind the token) read the expectation files again, validating
every one first. A good set judges the traces that come after it, each result naming the
new digest; a bad file is refused, with the error in the answer and the log, and the old
set stays in force. Reloads are counted by outcome. Under load, with two workers, no trace
is judged half with the old set and half with the new.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from .receiver_harness import Receiver, agent_spans, new_trace_id, receivers, wait_until  # noqa: F401 - fixture

TOKEN = "reload-token"
RELOADS = "agent_reliability_expectations_reloads_total"


def _rules(path: Path, name: str, tool: str) -> None:
    path.write_text(
        f"expectations:\n  - name: {name}\n    match: {{agent: calc}}\n    expected_tool_calls: [{tool}]\n", encoding="utf-8"
    )


def _judged(receiver: Receiver, trace_id: int, runs: int = 1) -> list[dict]:
    return receiver.wait_results([f"{trace_id:032x}"], runs, timeout=30)


def _reload(receiver: Receiver, trigger: str) -> tuple[int, dict | None]:
    """Ask for a reload; (HTTP status, answer) for the API, (0, None) for SIGHUP once its outcome is counted."""
    if trigger == "api":
        reply = receiver.http("POST", "/api/v1/reload")
        return reply.status, reply.json()
    before = receiver.metric(RELOADS)
    receiver.process.send_signal(signal.SIGHUP)
    wait_until(lambda: receiver.metric(RELOADS) > before, 30, "the SIGHUP reload to be counted")
    return 0, None


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("trigger", ["api", "sighup"])
def test_a_reload_judges_what_comes_after_with_the_new_set_and_a_bad_file_keeps_the_old(
    receivers, tmp_path, trigger, workers  # noqa: F811 - the imported fixture
):
    rules = tmp_path / "expectations.yaml"
    _rules(rules, "calc-multiplies", "multiply")
    receiver = receivers.start("reload", token=TOKEN, config={"expectations": [str(rules)], "workers": workers})

    first = new_trace_id()
    receiver.send(agent_spans(first, "calc", [("multiply", {"a": 2, "b": 3})]))
    [before] = _judged(receiver, first)
    assert (before["expectation"], before["eval_status"]) == ("calc-multiplies", "PASSED")

    _rules(rules, "calc-adds", "add")
    status, answer = _reload(receiver, trigger)
    second = new_trace_id()
    receiver.send(agent_spans(second, "calc", [("multiply", {"a": 2, "b": 3})]))
    [after] = _judged(receiver, second)

    assert (after["expectation"], after["eval_status"]) == ("calc-adds", "FAILED")
    new_digest = after["evaluator"]["expectation_digest"]
    assert new_digest != before["evaluator"]["expectation_digest"]
    if trigger == "api":
        assert status == 200 and answer["expectations"] == [{"name": "calc-adds", "digest": new_digest}], answer
    assert f"expectations reloaded: 1 expectation(s) from {rules}: calc-adds {new_digest}" in receiver.log_text()
    assert receiver.metric(RELOADS, reliability_outcome="reloaded") == 1

    for refused, (content, error) in enumerate(BAD_FILES.values(), start=1):
        rules.write_bytes(content)
        status, answer = _reload(receiver, trigger)
        third = new_trace_id()
        receiver.send(agent_spans(third, "calc", [("add", {"a": 2, "b": 3})]))
        [kept] = _judged(receiver, third)

        assert (kept["expectation"], kept["eval_status"]) == ("calc-adds", "PASSED")
        assert kept["evaluator"]["expectation_digest"] == new_digest
        said = f"expectations not reloaded, the old ones stay in force: {rules}: {error}"
        if trigger == "api":
            assert status == 400 and answer["outcome"] == "refused", answer
            assert answer["error"].startswith(f"{rules}: {error}"), answer
        assert said in receiver.log_text()
        assert receiver.metric(RELOADS, reliability_outcome="refused") == refused
    assert "Traceback" not in receiver.log_text()


# A file the reload refuses: its content, and the start of the error (after the file's name).
BAD_FILES = {
    "a field of the wrong type": (b"expectations:\n  - name: broken\n    expected_tool_calls: 7\n", "expectations[0].expected_tool_calls: expected a list"),
    "a byte that is not UTF-8": (b"expectations:\n  - name: caf\xe9\n", "not UTF-8: byte 0xe9 at offset 27 (line 2)"),
}


def test_the_reload_api_asks_for_the_token(receivers, tmp_path):  # noqa: F811 - the imported fixture
    rules = tmp_path / "expectations.yaml"
    _rules(rules, "calc-multiplies", "multiply")
    receiver = receivers.start("reload-auth", token=TOKEN, config={"expectations": [str(rules)]})

    assert receiver.http("POST", "/api/v1/reload", authorize=False).status == 401
    assert receiver.metric(RELOADS) == 0


def _two_runs(trace_id: int) -> list:
    """One trace holding two top-level runs of ``calc``, each calling multiply."""
    other = new_trace_id()
    second = agent_spans(other, "calc", [("multiply", {"a": 4, "b": 5})], start_ns=None)
    for span in second:
        span.trace_id = trace_id.to_bytes(16, "big")
    return agent_spans(trace_id, "calc", [("multiply", {"a": 2, "b": 3})]) + second


def test_under_load_no_trace_is_judged_half_with_the_old_set_and_half_with_the_new(
    receivers, tmp_path  # noqa: F811 - the imported fixture
):
    rules = tmp_path / "expectations.yaml"
    _rules(rules, "calc-v0", "multiply")
    receiver = receivers.start("reload-load", decision_wait=0.05, config={"expectations": [str(rules)], "workers": 2})
    traces: list[int] = []
    sending = threading.Event()

    def send() -> None:
        for _ in range(120):  # bounded: about as long as the reloads below take
            trace_id = new_trace_id()
            receiver.send(_two_runs(trace_id))
            traces.append(trace_id)
        sending.set()

    sender = threading.Thread(target=send)
    sender.start()
    version = 0
    while not sending.is_set() and version < 40:
        version += 1
        _rules(rules, f"calc-v{version}", "multiply" if version % 2 else "add")
        reply = receiver.http("POST", "/api/v1/reload")
        assert reply.status == 200, reply.body
    sender.join(60)

    results = receiver.wait_results([f"{t:032x}" for t in traces], 2 * len(traces), timeout=60)
    by_trace: dict[str, set[tuple[str, str]]] = {}
    for result in results:
        by_trace.setdefault(result["trace_id"], set()).add((result["expectation"], result["evaluator"]["expectation_digest"]))
    assert len(by_trace) == len(traces)
    mixed = {trace: sets for trace, sets in by_trace.items() if len(sets) != 1}
    assert not mixed, mixed
    assert version >= 2 and len({next(iter(sets)) for sets in by_trace.values()}) >= 2, "the reloads happened under load"
