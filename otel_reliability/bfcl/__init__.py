"""BFCL-style judging of function calls (SPEC §9): dataset, scoring, runner and reports.

The judge itself is pure and lives with the matcher, whose ``bfcl`` argument mode uses it:
``otel_reliability.matcher.bfcl.judge`` — ``judge(Case, compat)`` → ``Judgement`` with the
official checker's verdict and ``error_type`` (``compat="official"``) or with its quirks
fixed (``compat="strict"``) — and ``…normalise``, BFCL's string normalisation and its
Java/JavaScript readers. This package re-exports the judge's API.

- ``decode`` — pure: model output as BFCL's generation step writes it → calls.
- ``dataset`` — reads ``bfcl-eval``'s data from the installed package or a path.
- ``score`` — judges a result file against the dataset, per category.
- ``runner`` — runs an agent over a category under tracing, 5 → 50 → all.
- ``report`` — a BFCL score as a five-part report (``otel_reliability.reports``).
- ``cli`` — ``otel-reliability bfcl judge`` and ``bfcl score``.
- ``cases`` — judge cases from dataset entries: valid answers and mutations.
- ``official`` — the official ``bfcl-eval`` checker behind the same interface (for agreement).
"""

from otel_reliability.matcher.bfcl.judge import Case, Compat, Judgement, arguments_match, judge

__all__ = ["Case", "Compat", "Judgement", "arguments_match", "judge"]
