"""How the receiver's processes tune the interpreter for holding many small records."""

from __future__ import annotations

import gc

GC_THRESHOLD_YOUNG = 50_000  # allocations between young-generation collections (CPython's default: 700)


def tune_garbage_collection() -> None:
    # The buffer holds hundreds of thousands of small records that never form cycles;
    # at CPython's default thresholds the collector re-walks them so often that it costs
    # more than judging them (benchmarks/receiver_throughput.py). The process is ours:
    # freeze what startup built and collect the young generation far less often.
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD_YOUNG, 20, 20)
