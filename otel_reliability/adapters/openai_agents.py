"""openai-agents' OpenInference tool spans: approvals and tool guardrails.

The SDK opens a tool's span before it checks ``needs_approval`` and its tool input
guardrails, so a span exists for calls whose body never ran:

* a call waiting for approval ends its span OK with no ``output.value`` (every tool that
  returns sets one): it is no execution; its request stays pending until an answer says
  what became of it;
* a tool input guardrail that raises ends the span ERROR ``Error running tool: {…
  'error': 'Tool input guardrail <name> triggered tripwire'}``: a refusal;
* a tool output guardrail that raises ends it ERROR the same way with ``Tool output
  guardrail``: the body ran and returned, only its output was withheld.

A guardrail that rejects the content (instead of raising) leaves an OK span whose output is
the guardrail's message, like any tool's return text: the spans cannot tell it.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..model import STATUS_OK

_INPUT_GUARDRAIL = "'error': 'Tool input guardrail "
_OUTPUT_GUARDRAIL = "'error': 'Tool output guardrail "


def awaiting_approval(status_code: int, attrs: Mapping[str, Any]) -> bool:
    """Whether an OK tool span ended with no output: the call waited for a decision, it did not run."""
    return status_code == STATUS_OK and "output.value" not in attrs and "input.value" in attrs


def guardrail_refusal(error: str | None) -> str | None:
    """The refusal an input guardrail's tripwire wrote as the tool span's error, else None.

    >>> guardrail_refusal("Error running tool: {'tool_name': 'rm', 'error': 'Tool input guardrail G triggered tripwire'}")
    "Error running tool: {'tool_name': 'rm', 'error': 'Tool input guardrail G triggered tripwire'}"
    """
    return error if error is not None and _INPUT_GUARDRAIL in error else None


def ran_despite_error(error: str | None) -> bool:
    """Whether the span's error is an output guardrail's, raised after the tool body returned."""
    return error is not None and _OUTPUT_GUARDRAIL in error
