"""Model output as BFCL's generation step writes it → decoded calls for the judge. Pure.

A result file line is ``{"id": …, "result": …}``; ``result`` is what the model
answered, in one of the shapes BFCL's handlers and tools around it write:

- function-calling models: a list of ``{name: arguments}`` with the arguments a
  JSON string or an object;
- OpenAI-style items ``{"name": …, "arguments": …}`` (also under ``"function"``),
  as tools such as HelloAgents export them;
- prompting models: text — a Python-style list of calls ``[f(a=1), g.h(b='x')]``
  (for Java and JavaScript entries the argument values are source text), or a
  JSON array of either item shape, possibly inside a Markdown code fence.

``decode`` returns the candidate the judge reads, or raises ``DecodeError`` (which
the score turns into ``ast_decoder:decoder_failed``, or "no call" for irrelevance).

Differences from the official decoders, which use each model's handler: Python
call text is read with ``ast`` as BFCL does, but arithmetic in arguments is folded
only for numbers (BFCL ``eval``s it) and positional arguments are dropped as BFCL
drops them; Java/JavaScript call text is read with a small bracket- and
quote-aware splitter instead of tree-sitter — string literals lose their quotes,
every other value is kept as written — and, like BFCL, only the first call counts.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from typing import Any

__all__ = ["DecodeError", "decode"]


class DecodeError(ValueError):
    """The output could not be read as function calls."""


_FENCE = re.compile(r"^```[\w-]*\s*(.*?)\s*```$", re.DOTALL)


def decode(raw: Any, language: str = "python") -> list[dict[str, Any]]:
    """The calls in one ``result`` value.

    >>> decode('[math.factorial(number=5)]')
    [{'math.factorial': {'number': 5}}]
    >>> decode([{"get_weather": '{"city": "Paris"}'}])
    [{'get_weather': {'city': 'Paris'}}]
    >>> decode('[{"name": "f", "arguments": {"x": 1}}]')
    [{'f': {'x': 1}}]
    >>> decode('[Sde(t="https://x", e={startingCwd: \\'/home\\'})]', "javascript")
    [{'Sde': {'t': 'https://x', 'e': "{startingCwd: '/home'}"}}]
    """
    if isinstance(raw, list):
        calls: list[dict[str, Any]] = []
        for item in raw:
            if isinstance(item, str):
                calls.extend(decode(item, language))
            else:
                calls.append(_item(item))
        return calls
    if isinstance(raw, dict):
        return [_item(raw)]
    if not isinstance(raw, str):
        raise DecodeError(f"cannot read calls from a {type(raw).__name__}")
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if text[:1] in "[{":
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            pass
        else:
            if isinstance(parsed, (list, dict)):
                return decode(parsed, language)
    text = text.strip("`\n ")
    if not text:
        raise DecodeError("empty output")
    if language == "python":
        return _python_calls(text)
    return _source_calls(text)


def _item(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise DecodeError(f"a call must be an object, got {type(item).__name__}")
    if "function" in item and isinstance(item["function"], dict) and "name" in item["function"]:
        item = item["function"]
    if isinstance(item.get("name"), str) and len(item) <= 3 and ({"arguments", "parameters", "args"} & item.keys() or len(item) == 1):
        arguments = item.get("arguments", item.get("parameters", item.get("args", {})))
        return {item["name"]: _arguments(arguments)}
    return {name: _arguments(arguments) for name, arguments in item.items()}


def _arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise DecodeError(f"arguments are not JSON: {exc.msg}") from exc
    return arguments


# --- Python call text ------------------------------------------------------------------------


def _python_calls(text: str) -> list[dict[str, Any]]:
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    try:
        body = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise DecodeError(f"not Python call syntax: {exc.msg}") from exc
    nodes = [body] if isinstance(body, ast.Call) else getattr(body, "elts", None)
    if nodes is None:
        raise DecodeError("not a list of calls")
    calls = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            raise DecodeError(f"not a call: {ast.unparse(node)}")
        calls.append(_python_call(node))
    return calls


def _python_call(node: ast.Call) -> dict[str, Any]:
    parts = []
    target: ast.expr = node.func
    while isinstance(target, ast.Attribute):
        parts.append(target.attr)
        target = target.value
    if isinstance(target, ast.Name):
        parts.append(target.id)
    name = ".".join(reversed(parts))
    return {name: {kw.arg: _python_value(kw.value) for kw in node.keywords if kw.arg is not None}}


_ARITHMETIC = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}


def _python_value(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _python_value(node.operand)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
        return ast.unparse(node)
    if isinstance(node, ast.List):
        return [_python_value(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_python_value(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return {_python_value(k): _python_value(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _python_call(node) if node.keywords else ast.unparse(node)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _python_value(node.left), _python_value(node.right)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            try:
                return _ARITHMETIC[type(node.op)](left, right)
            except (ArithmeticError, ValueError):
                pass
    return ast.unparse(node)


# --- Java / JavaScript call text ---------------------------------------------------------------

_OPENERS = {"(": ")", "[": "]", "{": "}"}


def _source_calls(text: str) -> list[dict[str, Any]]:
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip()
    pieces = _split_top(text, ",")
    if not pieces or not pieces[0].strip():
        raise DecodeError("no call found")
    call = pieces[0].strip().rstrip(";")
    open_at = call.find("(")
    if open_at <= 0 or not call.endswith(")"):
        raise DecodeError(f"not a call: {call[:80]}")
    name = call[:open_at].strip()
    if not re.fullmatch(r"[\w$.]+", name):
        raise DecodeError(f"not a function name: {name!r}")
    arguments: dict[str, Any] = {}
    for piece in _keyword_pieces(call[open_at + 1 : -1]):
        key, _, value = piece.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" and len(_split_top(value, ",")) == 1:
            value = value[1:-1]
        arguments[key.strip()] = value
    return [{name: arguments}]


_KEYWORD = re.compile(r"\s*[A-Za-z_$][\w$]*\s*=(?!=)")


def _keyword_pieces(text: str) -> list[str]:
    """``a=1, b=new HashMap<String, Object>()`` → ``["a=1", "b=new HashMap<String, Object>()"]``.

    Angle brackets are not brackets to the splitter (``<`` may compare), so a piece
    that does not start a keyword argument continues the one before it.
    """
    pieces: list[str] = []
    for piece in _split_top(text, ","):
        if _KEYWORD.match(piece):
            pieces.append(piece.strip())
        elif pieces:
            pieces[-1] += "," + piece.rstrip()
        elif piece.strip():
            raise DecodeError(f"not a keyword argument: {piece.strip()[:80]}")
    return pieces


def _split_top(text: str, separator: str) -> list[str]:
    """Split at ``separator`` outside brackets and quotes; unbalanced text raises ``DecodeError``."""
    pieces, depth, quote, start = [], [], "", 0
    index = 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char in _OPENERS:
            depth.append(_OPENERS[char])
        elif char in ")]}":
            if not depth or depth.pop() != char:
                raise DecodeError("unbalanced brackets")
        elif char == separator and not depth:
            pieces.append(text[start:index])
            start = index + 1
        index += 1
    if quote or depth:
        raise DecodeError("unbalanced brackets or quotes")
    pieces.append(text[start:])
    return pieces
