"""Keep freed memory for reuse: a frame allocates tens of megabytes of fresh arrays (setup
triangles, framebuffers, raster events), and glibc hands blocks that large out as new mappings
and unmaps them on free, so every frame pays a page fault per 4 KiB again (about a tenth of a
1080p frame on spheres). Raising the mmap and trim thresholds keeps such blocks in the heap,
already faulted in, for the next frame. glibc only (mallopt); elsewhere nothing changes."""
from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3     # glibc malloc.h
MMAP_THRESHOLD = 1 << 30      # bytes: allocations below this come from the heap
TRIM_THRESHOLD = 1 << 31      # bytes of free heap top kept rather than returned to the OS


def keep_freed_memory() -> bool:
    """Returns whether the allocator took the settings."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                    and libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    except (OSError, AttributeError):
        return False
