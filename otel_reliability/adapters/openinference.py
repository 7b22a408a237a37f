"""What the GenAI adapter reads of OpenInference on a model span stamped by both conventions
(strands under OpenInference): its flattened messages. Every other OpenInference span is read by
its convention file (``conventions/openinference.yaml``, the framework files beside it); this
goes with the GenAI adapter's move to a file, whose rule names ``format: flattened_messages``.
"""

from __future__ import annotations

from typing import Any

from ..model import SpanRecord
from . import flattened

KIND = "openinference.span.kind"  # marks the convention
_INPUT_MESSAGES = "llm.input_messages"
_OUTPUT_MESSAGES = "llm.output_messages"


def read_messages(attrs: Any, record: SpanRecord, knows: bool = True) -> None:
    """The calls a model span stamped by GenAI too asked for and the answers its input adds, in
    OpenInference's flattened messages (``flattened``). ``knows`` is not read: the flattened
    format holds no framework knowledge."""
    record.requests = flattened.requests(attrs, _OUTPUT_MESSAGES)
    record.responses = flattened.responses(attrs, _INPUT_MESSAGES)
