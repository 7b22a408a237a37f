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
    wait_until(lambda: receiver.results_for([trace])[0]["eval_status"] == "FAILED", 10, "the superseding verdict")

    def standing():
        found = [s for s in receiver.http("GET", "/api/v1/reputation").json()["standings"] if s["agent"] == "late-failure"]
        return found and found[0]["passed_evaluations"] == 0 and found[0]

    final = wait_until(standing, 10, "the standing to follow the superseding verdict")
    assert (final["evaluations"], final["total_evaluations"], final["passed_evaluations"]) == (1, 1, 0)
