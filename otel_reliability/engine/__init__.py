"""The engine: everything between "records arrive" and "a verdict is published", once.

``Pipeline`` owns the trace buffer, its due rules, paused runs and the traces that
resume them, and the fan-out to sinks; ``Engine`` chooses the expectation and runs the
matcher. Front doors (the span processor, the receiver, ``eval``) turn their input into
records and say when a trace is due; features (reputation, stores, metrics) are sinks.
The engine imports neither.
"""

from .continuations import SharedPausedRuns
from .end_of_input import judge_all_at_end, judge_at_end, judge_spans
from .judge import Engine
from .pipeline import Judged, Pipeline
from .sessions import Sessions, SharedSessions, Turn
from .settings import EngineSettings, SettingsError
from .sinks import CallbackSink, Judgement, Sink, Sinks, SinkUnavailable

__all__ = [
    "CallbackSink",
    "Engine",
    "EngineSettings",
    "Judged",
    "Judgement",
    "Pipeline",
    "Sessions",
    "SettingsError",
    "SharedPausedRuns",
    "SharedSessions",
    "Sink",
    "SinkUnavailable",
    "Sinks",
    "Turn",
    "judge_all_at_end",
    "judge_at_end",
    "judge_spans",
]
