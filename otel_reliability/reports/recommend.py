"""The recommendations part: what the figures suggest doing next, one sentence each.

Rules, not guesses: every sentence is triggered by a figure in the report (an
accuracy below the threshold, a failure reason and its count, a small sample).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from otel_reliability.reports.model import GroupRow

__all__ = ["bfcl_recommendations", "verdict_recommendations"]

SMALL_SAMPLE = 50
"""Below this many samples a figure carries little statistical weight."""

# error_type prefix → advice, most basic first (the order sentences appear in).
_BFCL_ADVICE = (
    ("ast_decoder", "the output could not be read as function calls — enforce the output format "
                    "(a JSON list of calls, or native tool calling)"),
    ("irrelevance_error", "the agent called a function although none fits the request — teach it to answer "
                          "with no call (an empty list) when no function applies"),
    ("relevance_error", "the agent made no call although one was needed"),
    ("simple_function_checker:wrong_count", "the agent made the wrong number of calls"),
    ("multiple_function_checker:wrong_count", "the agent made the wrong number of calls"),
    ("parallel_function_checker_no_order:wrong_count", "parallel requests got the wrong number of calls — "
                                                       "one call per item asked for"),
    ("parallel_function_checker_no_order:cannot_find_match", "some parallel calls match no expected call — "
                                                             "check each call's arguments"),
    ("simple_function_checker:wrong_func_name", "wrong function names — the agent picked another function or "
                                                "misspelt it (dotted names sent with underscores need "
                                                "underscore_to_dot)"),
    ("simple_function_checker:missing_required", "required parameters were left out"),
    ("simple_function_checker:missing_optional", "parameters the answer needs were left out"),
    ("simple_function_checker:unexpected_param", "parameters the function does not document were sent"),
    ("type_error", "values had the wrong type (e.g. a string for a number, 1 for true)"),
    ("value_error:string", "string values differ from every allowed value even ignoring case and punctuation"),
    ("value_error", "values differ from every allowed value"),
    ("dict_checker", "object values did not match"),
    ("list_dict_checker", "lists of objects did not match"),
    ("judge_error", "some cases could not be judged (the official checker fails on them)"),
)


def _advice(error_type: str) -> str:
    for prefix, text in _BFCL_ADVICE:
        if error_type.startswith(prefix):
            return text
    return f"failures of type {error_type}"


def bfcl_recommendations(groups: Sequence[GroupRow], failures: Counter[str], threshold: float) -> list[str]:
    """Sentences for a BFCL score.

    >>> bfcl_recommendations([GroupRow("simple_python", 5, 5)], Counter(), 0.8)[0]
    'Excellent: every sample passed (5/5); the agent calls functions correctly on what was judged.'
    """
    total = sum(g.total for g in groups)
    correct = sum(g.correct for g in groups)
    sentences: list[str] = []
    if total == 0:
        return ["Nothing was judged: run the agent over at least one category."]
    if correct == total:
        sentences.append(f"Excellent: every sample passed ({correct}/{total}); the agent calls functions correctly on what was judged.")
    for group in groups:
        if group.accuracy < threshold:
            sentences.append(
                f"{group.name}: {group.accuracy:.2%} is below the {threshold:.0%} threshold — start with its "
                f"{group.total - group.correct} failed sample{'s' * (group.total - group.correct != 1)}."
            )
    seen: dict[str, int] = {}
    for error_type, count in failures.items():
        text = _advice(error_type)
        seen[text] = seen.get(text, 0) + count
    ranked = sorted(seen.items(), key=lambda kv: -kv[1])
    for text, count in ranked:
        sentences.append(f"{count} sample{'s' * (count != 1)}: {text}.")
    if total < SMALL_SAMPLE:
        sentences.append(
            f"Only {total} sample{'s' * (total != 1)} judged: the accuracy has little statistical weight. Grow the run "
            f"progressively (5 → 50 → all) while accuracy stays at or above {threshold:.0%}."
        )
    if len(groups) == 1:
        sentences.append(
            "Only one category was judged: also run multiple, parallel and irrelevance to find where the agent's "
            "function calling breaks down."
        )
    return sentences


_PROBLEM_ADVICE = {
    "missing": "expected tools were never called cleanly: {items} — check their descriptions and the prompt",
    "unexpected": "tools were called that the expectation does not allow: {items}",
    "arguments": "argument checks failed for {items} — compare the calls' arguments with the expected ones",
    "order": "tool calls came in the wrong order",
    "policy": "policies were broken: {items}",
}


def verdict_recommendations(
    groups: Sequence[GroupRow], problems: Counter[tuple[str, str]], outcomes: Counter[str], threshold: float
) -> list[str]:
    """Sentences for a set of run verdicts (``problems``: (label, entry) → runs)."""
    total = sum(g.total for g in groups)
    correct = sum(g.correct for g in groups)
    if total == 0:
        return ["No runs were evaluated: check that the traces contain agent-run spans."]
    sentences: list[str] = []
    if correct == total:
        sentences.append(f"Every run passed its expectation ({correct}/{total}).")
    for group in groups:
        if group.accuracy < threshold:
            sentences.append(f"{group.name}: {group.accuracy:.2%} of runs passed, below the {threshold:.0%} threshold.")
    by_label: dict[str, Counter[str]] = {}
    for (label, entry), count in problems.items():
        by_label.setdefault(label, Counter())[entry] += count
    for label, entries in by_label.items():
        runs = sum(entries.values())
        items = ", ".join(f"{entry} ({n})" for entry, n in entries.most_common(5))
        advice = _PROBLEM_ADVICE.get(label, label + ": {items}").format(items=items)
        sentences.append(f"{runs} time{'s' * (runs != 1)}: {advice}.")
    if outcomes.get("error"):
        sentences.append(f"{outcomes['error']} tool call{'s' * (outcomes['error'] != 1)} errored: make the tools robust or let the agent retry.")
    refused = outcomes.get("refused", 0)
    if refused:
        sentences.append(
            f"{refused} tool call{' was' if refused == 1 else 's were'} refused before running "
            "(unknown tool, invalid arguments, a guard or a limit)."
        )
    if total < SMALL_SAMPLE:
        sentences.append(f"Only {total} run{'s' * (total != 1)} evaluated: collect more before trusting the rates.")
    return sentences
