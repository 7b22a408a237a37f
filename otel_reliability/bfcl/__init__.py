"""BFCL-style judging of function calls (SPEC §9): the judge, dataset, scoring and runner.

- ``judge`` — pure: ``judge(Case, compat)`` → ``Judgement`` with the official
  checker's verdict and ``error_type`` (``compat="official"``) or with its quirks
  fixed (``compat="strict"``); ``arguments_match`` for the matcher's ``bfcl`` mode.
- ``normalise`` — pure: BFCL's string normalisation and its Java/JavaScript readers.
- ``decode`` — pure: model output as BFCL's generation step writes it → calls.
- ``dataset`` — reads ``bfcl-eval``'s data from the installed package or a path.
- ``score`` — judges a result file against the dataset, per category.
- ``runner`` — runs an agent over a category under tracing, 5 → 50 → all.
- ``cli`` — ``otel-reliability bfcl judge`` and ``bfcl score``.
- ``cases`` — judge cases from dataset entries: valid answers and mutations.
- ``official`` — the official ``bfcl-eval`` checker behind the same interface (for agreement).
"""

from otel_reliability.bfcl.judge import Case, Compat, Judgement, arguments_match, judge

__all__ = ["Case", "Compat", "Judgement", "arguments_match", "judge"]
