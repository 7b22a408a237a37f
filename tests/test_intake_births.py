"""Which traces a replay takes from each record of the serving process's log, and what a
shard's credits admit: scenario tables over real records (``intake_records`` framing, real
OTLP request bodies), no receiver needed."""

from __future__ import annotations

import pytest

from otel_reliability.receiver.credits import Credits
from otel_reliability.receiver.intake import PROTOBUF
from otel_reliability.receiver.intake_births import EVERY_SHARD, births_note, replayable
from otel_reliability.receiver.intake_records import SEGMENT_MAGIC, Logged, encode, read_records

from .receiver_harness import agent_spans, export_request

A, B, C = 0xA0, 0xB1, 0xC2  # A and C on shard 0 of 2, B on shard 1


def request(seq: int, *traces: int) -> Logged:
    spans = [span for trace in traces for span in agent_spans(trace, f"agent-{trace:x}")[1:2]]
    return Logged("traces", PROTOBUF, export_request(spans).SerializeToString(), seq=seq)


def one_process(births: tuple[int, ...], *traces: int) -> Logged:
    """A record of a log of one process: numbered 0, its births in it."""
    logged = request(0, *traces)
    return Logged(logged.signal, logged.media_type, logged.data, births)


SCENARIOS = {
    "uncovered records: each trace from the first record it is in": (
        [request(1, A), request(2, A, B), request(3, B)],
        None, [{A}, {A, B}, {B}],
    ),
    "a trace whose first record was released is not taken from the covered ones (its tail alone)": (
        [request(2, A, B), request(3, A), births_note(2, 0, 3, [(A, 1)]), births_note(2, 1, 3, [(B, 2)])],
        None, [{B}, set()],
    ),
    "past what the notes cover, a trace is taken from the first record it is in": (
        [request(2, A, B), births_note(2, 0, 2, [(A, 1)]), births_note(2, 1, 2, [(B, 2)]), request(3, A)],
        None, [{B}, {A}],  # the shard read record 3 after A had left: A started afresh there
    ),
    "covered, and entered later than its first record: taken from the record it entered with": (
        [request(1, B), request(2, B), births_note(2, 1, 2, [(B, 2)])],
        None, [set(), {B}],
    ),
    "one shard's note covers only its traces": (
        [request(1, A, B), births_note(2, 1, 1, [])],
        None, [{A}],  # B: covered and never entered (judged before); A: shard 0 said nothing yet
    ),
    "a replay's own note covers every shard": (
        [request(5, A, B), births_note(2, EVERY_SHARD, 5, [(B, 5)])],
        None, [{B}],
    ),
    "a graceful stop's checkpoint names the traces, from every record": (
        [request(1, A, B), request(2, B, C), births_note(2, 0, 2, [(A, 1), (C, 2)])],
        frozenset({B}), [{B}, {B}],
    ),
    "a log of one process names its births in its records": (
        [one_process((A,), A), one_process((), A, B), one_process((B,), B)],
        None, [{A}, {A}, {B}],
    ),
}


@pytest.mark.parametrize(("records", "checkpoint", "taken"), list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_a_replay_takes_each_trace_from_the_record_it_entered_with(records, checkpoint, taken):
    # through the framing, as a segment holds them
    segment = SEGMENT_MAGIC + b"".join(encode(r) for r in records)
    read = [r for r in read_records(segment) if isinstance(r, Logged)]
    assert [r.seq for r in read] == [r.seq for r in records]

    got = [traces for _, traces in replayable(iter(read), lambda: iter(read), checkpoint)]

    assert got == taken


CREDITS = {
    "within the room reported": ([], (8, 100), None),
    "more spans than the room left after what was sent": ([(0, 8, 10)], (5, 10), "overloaded"),
    "what the shard read is no longer counted as sent": ([(0, 8, 10), ("report", 0, 10, 1000)], (5, 10), None),
    "at the soft byte limit": ([("report", 0, 100, 0)], (1, 10), "soft_byte_limit"),
    "a shard holding as many verdicts as it may refuses everything": (
        [("report", 0, 100, 1000, "verdicts_held")], (1, 10), "verdicts_held"),
}


@pytest.mark.parametrize(("history", "share", "refusal"), list(CREDITS.values()), ids=list(CREDITS))
def test_a_shard_is_admitted_on_the_credits_it_reported(history, share, refusal):
    credits = Credits(spans=10, nbytes=1000, retry_after=5)
    for step in history:
        if step[0] == "report":
            _, seq, spans, nbytes, *why = step
            credits.report(seq, spans, nbytes, why[0] if why else None, retry_after=5)
        else:
            credits.charge(*step)
    assert credits.refusal(*share) == refusal
