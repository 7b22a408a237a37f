"""The bound on what requests take while they are decoded, in bytes.

A request body is held several times over while it is decoded: the body, the parsed
protobuf (or JSON), the decoded spans and their records, the intake log's record
(``DECODE_FACTOR``, measured on 4 MiB bodies of big attribute values). That memory is not in
the buffer's estimate, and with many clients at once it used to be what took the process
to four times a small ``max_buffered_bytes``. So a request is decoded only when its cost,
``DECODE_FACTOR`` × its (decompressed) body, fits in what ``max_inflight_bytes`` leaves
free; otherwise it is refused with the retryable status, and counted
(``agent_reliability_refusals_total{reason="inflight_bytes"}``; its spans are not counted:
the body was not decoded). A request that does not fit even alone is decoded when nothing
else is in flight, so every request the size limits allow gets through in turn.

>>> gate = InflightGate(100)
>>> gate.try_acquire(60), gate.try_acquire(60), gate.try_acquire(0)
(True, False, True)
>>> gate.release(60); gate.try_acquire(500)
True
"""

from __future__ import annotations

import threading

DECODE_FACTOR = 5  # bytes held while decoding, per byte of body
INFLIGHT_BYTES = "inflight_bytes"  # the refusal's reason


class InflightGate:
    """Bytes of decoding in flight, at most ``limit`` (or one request alone beyond it)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.taken = 0
        self._lock = threading.Lock()

    def try_acquire(self, cost: int) -> bool:
        with self._lock:
            if self.taken and self.taken + cost > self.limit:
                return False
            self.taken += cost
            return True

    def release(self, cost: int) -> None:
        with self._lock:
            self.taken -= cost
