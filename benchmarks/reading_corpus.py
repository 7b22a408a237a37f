"""What reading a span costs, by the convention that reads it: microseconds a span of
``to_record`` over every span of the corpus (``tests/fixtures/corpus``), single-threaded.

Run: ``python benchmarks/reading_corpus.py [--repeats N]``

Each span is put in the group of the convention that reads it, told by the keys that mark the
conventions that moved from code to files, so that a group holds the same spans whichever code
reads them: ``openinference`` (its span kind) and ``autogen`` (autogen's runtime messages)
first, then the convention file of any other convention that reads the span in this checkout,
then ``genai`` (a GenAI operation, or Google ADK's ``call_llm``), else ``none``. Every group's
spans are read ``--repeats`` times after a first untimed pass (which compiles what is compiled
once); the best pass is printed, warm (with framework knowledge) and cold (``knowledge.removed()``).
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from otel_reliability.adapters import conventions, knowledge, to_record  # noqa: E402
from otel_reliability.model import SpanData  # noqa: E402
from otel_reliability.sources import read_telemetry  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "corpus"
_NOT_TRACES = (".truth.json", ".verdict.json", ".runoutput.json")
# the keys that mark the conventions moved from code to files: OpenInference's and autogen's,
# whichever file reads their spans, then GenAI's (and Google ADK's call_llm), unless a file of
# another convention reads the span
_FIRST = (("openinference.span.kind", "openinference"), ("messaging.operation", "autogen"))
_GENAI = ("gen_ai.operation.name", "gcp.vertex.agent.llm_response")
_MOVED_FILES = ("openinference", "autogen", "genai", "google_adk")


def group_of(span: SpanData) -> str:
    """The group of the convention that reads ``span`` (see the module's doc)."""
    attributes = span.attributes
    for key, group in _FIRST:
        if key in attributes:
            return group
    found = conventions.rule_for(span)
    if found is not None and not found[1].startswith(_MOVED_FILES):
        return found[1]
    return "genai" if any(key in attributes for key in _GENAI) else "none"


def corpus_spans() -> list[SpanData]:
    spans: list[SpanData] = []
    for path in sorted(CORPUS.glob("*/*.json")):
        if not path.name.endswith(_NOT_TRACES):
            spans.extend(read_telemetry(path).spans)
    return spans


def best_pass(spans: list[SpanData], repeats: int) -> float:
    """The fastest of ``repeats`` passes of ``to_record`` over ``spans``, in microseconds a span."""
    for span in spans:
        to_record(span)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for span in spans:
            to_record(span)
        best = min(best, time.perf_counter() - started)
    return best / len(spans) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    groups: dict[str, list[SpanData]] = {}
    for span in corpus_spans():
        groups.setdefault(group_of(span), []).append(span)
    print("to_record, microseconds a span (best pass), then the spans in each group:")
    for mode in ("warm", "cold"):
        with knowledge.removed() if mode == "cold" else nullcontext():
            every = [span for spans in groups.values() for span in spans]
            print(f"  {mode} all {best_pass(every, options.repeats):.2f}")
            for name, spans in sorted(groups.items(), key=lambda item: -len(item[1])):
                print(f"  {mode} {name} {best_pass(spans, options.repeats):.2f}")
    for name, spans in sorted(groups.items(), key=lambda item: -len(item[1])):
        print(f"  spans of {name} {len(spans)}")  # a group's spans, the same in every checkout but for new files


if __name__ == "__main__":
    main()
