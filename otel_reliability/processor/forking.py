"""Fork hooks that do not keep their object alive.

``os.register_at_fork`` keeps its callables for the life of the process and offers no way
to remove them, so a hook that held its object would keep every span processor ever made
alive. Each hook here holds a weak reference and does nothing once the object is gone.
"""

from __future__ import annotations

import logging
import os
import weakref
from typing import Protocol

logger = logging.getLogger(__name__)


class ForkAware(Protocol):
    """What an object does around ``os.fork()``; each runs on the thread that forks."""

    def before_fork(self) -> None: ...

    def after_fork_in_parent(self) -> None: ...

    def after_fork_in_child(self) -> None: ...


def register_fork_hooks(target: ForkAware) -> None:
    """Call ``target``'s fork methods around every ``os.fork()`` while ``target`` lives.

    >>> class Counter:
    ...     children = 0
    ...     def before_fork(self): pass
    ...     def after_fork_in_parent(self): pass
    ...     def after_fork_in_child(self): self.children += 1
    >>> register_fork_hooks(Counter())  # collected at once: its hooks then do nothing
    """
    if not hasattr(os, "register_at_fork"):  # not on Windows: nothing forks there
        return
    ref = weakref.ref(target)

    def hook(name: str):
        def call() -> None:
            alive = ref()
            if alive is None:
                return
            try:
                getattr(alive, name)()
            except Exception:  # a failing hook must not fail the app's fork
                logger.exception("otel-reliability: %s failed", name)

        return call

    os.register_at_fork(
        before=hook("before_fork"),
        after_in_parent=hook("after_fork_in_parent"),
        after_in_child=hook("after_fork_in_child"),
    )
