"""The official ``bfcl-eval`` checker behind the same interface as ``judge``, to measure agreement.

Needs ``bfcl-eval`` installed. Its declared dependencies include torch (through
sentence-transformers), faiss and vLLM-era pins, none of which the checker needs;
importing the checker does import every vendor SDK its model registry names, and
qwen-agent, which needs ``soundfile`` that ``bfcl-eval`` forgets to declare. The
lightest install that imports the checker (about 300 MB, no torch)::

    pip install --no-deps bfcl-eval==2026.3.23 qwen-agent==0.0.34 datamodel-code-generator==0.89.0
    pip install tree-sitter==0.21.3 tree-sitter-java==0.21.0 tree-sitter-javascript==0.21.4 \
        numpy==1.26.4 cohere==5.18.0 mistralai==1.7.0 filelock==3.20.0 anthropic google-genai \
        boto3 writer-sdk tenacity overrides tiktoken json5 soundfile dashscope pillow tqdm

Importing the checker takes a few seconds. ``official_judge()``
returns a function ``Case -> Judgement`` that does what ``bfcl evaluate`` does for one
already-decoded entry: the (ir)relevance rule, the output-shape check, then
``ast_checker``. ``underscore_to_dot`` is honoured by judging under a model whose
configuration has that flag. Where the official checker raises, the answer is
``judge_error:unjudgeable``, as ``judge`` answers.
"""

from __future__ import annotations

from typing import Callable

from otel_reliability.matcher.bfcl.judge import Case
from otel_reliability.matcher.bfcl.verdicts import IRRELEVANT_CALL, RELEVANT_NO_CALL, UNJUDGEABLE, VALID, WRONG_FORMAT, Judgement

__all__ = ["MODEL_FOR_FLAG", "official_judge"]

MODEL_FOR_FLAG = {True: "gpt-4o-2024-11-20-FC", False: "gorilla-openfunctions-v2"}
"""A model registered in ``bfcl-eval`` with ``underscore_to_dot`` True / False."""


def official_judge() -> Callable[[Case], Judgement]:
    """Import the official checker and wrap it (raises ``ImportError`` when it is not installed)."""
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.utils import is_empty_output, is_function_calling_format_output

    for flag, model in MODEL_FOR_FLAG.items():
        if MODEL_CONFIG_MAPPING[model].underscore_to_dot is not flag:
            raise RuntimeError(f"bfcl-eval's {model} no longer has underscore_to_dot={flag}")
    languages = {"python": Language.PYTHON, "java": Language.JAVA, "javascript": Language.JAVASCRIPT}

    def check(case: Case) -> Judgement:
        category = case.category
        if "relevance" in category:
            called = not is_empty_output(case.candidate)
            if "irrelevance" in category:
                return Judgement(False, IRRELEVANT_CALL) if called else VALID
            return VALID if called else Judgement(False, RELEVANT_NO_CALL)
        if not is_function_calling_format_output(case.candidate):
            return Judgement(False, WRONG_FORMAT)
        try:
            result = ast_checker(
                case.function, case.candidate, case.possible_answer, languages[case.language],
                category, MODEL_FOR_FLAG[case.underscore_to_dot],
            )
        except Exception as exc:  # the official checker crashes on this case
            return Judgement(False, UNJUDGEABLE, f"{type(exc).__name__}: {exc}")
        return VALID if result["valid"] else Judgement(False, result["error_type"])

    return check
