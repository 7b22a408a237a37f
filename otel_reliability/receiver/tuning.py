"""How the receiver's processes tune the interpreter for holding many small records, and
the C allocator for freeing big ones."""

from __future__ import annotations

import ctypes
import ctypes.util
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


# glibc's mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
MALLOC_ARENAS = 2
MMAP_THRESHOLD = 128 * 1024


def tune_malloc() -> None:
    """Let freed memory go back to the system (glibc; elsewhere nothing changes).

    Every thread that decodes a request gets a malloc arena of its own by default (up to 8
    per core), and memory freed in one is not reused by another; and after the first big
    block is freed glibc raises its mmap threshold, so later big strings (200 KiB attribute
    values) come from the heap and stay mapped after their trace leaves. Measured on a 64 MiB
    budget, the two took the peak RSS from 181 to 159 MiB with one client and from 240 to
    193 MiB with four. Two arenas and a fixed 128 KiB threshold keep what the buffer lets go
    returnable; set before the servers start their threads.
    """
    name = ctypes.util.find_library("c")
    if name is None:
        return
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return
    mallopt(_M_ARENA_MAX, MALLOC_ARENAS)
    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
