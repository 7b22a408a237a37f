"""What the receiver counts of its intake log: its size, and what a start replayed or skipped."""

from __future__ import annotations

import logging

from opentelemetry.metrics import Meter, Observation

from .intake_log import IntakeLog

logger = logging.getLogger(__name__)


class IntakeLogMetrics:
    """The intake log's instruments (``agent.reliability.intake_log.*``)."""

    def __init__(self, meter: Meter, log: IntakeLog | None) -> None:
        if log is not None:
            meter.create_observable_gauge(
                "agent.reliability.intake_log.size", callbacks=[lambda _: [Observation(log.size)]], unit="By",
                description="Bytes of the intake log's segments on disk: acknowledged requests whose traces are "
                "still needed, and released segments the directory has not let be deleted yet",
            )
            meter.create_observable_counter(
                "agent.reliability.intake_log.written", callbacks=[lambda _: [Observation(log.written)]], unit="By",
                description="Bytes appended to the intake log since start (requests and their records' framing)",
            )
        self._replayed = meter.create_counter(
            "agent.reliability.intake_log.replayed", unit="{request}",
            description="Requests replayed from the intake log at start: acknowledged before a crash or stop, "
            "and holding spans of traces not yet judged",
        )
        self._torn = meter.create_counter(
            "agent.reliability.intake_log.torn_records", unit="{record}",
            description="Records found torn at start and skipped: the last record of a segment cut short by a "
            "crash while it was written, so never acknowledged",
        )
        self._corrupt = meter.create_counter(
            "agent.reliability.intake_log.corrupt_records", unit="{region}",
            description="Damaged stretches found in intake log segments at start and skipped: records written "
            "whole, so acknowledged, and damaged on disk since (lost); the intact records around each were replayed",
        )
        self._skipped = meter.create_counter(
            "agent.reliability.intake_log.skipped", unit="By",
            description="Bytes of intake log segments skipped at start as torn or damaged",
        )

    def replayed(self, log: IntakeLog, replayed: int, shard: str) -> None:
        """Count what ``replay`` did with ``log`` (``shard``: how the log line names this worker)."""
        found = log.found
        for counter, count in ((self._torn, found.torn_records), (self._corrupt, found.damaged_records),
                               (self._skipped, found.skipped_bytes)):
            if count:
                counter.add(count)
        if replayed:
            self._replayed.add(replayed)
            logger.info(
                "otel-reliability receiver%s replayed %d acknowledged request(s) from %s (%d torn and %d damaged "
                "record(s) skipped)", shard, replayed, log.directory, found.torn_records, found.damaged_records,
            )
