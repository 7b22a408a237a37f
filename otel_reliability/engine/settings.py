"""The engine's bounds and timing, the same for every front door.

The span processor takes these as keyword arguments, the receiver as settings
(``serve --config``, ``OTEL_RELIABILITY_*``); both validate them here, so a bad value is
one clear error naming the setting, whichever door it came through.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..input_errors import validation_problems

MIB = 1024 * 1024


class SettingsError(ValueError):
    """Engine settings that cannot be used; the message names each bad setting."""


class EngineSettings(BaseModel):
    """How much the engine buffers, and for how long.

    >>> EngineSettings(max_traces=100).max_traces
    100
    >>> EngineSettings(max_buffered_bytes=100 * MIB, soft_limit_ratio=0.5).soft_buffered_bytes // MIB
    50
    >>> EngineSettings.checked({"max_traces": 0})
    Traceback (most recent call last):
    ...
    otel_reliability.engine.settings.SettingsError: max_traces: must be at least 1, got 0
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_traces: int = Field(50_000, ge=1, description="traces buffered at most; the least recent are evicted")
    max_spans_per_trace: int = Field(10_000, ge=1, description="spans kept per trace; more are rejected")
    trace_ttl: float = Field(300.0, gt=0, description="seconds a trace that is never judged is kept after its last span")
    late_window: float = Field(30.0, ge=0, description="seconds after judging in which a late span re-judges the trace")
    max_paused_runs: int = Field(
        1_000, ge=1, description="runs that ended waiting on a human, kept for the run that resumes them"
    )
    session_idle: float = Field(
        300.0, gt=0, description="seconds without a new run after which a session (conversation) is judged"
    )
    max_sessions: int = Field(10_000, ge=1, description="sessions gathered at most; the least recently active leave")
    max_runs_per_session: int = Field(1_000, ge=1, description="top-level runs kept per session; a longer one is not judged")
    max_buffered_bytes: int = Field(
        512 * MIB, ge=MIB,
        description="estimated bytes of everything buffered (traces and paused runs); beyond it the oldest "
        "traces are evicted, judged ones first",
    )
    max_held_verdicts: int = Field(
        10_000, ge=1,
        description="verdicts held for a sink that failed for a reason that can pass (its store unreachable or "
        "full), retried with backoff; at the bound the receiver refuses new data with a retry delay",
    )
    max_held_bytes: int = Field(
        64 * MIB, ge=MIB, description="estimated bytes of the held verdicts (their traces'); the same bound in bytes"
    )
    soft_limit_ratio: float = Field(
        0.8, gt=0, le=1,
        description="share of max_buffered_bytes beyond which the receiver refuses new data with a retry delay",
    )

    @property
    def soft_buffered_bytes(self) -> int:
        """Buffered bytes at and beyond which the receiver refuses new data (the processor cannot refuse)."""
        return int(self.max_buffered_bytes * self.soft_limit_ratio)

    @classmethod
    def checked(cls, values: dict[str, Any]) -> EngineSettings:
        """Validate ``values``, raising ``SettingsError`` that names every bad one."""
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise SettingsError(validation_problems(exc, top="settings")) from None
