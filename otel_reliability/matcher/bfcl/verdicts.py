"""What a BFCL judgement says: valid or not, and the official checker's ``error_type`` strings.

Shared by the checks of a call's shape and count (``judge``) and of its values (``values``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# error_type strings: the official checker's own, so results line up with its output.
WRONG_FORMAT = "ast_decoder:decoder_wrong_output_format"
DECODER_FAILED = "ast_decoder:decoder_failed"
IRRELEVANT_CALL = "irrelevance_error:decoder_success"
RELEVANT_NO_CALL = "relevance_error:decoder_failed"
SIMPLE_COUNT = "simple_function_checker:wrong_count"
MULTIPLE_COUNT = "multiple_function_checker:wrong_count"
PARALLEL_COUNT = "parallel_function_checker_no_order:wrong_count"
PARALLEL_NO_MATCH = "parallel_function_checker_no_order:cannot_find_match"
WRONG_NAME = "simple_function_checker:wrong_func_name"
MISSING_REQUIRED = "simple_function_checker:missing_required"
UNEXPECTED_PARAM = "simple_function_checker:unexpected_param"
MISSING_OPTIONAL = "simple_function_checker:missing_optional"
TYPE_SIMPLE = "type_error:simple"
TYPE_NESTED = "type_error:nested"
TYPE_JAVA = "type_error:java"
TYPE_JS = "type_error:js"
STRING_VALUE = "value_error:string"
LIST_VALUE = "value_error:list/tuple"
DICT_KEY = "value_error:dict_key"
DICT_VALUE = "value_error:dict_value"
DICT_UNCLEAR = "dict_checker:unclear"
LIST_DICT_COUNT = "value_error:list_dict_count"
LIST_DICT_UNCLEAR = "list_dict_checker:unclear"
OTHER_VALUE = "value_error:others"
UNJUDGEABLE = "judge_error:unjudgeable"


# An answer's allowed value that means "the parameter may be left out".
OPTIONAL = ""



@dataclass(slots=True)
class Judgement:
    """The verdict on one case: ``error_type`` is ``None`` exactly when ``valid``.

    ``detail`` says why in words: a string, or ``(template, *arguments)`` that
    ``error`` formats only when asked — parallel matching discards most failures.
    Not frozen, because frozen dataclasses are slow to build; treat it as
    read-only (``VALID`` is shared).
    """

    valid: bool
    error_type: str | None = None
    detail: str | tuple | None = None

    @property
    def error(self) -> str | None:
        """The reason in words, ``None`` when valid."""
        detail = self.detail
        if detail is None or isinstance(detail, str):
            return detail
        return detail[0].format(*detail[1:])

    def to_json(self, case_id: Any) -> dict[str, Any]:
        """The ``bfcl judge`` output line (SPEC §10)."""
        return {"id": case_id, "valid": self.valid, "error_type": self.error_type}


VALID = Judgement(True)
