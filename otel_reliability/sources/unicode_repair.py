"""Text that is not valid Unicode, repaired at the door.

JSON may spell a lone UTF-16 surrogate (``"\\ud800"``), and Python decodes it into a
``str`` that no UTF-8 encoder takes: not SQLite's, not PostgreSQL's, not the Prometheus
exposition's. One such tool or agent name used to cost every verdict written in the same
batch. So before an OTLP/JSON text is parsed, every escape of a lone surrogate in it is
replaced by the escape of U+FFFD (the replacement character, what a UTF-8 decoder puts for
bytes it cannot read), and the replacements are counted.

The escape is replaced whatever number of backslashes precede it: a JSON text inside a
string attribute (tool arguments, ``gen_ai.output.messages``) spells its escapes with one
more, ``\\\\ud800``, and is repaired with the same stroke before an adapter parses it. A
surrogate pair (``\\ud83d\\ude00``, an emoji) is valid and left as it is. Only a text that
spells a surrogate escape at all is rewritten (one search in C otherwise). The one text
this changes that was not broken is a literal backslash followed by ``ud800`` — rare, and
changed only to another literal.
"""

from __future__ import annotations

import re

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_HEX2 = "[0-9a-fA-F]{2}"
# a high escape with the low escape that completes it, or a lone high, or a lone low
_ESCAPES = re.compile(
    rf"(\\+)u[dD][89abAB]{_HEX2}(?P<low>\\+u[dD][c-fC-F]{_HEX2})?|(?P<lone_low>\\+)u[dD][c-fC-F]{_HEX2}"
)
LONE_SURROGATE = "lone_surrogate"  # the reason repairs are counted under


def may_hold_lone_surrogates(json_text: str) -> bool:
    """Whether the JSON text spells a surrogate escape (a lone one, or half of a pair).

    >>> may_hold_lone_surrogates('{"name": "\\\\ud800"}'), may_hold_lone_surrogates('{"name": "calc"}')
    (True, False)
    """
    return _SURROGATE_ESCAPE.search(json_text) is not None


def repair_lone_surrogates(json_text: str) -> tuple[str, int]:
    """``json_text`` with every escape of a lone surrogate replaced by ``\\ufffd``, and how
    many were replaced.

    >>> import json
    >>> text, repaired = repair_lone_surrogates(r'["calc\\ud800", "\\ud83d\\ude00", "{\\"t\\": \\"x\\\\udfff\\"}"]')
    >>> [json.loads(json.loads(text)[2])["t"], json.loads(text)[:2], repaired]
    ['x�', ['calc�', '😀'], 2]
    """
    if not may_hold_lone_surrogates(json_text):
        return json_text, 0
    repaired = 0

    def replace(match: re.Match) -> str:
        nonlocal repaired
        if match.group("low") is not None:  # a pair: one valid character
            return match.group(0)
        repaired += 1
        return (match.group(1) or match.group("lone_low")) + "ufffd"

    return _ESCAPES.sub(replace, json_text), repaired
