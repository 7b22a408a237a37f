"""Framework knowledge, and the cold reading that leaves it out.

What the conventions say (GenAI, OpenInference, OpenLLMetry, MCP) holds for every framework
that writes them. Some readings hold for one framework alone. What a framework writes itself
(its refusal answers and error texts: ADK's, strands', agno's, openai-agents', CrewAI's, beeai's,
Spring AI's) is data, one file per framework in ``frameworks/``, applied whatever instrumentation
carried the trace. How one framework's spans are written is a convention file that says
``framework:``: the refusals Google ADK, pydantic-ai and autogen mark on GenAI tool spans by
attributes, and ADK's call held for confirmation (``conventions/genai_google_adk.yaml``,
``genai_pydantic_ai.yaml``, ``genai_autogen.yaml``); the tool-call events an autogen team's
runtime messages carry (``conventions/autogen_runtime.yaml``); and under OpenInference the name
CrewAI derives from a tool's display name and the calls its event-listener mode lists in a model
span's output, smolagents' agent named in its run span's name and its bound tool arguments, a
LangChain ``create_agent`` graph's root, agent and dispatched calls, a LlamaIndex workflow's run
span, the agent and call in its events' reprs, its wrapped tool arguments, paused calls and model
spans that only prepare a call (``conventions/openinference_<framework>.yaml``); and likewise
LangChain's graphs under MLflow and Langfuse (``mlflow_langchain.yaml``, ``langfuse_langchain.yaml``)
and the OpenAI Agents SDK's tool results under OpenLIT (``openlit_openai_agents_sdk.yaml``).

``removed()`` reads without any of them, without the framework files, the framework convention
files and any profile: the conventions alone, which is what a framework the reader knows nothing
of gets (its cold score). A few framework facts stay even then, because they are how an
instrumentation writes its own convention rather than what one framework means by it:
OpenLLMetry's LangGraph control-flow exceptions, callback wrappers and the pydantic error of a
tool's own argument model (its convention file), Google ADK's own ``call_llm`` attributes
(``conventions/google_adk_call_llm.yaml``) and its placeholder call id, legacy arguments and
merged tool span (``conventions/genai.yaml``), openai-agents' handoff span names
(``conventions/openinference.yaml``) and LangGraph's ``tools`` node under OpenInference (the same
file). Without them those instrumentations' traces do not
parse into calls at all, which says nothing of how the reader judges a framework it does not know.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from . import conventions, frameworks, profiles


class _Knowledge:
    """Whether the framework modules apply; one attribute, read on the hot path."""

    __slots__ = ("applies",)

    def __init__(self) -> None:
        self.applies = True


FRAMEWORKS = _Knowledge()


@contextmanager
def removed() -> Iterator[None]:
    """Read with no framework module and no profile while the block runs (the cold reader)."""
    kept = FRAMEWORKS.applies
    FRAMEWORKS.applies = False
    try:
        with profiles.removed(), frameworks.removed(), conventions.frameworks_removed():
            yield
    finally:
        FRAMEWORKS.applies = kept
