"""Keep the tool's own I/O out of the app's traces.

An app that instruments ``sqlite3``, ``urllib`` or ``requests`` would otherwise trace every
verdict the worker writes and every span the forwarder sends — spans about the tool, fed
back into the tool. OpenTelemetry's instrumentations skip work while the context carries
the suppression keys; each of the tool's own threads sets them once, for its lifetime.
"""

from __future__ import annotations

import opentelemetry.context as context  # a submodule: the namespace package exports none of them


def suppress_instrumentation_in_this_thread() -> None:
    """Mark the calling thread's context: instrumentations leave what it does untraced.

    >>> import threading
    >>> from opentelemetry.instrumentation.utils import is_instrumentation_enabled
    >>> seen = []
    >>> def work():
    ...     suppress_instrumentation_in_this_thread()
    ...     seen.append(is_instrumentation_enabled())
    >>> thread = threading.Thread(target=work); thread.start(); thread.join()
    >>> seen, is_instrumentation_enabled()
    ([False], True)
    """
    marked = context.set_value(context._SUPPRESS_INSTRUMENTATION_KEY, True)
    context.attach(context.set_value(context._SUPPRESS_HTTP_INSTRUMENTATION_KEY, True, marked))
