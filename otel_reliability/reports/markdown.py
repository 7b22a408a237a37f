"""A report as Markdown: the five parts, with text bars for the chart (as the BFCL article shows)."""

from __future__ import annotations

from otel_reliability.reports.compare_render import comparison_markdown
from otel_reliability.reports.model import COMPARISON_PART, PARTS, Report, partial_credit_text, plural_label

__all__ = ["render_markdown", "text_bar"]

BAR_WIDTH = 50
CELL_LIMIT = 160


def text_bar(accuracy: float, width: int = BAR_WIDTH) -> str:
    """``accuracy`` as a bar of full and light blocks.

    >>> text_bar(1.0, 10), text_bar(0.25, 8)
    ('██████████', '██░░░░░░')
    """
    filled = round(max(0.0, min(1.0, accuracy)) * width)
    return "█" * filled + "░" * (width - filled)


def render_markdown(report: Report) -> str:
    """The whole report.

    >>> from otel_reliability.reports.model import GroupRow
    >>> text = render_markdown(Report("R", "bot", "Category", "sample", [GroupRow("simple_python", 5, 5)], [], ["Fine."]))
    >>> [line for line in text.splitlines() if line.startswith("## ")]
    ['## 1. Overview', '## 2. Metrics', '## 3. Sample details', '## 4. Accuracy chart', '## 5. Recommendations']
    """
    headings = {anchor: f"## {number}. {title}" for number, (anchor, title) in enumerate(PARTS, start=1)}
    unit = report.unit
    lines = [
        f"# {report.title}",
        "",
        f"Generated {report.generated_at:%Y-%m-%d %H:%M:%S %Z}".rstrip(),
        "",
        headings["overview"],
        "",
        f"- **Agent:** {_inline(report.agent)}",
        f"- **{plural_label(report)}:** "
        + (", ".join(_inline(g.name) for g in report.groups) or "none"),
        f"- **Accuracy:** {report.accuracy:.2%}",
        f"- **Correct {unit}s:** {report.correct}/{report.total}",
        *(f"- {_inline(note)}" for note in report.notes),
        "",
        headings["metrics"],
        "",
    ]
    credit = any(group.partial_credit for group in report.groups)  # the column only where it says something
    lines += [
        f"| {report.group_label} | accuracy | correct / total | failures |" + (" partial credit (mean) |" if credit else ""),
        "|---|---:|---:|---|" + ("---|" if credit else ""),
    ]
    for group in report.groups:
        failures = ", ".join(f"{reason} ×{count}" for reason, count in group.failures.items()) or "—"
        extra = f" {partial_credit_text(group.partial_credit)} |" if credit else ""
        lines.append(f"| {_cell(group.name)} | {group.accuracy:.2%} | {group.correct}/{group.total} | {_cell(failures)} |{extra}")
    lines += ["", headings["samples"], ""]
    if report.samples:
        credit = any(sample.partial_credit for sample in report.samples)
        lines += [
            f"| id | {report.group_label.lower()} | question | prediction | expected | verdict |" + (" partial credit |" if credit else ""),
            "|---|---|---|---|---|---|" + ("---|" if credit else ""),
        ]
        for sample in report.samples:
            verdict = ("✅ " if sample.passed else "❌ ") + sample.verdict
            cells = [sample.id, sample.group, sample.question, sample.prediction, sample.expected, verdict]
            if credit:
                cells.append(sample.partial_credit or "—")
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    else:
        lines.append(f"No {unit}s.")
    width = max([len(g.name) for g in report.groups] + [len("overall")])
    lines += ["", headings["chart"], "", "```"]
    for group in report.groups:
        lines.append(f"{group.name.ljust(width)}  {text_bar(group.accuracy)} {group.accuracy:7.2%} ({group.correct}/{group.total})")
    if len(report.groups) != 1:
        lines.append(f"{'overall'.ljust(width)}  {text_bar(report.accuracy)} {report.accuracy:7.2%} ({report.correct}/{report.total})")
    lines += ["```", "", headings["recommendations"], ""]
    lines += [f"- {_inline(sentence)}" for sentence in report.recommendations] or ["- None."]
    if report.comparison is not None:
        lines += ["", f"## {len(PARTS) + 1}. {COMPARISON_PART[1]}", ""]
        lines.append(comparison_markdown(report.comparison, level=2, title=False).rstrip("\n"))
    return "\n".join(lines) + "\n"


def _inline(text: str) -> str:
    return text.replace("\n", " ")


def _cell(text: str) -> str:
    text = text.replace("\r", " ").replace("\n", " ")
    if len(text) > CELL_LIMIT:
        text = text[: CELL_LIMIT - 1] + "…"
    return text.replace("|", "\\|") or " "
