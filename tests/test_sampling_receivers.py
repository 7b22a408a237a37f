"""Two receivers that share no state sample the same runs: the decision is a hash of the
trace id alone, so receivers behind a load balancer, a restart, or a re-judgement agree."""

from __future__ import annotations

import json

from .receiver_harness import receivers, remap_corpus, wait_until  # noqa: F401 - receivers is a fixture

RULE = {"name": "sampled-half", "sample_rate": 0.5, "fail_on": ["error", "refused", "pending"]}


def test_two_receivers_judge_the_same_runs_by_the_sampled_expectation_and_the_rest_by_the_default(
    receivers, tmp_path  # noqa: F811
):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"expectations": [RULE]}))
    files = remap_corpus(tmp_path / "traces", "sampling", ("pydantic_ai", "openai_agents", "strands", "langgraph"))
    first, second = (
        receivers.start(name, config={"expectations": [str(rules)]}) for name in ("first", "second")
    )
    for receiver in (first, second):
        for path in files:
            reply = receiver.post_traces(path.read_bytes(), content_type="application/json")
            assert reply.status == 200, (path.name, reply.status, reply.body)

    def judged_by(receiver) -> dict[tuple[str, str], str]:
        wait_until(receiver.settled, 60, f"{receiver.log.name}'s final verdicts")
        return {(r["trace_id"], r["run_span_id"]): r["expectation"] for r in receiver.results()["results"]}

    decisions = judged_by(first)
    assert decisions == judged_by(second)
    chosen = sorted(decisions.values())
    assert set(chosen) == {"default", "sampled-half"}, chosen  # both decisions happen among these runs
    # Both counted the same decisions (a run judged again, e.g. resumed, is counted again:
    # the counters count judgements, so they are compared with each other, not with the runs).
    counted = [
        [receiver.metric("agent_reliability_sampling_total", reliability_sampling_decision=d) for d in ("sampled", "skipped")]
        for receiver in (first, second)
    ]
    assert counted[0] == counted[1]
    assert counted[0][0] >= chosen.count("sampled-half") and counted[0][1] >= chosen.count("default")
