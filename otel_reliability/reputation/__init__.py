"""Agent reputation (SPEC §7): four-dimension evidence, Thiqah … Matruk grades over a rolling window, access by grade.

After the grading article in ``seeds/``: every verdict yields evidence items
``{dimension, source, passed, detail, confidence}`` in ``sidq`` (factual consistency),
``dabt`` (stability), ``isnad`` (chain integrity) and ``adalah`` (compliance); an
agent's standing scores the evidence of its last N evaluations (default 100) and
grades it; a policy maps grades to allowed actions.

The pipeline, one module per concern:

- ``evidence`` — evidence items from a verdict, its run's output and evaluator events (pure);
- ``scoring`` — dimension scores, the weighted score, grades (pure);
- ``standing`` — the standing and the entry one evaluation appends (pure data);
- ``stores`` — the rolling window in SQLite or PostgreSQL, one transaction per update;
- ``policy`` — grade-based access decisions (pure);
- ``report`` — the article's Markdown report and the JSON document (pure);
- ``metrics`` — the reputation gauges and the denied-call counter;
- ``tracker`` — ``Reputation``, which ties them together;
- ``sink`` — ``ReputationSink``: the engine's verdicts, as evidence;
- ``processor`` — ``ReputationSpanProcessor``: policy marks on tool spans, and judges that report after a run;
- ``cli`` — ``otel-reliability reputation``.

>>> from otel_reliability.reputation import Evidence, evaluate_evidence
>>> evaluate_evidence([Evidence("sidq", "fact_check", True, "", 0.9), Evidence("dabt", "stability", True, ""),
...                    Evidence("isnad", "matcher", True, ""), Evidence("adalah", "refusals", False, "")]).grade.value
'Saduq'
"""

from otel_reliability.reputation.config import ReputationConfig, load_config
from otel_reliability.reputation.evidence import DIMENSIONS, Evidence, run_evidence
from otel_reliability.reputation.policy import AccessPolicy, Decision, PermissionDenied, Rule
from otel_reliability.reputation.report import evaluation_markdown, standing_markdown, standings_document
from otel_reliability.reputation.scoring import Grade, Score, evaluate_evidence, grade_for, score, tally
from otel_reliability.reputation.standing import Entry, Standing
from otel_reliability.reputation.stores import StandingStore, open_standings
from otel_reliability.reputation.tracker import Observed, Reputation, check_permission
from otel_reliability.reputation.sink import ReputationSink

__all__ = [
    "DIMENSIONS",
    "AccessPolicy",
    "Decision",
    "Entry",
    "Evidence",
    "Grade",
    "Observed",
    "PermissionDenied",
    "Reputation",
    "ReputationConfig",
    "ReputationSink",
    "Rule",
    "Score",
    "Standing",
    "StandingStore",
    "check_permission",
    "evaluate_evidence",
    "evaluation_markdown",
    "grade_for",
    "load_config",
    "open_standings",
    "run_evidence",
    "score",
    "standing_markdown",
    "standings_document",
    "tally",
]
