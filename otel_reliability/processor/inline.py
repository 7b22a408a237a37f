"""``expect(...)``: an expectation for the agent runs started inside a ``with`` block.

The processor notes which spans start while a check is active (a context variable,
so threads and asyncio tasks keep their own) and hands the check the verdicts of the
top-level runs among them. Leaving the block waits for the processors to judge what
has ended.
"""

from __future__ import annotations

import contextvars
import weakref
from typing import Any, Literal

from ..expectations import Expectation
from ..emitters.diff import verdict_diff
from ..results import RunResult

_ACTIVE: contextvars.ContextVar[expect | None] = contextvars.ContextVar("otel_reliability_expect", default=None)
_PROCESSORS: weakref.WeakSet = weakref.WeakSet()


def active_check() -> expect | None:
    return _ACTIVE.get()


def register_processor(processor: Any) -> None:
    _PROCESSORS.add(processor)


class expect:
    """Expect tool calls from the agent runs inside the block.

    >>> from otel_reliability import expect
    >>> with expect(tool_calls=["multiply"], arguments={"multiply": {"a": 10}}) as check:
    ...     pass  # agent.run("What is 10 times 5?")
    >>> check.result is None  # no run was traced in this example
    True
    """

    def __init__(
        self,
        tool_calls: list[str] | None = None,
        arguments: dict[str, Any] | None = None,
        *,
        allow_additional: bool = False,
        chain: list[str | list[str]] | None = None,
        order: Literal["any", "exact", "in_order"] = "any",
        name: str = "inline",
        expectation: Expectation | None = None,
        timeout: float = 30.0,
    ) -> None:
        if expectation is None:
            expectation = Expectation(
                name=name,
                expected_tool_calls=tool_calls,
                expected_tool_call_arguments=arguments,
                allow_additional_tool_calls=allow_additional,
                expected_chain=chain,
                order=order,
            )
        self.expectation = expectation
        self.results: list[RunResult] = []
        self._timeout = timeout
        self._token: contextvars.Token | None = None

    def __enter__(self) -> expect:
        self._token = _ACTIVE.set(self)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None
        for processor in list(_PROCESSORS):
            processor.drain(self._timeout)

    def deliver(self, result: RunResult) -> None:
        self.results.append(result)

    @property
    def result(self) -> RunResult | None:
        """The verdict of the last top-level run judged inside the block."""
        return self.results[-1] if self.results else None

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` unless every run inside passed: for each run that did not,
        what was expected against what it did, one line per field that differs."""
        if not self.results:
            raise AssertionError(
                "ReliabilityEval failed: no agent run was judged inside the expect() block "
                "(is a ReliabilitySpanProcessor registered on the tracer provider?)"
            )
        # expected against got, field by field, as the pytest fixture says it (emitters.diff)
        failures = [verdict_diff(result, self.expectation) for result in self.results if not result.passed]
        if failures:
            raise AssertionError("\n\n".join(failures))
