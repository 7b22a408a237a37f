"""Tracing backends as trace sources: a URL's scheme picks the module that pulls from it.

``jaeger://HOST:PORT`` (``jaeger``) and ``phoenix://HOST:PORT/PROJECT`` (``phoenix``) each
return ``Pulled``: the spans as ``SpanData``, the same objects the file readers produce,
so pulled traces go through the same adapters and engine as files.

>>> is_backend_url("jaeger://localhost:16686"), is_backend_url("postgresql://db/results")
(True, False)
"""

from __future__ import annotations

from typing import Callable

from . import jaeger, phoenix
from .backend_http import BackendError, BackendQuery, Pulled

PULLERS: dict[str, Callable[[str, BackendQuery], Pulled]] = {
    jaeger.SCHEME: jaeger.pull,
    phoenix.SCHEME: phoenix.pull,
}
USAGE = "jaeger://HOST:PORT or phoenix://HOST:PORT/PROJECT"


def is_backend_url(text: str) -> bool:
    """Whether ``text`` names a backend this reads (``postgresql://`` names a results store)."""
    return text.startswith(tuple(PULLERS))


def names_a_scheme(text: str) -> bool:
    """Whether a trace input is a URL rather than a file path: ``pull`` says which schemes it reads.

    >>> names_a_scheme("zipkin://localhost:9411"), names_a_scheme("C:/traces/run.json")
    (True, False)
    """
    return "://" in text and not text.startswith("file://")


def pull(url: str, query: BackendQuery) -> Pulled:
    """The traces ``query`` asks for in the backend at ``url``; ``BackendError`` when the URL
    names no backend this reads, or the backend cannot be read."""
    for scheme, puller in PULLERS.items():
        if url.startswith(scheme):
            return puller(url, query)
    raise BackendError(f"{url}: not a backend this reads; give {USAGE}, or a trace file")
