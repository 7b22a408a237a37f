"""The receiver keeps each agent's reputation and serves it, with the grade on /metrics."""

from __future__ import annotations

from .receiver_harness import agent_spans, new_trace_id, receivers, wait_until  # noqa: F401 - fixture


def test_standings_follow_the_verdicts_and_reach_the_api_and_metrics(receivers):  # noqa: F811
    receiver = receivers.start("reputation", decision_wait=0.1)
    clean = agent_spans(new_trace_id(), "steady")
    broken = agent_spans(new_trace_id(), "shaky", failed=["get_news"])
    receiver.send(clean)
    receiver.send(broken, "http-protobuf")
    receiver.wait_results([clean[0].trace_id.hex(), broken[0].trace_id.hex()], 2)
    standings = wait_until(
        lambda: {s["agent"]: s for s in receiver.http("GET", "/api/v1/reputation").json()["standings"]} or None,
        timeout=10,
        what="standings",
    )
    assert set(standings) == {"steady", "shaky"}
    assert standings["steady"]["score"] > standings["shaky"]["score"]
    gauge = {labels["gen_ai_agent_name"]: value for name, labels, value in receiver.metrics()
             if name == "agent_reliability_reputation_score"}
    assert gauge == {agent: standings[agent]["score"] for agent in ("steady", "shaky")}


def test_reputation_can_be_turned_off(receivers):  # noqa: F811
    receiver = receivers.start("no-reputation", decision_wait=0.1, config={"reputation": False})
    assert receiver.http("GET", "/api/v1/reputation").status == 404


def test_a_run_re_judged_after_a_late_span_counts_once_with_its_final_verdict(receivers):  # noqa: F811
    receiver = receivers.start("reputation-late", decision_wait=0.1)
    spans = agent_spans(new_trace_id(), "late-failure", failed=["get_news"])
    early, late = [s for i, s in enumerate(spans) if i != 3], spans[3]  # get_news (an error) comes late
    trace = spans[0].trace_id.hex()
    receiver.send(early)
    receiver.wait_results([trace], 1)
    receiver.send([late], "http-protobuf")
    (superseding,) = receiver.wait_results([trace], 1)
    assert superseding["eval_status"] == "FAILED"

    def standing():
        found = [s for s in receiver.http("GET", "/api/v1/reputation").json()["standings"] if s["agent"] == "late-failure"]
        return found and found[0]["passed_evaluations"] == 0 and found[0]

    final = wait_until(standing, 10, "the standing to follow the superseding verdict")
    assert (final["evaluations"], final["total_evaluations"], final["passed_evaluations"]) == (1, 1, 0)


def _evaluation(span, label: str, name: str = "helpfulness") -> None:
    event = span.events.add(name="gen_ai.evaluation.result", time_unix_nano=span.end_time_unix_nano)
    for key, value in (("gen_ai.evaluation.name", name), ("gen_ai.evaluation.score.label", label)):
        event.attributes.add(key=key).value.string_value = value


def test_evaluator_events_and_guard_denied_calls_reach_the_runs_reputation(receivers):  # noqa: F811
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    from otel_reliability.reputation import ReputationConfig, open_standings

    receiver = receivers.start("reputation-evaluators", decision_wait=0.1)
    spans = agent_spans(new_trace_id(), "judged", failed=["get_news"])
    _evaluation(spans[0], "fail")  # an online evaluator put its verdict on the run span
    denied = spans[3]  # get_news: stopped by the access policy before it ran
    denied.attributes.add(key="reliability.policy.denied").value.bool_value = True
    receiver.send(spans)
    trace = spans[0].trace_id.hex()
    receiver.wait_results([trace], 1)

    post_hoc = Span(trace_id=spans[0].trace_id, span_id=(int.from_bytes(spans[0].span_id, "big") + 99).to_bytes(8, "big"),
                    parent_span_id=spans[0].span_id, name="evaluate correctness",
                    start_time_unix_nano=spans[0].end_time_unix_nano + 1, end_time_unix_nano=spans[0].end_time_unix_nano + 2)
    _evaluation(post_hoc, "pass", name="correctness")  # a judge that ran after the run, as its child
    receiver.send([post_hoc], "http-protobuf")

    def window():
        store = open_standings(str(receiver.store), ReputationConfig())
        try:
            entries = store.window("judged")
        finally:
            store.close()
        return len(entries) == 1 and "correctness" in " ".join(e.detail for e in entries[0].evidence) and entries[0]

    [entry] = [wait_until(window, 10, "the post-hoc evaluation to join the run's entry")]
    evaluations = {("helpfulness" in e.detail, "correctness" in e.detail, e.passed) for e in entry.evidence
                   if e.dimension == "sidq"}
    assert evaluations == {(True, False, False), (False, True, True)}
    [outcomes] = [e for e in entry.evidence if e.source == "tool_outcomes"]
    assert outcomes.passed, "a call the policy stopped before it ran is not held against the agent"
