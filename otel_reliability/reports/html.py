"""A report as one self-contained HTML page: inline CSS, an inline SVG chart, no script, no network.

Every part is a ``<section>`` with the part's anchor as its id (``overview``,
``metrics``, ``samples``, ``chart``, ``recommendations``, and ``comparison`` when the
report has one); every piece of text from the data is escaped.
"""

from __future__ import annotations

from html import escape

from otel_reliability.reports.compare import Comparison
from otel_reliability.reports.compare_render import HEADERS, comparison_notes, figures, run_lists, status
from otel_reliability.reports.model import COMPARISON_PART, PARTS, Report, partial_credit_text, plural_label

__all__ = ["render_html", "accuracy_svg", "comparison_html"]

_GOOD, _FAIR, _POOR = "#2e7d32", "#f9a825", "#c62828"

_STYLE = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; margin: 0; background: #f6f8fa; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 0 0 12px; border-bottom: 1px solid #d0d7de; padding-bottom: 6px; }
section { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 16px 20px; margin: 18px 0; }
.meta { color: #57606a; margin: 0; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 8px; }
.card { border: 1px solid #d0d7de; border-radius: 8px; padding: 10px 14px; min-width: 150px; }
.card b { display: block; font-size: 22px; }
.card span { color: #57606a; font-size: 13px; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; }
th, td { border-bottom: 1px solid #eaeef2; padding: 6px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; word-break: break-word; max-width: 330px; }
td.q { max-width: 260px; }
td.id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; white-space: nowrap; }
.badge { display: inline-block; border-radius: 10px; padding: 1px 8px; font-size: 12px; font-weight: 600; color: #fff; }
.badge.pass { background: #2e7d32; }
.badge.fail { background: #c62828; }
tr.fail td.verdict { color: #c62828; }
tr.regressed td { color: #c62828; font-weight: 600; }
tr.overall td:first-child { font-weight: 600; }
#comparison table { margin: 10px 0 16px; }
h3 { font-size: 16px; margin: 14px 0 6px; }
.scroll { max-height: 620px; overflow: auto; }
ul.recs li { margin: 4px 0; }
"""


def render_html(report: Report) -> str:
    """The whole page.

    >>> from otel_reliability.reports.model import GroupRow
    >>> page = render_html(Report("R", "<bot>", "Category", "sample", [GroupRow("simple_python", 4, 5)], [], []))
    >>> page.startswith("<!DOCTYPE html>"), "&lt;bot&gt;" in page, 'id="chart"' in page, "://" in page
    (True, True, True, False)
    """
    titles = {anchor: f"{number}. {title}" for number, (anchor, title) in enumerate(PARTS, start=1)}
    unit = report.unit
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # Nothing but the inline style may load: the page works offline and leaks nothing.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>{escape(report.title)}</title><style>{_STYLE}</style></head><body><main>",
        f"<h1>{escape(report.title)}</h1>",
        f'<p class="meta">Generated {escape(f"{report.generated_at:%Y-%m-%d %H:%M:%S %Z}".rstrip())}</p>',
        # 1. overview
        f'<section id="overview"><h2>{titles["overview"]}</h2>',
        '<div class="cards">',
        _card("Agent", report.agent),
        _card(plural_label(report), ", ".join(g.name for g in report.groups) or "none"),
        _card("Accuracy", f"{report.accuracy:.2%}"),
        _card(f"Correct {unit}s", f"{report.correct}/{report.total}"),
        "</div>",
        *(f'<p class="meta">{escape(note)}</p>' for note in report.notes),
        "</section>",
        # 2. metrics
        f'<section id="metrics"><h2>{titles["metrics"]}</h2><table>',
    ]
    credit = any(group.partial_credit for group in report.groups)  # the column only where it says something
    parts.append(
        f"<thead><tr><th>{escape(report.group_label)}</th><th>Accuracy</th><th>Correct / total</th><th>Failures</th>"
        + ("<th>Partial credit (mean)</th>" if credit else "")
        + "</tr></thead><tbody>"
    )
    for group in report.groups:
        failures = ", ".join(f"{reason} ×{count}" for reason, count in group.failures.items()) or "—"
        extra = f'<td class="num">{escape(partial_credit_text(group.partial_credit))}</td>' if credit else ""
        parts.append(
            f"<tr><td>{escape(group.name)}</td><td class=\"num\">{group.accuracy:.2%}</td>"
            f"<td class=\"num\">{group.correct}/{group.total}</td><td>{escape(failures)}</td>{extra}</tr>"
        )
    parts += ["</tbody></table></section>", f'<section id="samples"><h2>{titles["samples"]}</h2>']
    if report.samples:
        credit = any(sample.partial_credit for sample in report.samples)
        parts.append(
            '<div class="scroll"><table><thead><tr><th>ID</th>'
            f"<th>{escape(report.group_label)}</th><th>Question</th><th>Prediction</th><th>Expected</th><th>Verdict</th>"
            + ("<th>Partial credit</th>" if credit else "")
            + "</tr></thead><tbody>"
        )
        for sample in report.samples:
            # A badge, not an emoji: headless and server machines often have no emoji font.
            state = "pass" if sample.passed else "fail"
            detail = "" if sample.passed else f" {escape(sample.verdict)}"
            badge = escape(sample.verdict) if sample.passed else state
            parts.append(
                f'<tr class="{state}"><td class="id">{escape(sample.id)}</td>'
                f"<td>{escape(sample.group)}</td><td class=\"q\">{escape(sample.question)}</td>"
                f'<td class="code">{escape(sample.prediction)}</td><td class="code">{escape(sample.expected)}</td>'
                f'<td class="verdict"><span class="badge {state}">{badge}</span>{detail}</td>'
                + (f'<td class="num">{escape(sample.partial_credit or "—")}</td>' if credit else "")
                + "</tr>"
            )
        parts.append("</tbody></table></div>")
    else:
        parts.append(f"<p>No {unit}s.</p>")
    parts += [
        "</section>",
        f'<section id="chart"><h2>{titles["chart"]}</h2>',
        accuracy_svg(report),
        "</section>",
        f'<section id="recommendations"><h2>{titles["recommendations"]}</h2><ul class="recs">',
        *(f"<li>{escape(sentence)}</li>" for sentence in report.recommendations or ["None."]),
        "</ul></section>",
        *([comparison_html(report.comparison, f"{len(PARTS) + 1}. {COMPARISON_PART[1]}")] if report.comparison else []),
        "</main></body></html>",
    ]
    return "\n".join(parts) + "\n"


def comparison_html(comparison: Comparison, heading: str) -> str:
    """The comparison as a ``<section id="comparison">``: the gate's notes, the figures by
    expectation and by agent ("before → after"), then the runs that changed.

    >>> from otel_reliability.reports.compare import compare_results
    >>> comparison_html(compare_results([], []), "Compared").startswith('<section id="comparison">')
    True
    """
    parts = [
        f'<section id="{COMPARISON_PART[0]}"><h2>{escape(heading)}</h2>',
        f'<p class="meta">{escape(comparison.baseline_source)} → {escape(comparison.candidate_source)}</p><ul>',
        *(f"<li>{escape(note)}</li>" for note in comparison_notes(comparison)),
        "</ul>",
    ]
    for label, groups in (
        ("Expectation", [*comparison.expectations, comparison.overall]),
        ("Agent", comparison.agents),
    ):
        parts.append(f"<table><thead><tr><th>{label}</th>" + "".join(f'<th class="num">{h}</th>' for h in HEADERS) + "</tr></thead><tbody>")
        for group in groups:
            kinds = " ".join(k for k, on in (("regressed", group.regressed), ("overall", group is comparison.overall)) if on)
            row = f'<tr class="{kinds}">' if kinds else "<tr>"
            cells = "".join(f'<td class="num">{escape(cell)}</td>' for cell in figures(group))
            parts.append(f"{row}<td>{escape(group.name)}</td>{cells}</tr>")
        parts.append("</tbody></table>")
    for title, changes in run_lists(comparison):
        parts.append(
            f"<h3>{escape(title)} ({len(changes)})</h3><table><thead><tr><th>Expectation</th><th>Agent</th>"
            "<th>Case</th><th>Before</th><th>After</th><th>Reasons</th></tr></thead><tbody>"
        )
        for change in changes:
            where = "".join(f"<td>{escape(c)}</td>" for c in (change.expectation, change.agent, change.case))
            verdicts = "".join(f'<td class="id">{escape(status(r))}</td>' for r in (change.baseline, change.candidate))
            reasons = "<br>".join(escape(reason) for reason in change.reasons)
            parts.append(f"<tr>{where}{verdicts}<td>{reasons}</td></tr>")
        parts.append("</tbody></table>")
    parts.append("</section>")
    return "\n".join(parts)


def _card(label: str, value: str) -> str:
    return f'<div class="card"><span>{escape(label)}</span><b>{escape(value)}</b></div>'


def accuracy_svg(report: Report) -> str:
    """Horizontal bars, one per group (and one overall), coloured against the threshold."""
    rows = [(g.name, g.accuracy, f"{g.correct}/{g.total}") for g in report.groups]
    if len(rows) != 1:
        rows.append(("overall", report.accuracy, f"{report.correct}/{report.total}"))
    label_width = min(300, 12 + 7.5 * max([len(name) for name, _, _ in rows] + [7]))
    bar_width, row_height = 520, 30
    width = label_width + bar_width + 150
    height = 20 + row_height * len(rows) + 24
    threshold_x = label_width + bar_width * report.threshold
    out = [
        f'<svg role="img" width="{width:.0f}" height="{height}" '
        f'viewBox="0 0 {width:.0f} {height}" font-family="system-ui, sans-serif" font-size="13">',
        f"<title>Accuracy by {escape(report.group_label.lower())}</title>",
    ]
    for index, (name, accuracy, counts) in enumerate(rows):
        y = 10 + index * row_height
        colour = _GOOD if accuracy >= 0.9 else _FAIR if accuracy >= report.threshold else _POOR
        shown = name if len(name) * 7.5 <= label_width - 12 else name[: int((label_width - 12) / 7.5) - 1] + "…"
        weight = ' font-weight="600"' if name == "overall" and len(rows) != 1 else ""
        out += [
            f'<text x="{label_width - 8:.0f}" y="{y + 19}" text-anchor="end"{weight}>{escape(shown)}</text>',
            f'<rect x="{label_width:.0f}" y="{y + 5}" width="{bar_width}" height="20" rx="3" fill="#eaeef2"/>',
            f'<rect x="{label_width:.0f}" y="{y + 5}" width="{bar_width * accuracy:.1f}" height="20" rx="3" fill="{colour}"/>',
            f'<text x="{label_width + bar_width + 8:.0f}" y="{y + 19}">{accuracy:.2%} ({escape(counts)})</text>',
        ]
    bottom = 10 + row_height * len(rows)
    out += [
        f'<line x1="{threshold_x:.1f}" y1="8" x2="{threshold_x:.1f}" y2="{bottom + 4}" stroke="#57606a" stroke-dasharray="4 3"/>',
        f'<text x="{threshold_x:.1f}" y="{bottom + 18}" text-anchor="middle" fill="#57606a" font-size="11">'
        f"threshold {report.threshold:.0%}</text>",
        "</svg>",
    ]
    return "\n".join(out)
