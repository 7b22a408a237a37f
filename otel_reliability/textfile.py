"""The one place a file the project is given becomes text: expectation files, the receiver's
and reputation's configs, profiles, BFCL inputs, result documents, OTLP/JSON trace files.

Each is UTF-8 (a byte-order mark is allowed and dropped). A file that is not is refused
here, with one error whatever read it: the file, the offset of the first byte that does
not decode, and its line, so the user can find it in an editor or with ``cmp``/``xxd``.
Callers turn ``NotUtf8Error`` into their own error type with the same message, so a
command exits 2 (bad input) and a reload is refused, never a traceback.
"""

from __future__ import annotations

from os import PathLike, fspath

BOM = "\ufeff"


class NotUtf8Error(ValueError):
    """A file whose bytes are not UTF-8.

    >>> str(NotUtf8Error("rules.yaml", b"name: caf\\xe9\\n", 9))
    'rules.yaml: not UTF-8: byte 0xe9 at offset 9 (line 1)'
    """

    def __init__(self, name: str, data: bytes, offset: int) -> None:
        self.name, self.offset = name, offset
        line = data.count(b"\n", 0, offset) + 1
        super().__init__(f"{name}: not UTF-8: byte 0x{data[offset]:02x} at offset {offset} (line {line})")


def decode_utf8(data: bytes, name: str) -> str:
    """``data`` as text; ``NotUtf8Error`` naming ``name`` and the first bad byte.

    >>> decode_utf8("\\ufeffcafé".encode(), "a.yaml")
    'café'
    >>> decode_utf8(b"ok\\n\\xff", "a.json")
    Traceback (most recent call last):
    ...
    otel_reliability.textfile.NotUtf8Error: a.json: not UTF-8: byte 0xff at offset 3 (line 2)
    """
    try:
        text = data.decode("utf-8")  # not utf-8-sig: its offsets would not count the mark
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(name, data, exc.start) from None
    return text[1:] if text.startswith(BOM) else text


def read_text(path: str | PathLike[str]) -> str:
    """A whole text file (``OSError`` as ``open`` raises it, ``NotUtf8Error``)."""
    name = fspath(path)
    with open(name, "rb") as file:
        return decode_utf8(file.read(), name)
