"""Written expectations as a commented YAML expectation file (``otel-reliability expect``).

The file says where it came from in comments — the runs, when, which version of this
package read them — and each expectation's notes (what was left out or loosened) above it;
``load_expectations`` reads it back to the same models.

>>> from otel_reliability.expectations import Expectation
>>> from otel_reliability.expectation_writer import WrittenExpectation
>>> print(expectation_yaml([WrittenExpectation(Expectation(name="calc", expected_tool_calls=["add"]), ["t1"])],
...                        ["written by a doctest"]), end="")
# written by a doctest
expectations:
  # from 1 run: t1
  - name: calc
    expected_tool_calls:
      - add
"""

from __future__ import annotations

from typing import Sequence

import yaml

from otel_reliability.expectation_writer import WrittenExpectation

_RUNS_NAMED = 5  # more runs than this are counted in the comment, not each named


class _Indented(yaml.SafeDumper):
    """Block lists indented under their key, as people write YAML."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def expectation_yaml(written: Sequence[WrittenExpectation], header: Sequence[str]) -> str:
    lines = [f"# {line}" for line in header]
    lines.append("expectations:")
    for item in written:
        runs = item.runs if len(item.runs) <= _RUNS_NAMED else [*item.runs[:_RUNS_NAMED], f"and {len(item.runs) - _RUNS_NAMED} more"]
        lines.append(f"  # from {len(item.runs)} run{'s' if len(item.runs) != 1 else ''}: {', '.join(runs)}")
        lines += [f"  # {note}" for note in item.notes]
        data = item.expectation.model_dump(mode="json", exclude_defaults=True)
        text = yaml.dump([data], Dumper=_Indented, sort_keys=False, allow_unicode=True, default_flow_style=False, width=120)
        lines += [f"  {line}" for line in text.splitlines()]
    return "\n".join(lines) + "\n"
