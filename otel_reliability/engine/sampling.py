"""Online sampling (SPEC §5.2): an expectation with ``sample_rate`` judges only a share of runs.

The decision is a pure function of the run's trace id, so every receiver, every
process and every re-judgement of a trace decides alike, with no state to share: the
trace id's 16 bytes (big-endian, as W3C trace context writes them) are hashed with
SHA-256, the first 8 bytes of the digest are read as an unsigned big-endian integer
``h``, and the run is sampled iff ``h < sample_rate × 2**64``. Hashing, rather than
reading the id's low bits as the OpenTelemetry ratio sampler does, keeps the share
right for producers whose ids are not random (sequential ids in tests, time-prefixed
ids); it is independent of any head sampling.

The rate is per expectation, but the hash does not depend on it: a run sampled at 0.1
is sampled at every higher rate too.
"""

from __future__ import annotations

import hashlib
SAMPLED = "sampled"
SKIPPED = "skipped"
_SCALE = 2**64
_ID_MASK = 2**128 - 1


def sampled(trace_id: int, rate: float) -> bool:
    """Whether a run of trace ``trace_id`` is judged at ``rate`` (in (0, 1]).

    >>> trace_id = 0x4BF92F3577B34DA6A3CE929D0E0E4736  # its hash falls at 0.436 of the range
    >>> sampled(trace_id, 0.5), sampled(trace_id, 0.4)
    (True, False)
    """
    if rate >= 1.0:
        return True
    digest = hashlib.sha256((trace_id & _ID_MASK).to_bytes(16, "big")).digest()
    return int.from_bytes(digest[:8], "big") < rate * _SCALE
