"""What other evaluators and access policies said about each top-level run of a trace."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..model import Run, SpanRecord


def said_about(
    records: Iterable[SpanRecord], runs: list[Run]
) -> dict[int, tuple[tuple[Mapping[str, Any], ...], frozenset[int]]]:
    """By top-level run span: other evaluators' events on the run's spans (the run span, its
    descendants, evaluator spans reporting as its children), and its calls a policy denied."""
    records = list(records)
    marked = [r for r in records if r.evaluations or r.policy_denied]
    if not marked:
        return {}
    by_id = {r.span_id: r for r in records}
    run_ids = {run.span_id for run in runs}
    evaluations: dict[int, list[Mapping[str, Any]]] = {}
    denied: dict[int, set[int]] = {}
    for record in marked:
        top = _outermost_run(record, by_id, run_ids)
        if top is None:
            continue
        if record.evaluations:
            evaluations.setdefault(top, []).extend(record.evaluations)
        if record.policy_denied:
            denied.setdefault(top, set()).add(record.span_id)
    return {
        run_id: (tuple(evaluations.get(run_id, ())), frozenset(denied.get(run_id, ())))
        for run_id in evaluations.keys() | denied.keys()
    }


def _outermost_run(record: SpanRecord, by_id: dict[int, SpanRecord], run_ids: set[int]) -> int | None:
    """The outermost of ``run_ids`` among ``record`` and its ancestors."""
    top = None
    node: SpanRecord | None = record
    for _ in range(1024):  # a parent cycle in bad input must not hang the judge
        if node is None:
            break
        if node.span_id in run_ids:
            top = node.span_id
        node = by_id.get(node.parent_id)
    return top
