"""Host memory for the kernels: freed blocks kept for reuse, and tables aligned to cache lines.

Keep freed memory for reuse: a frame allocates tens of megabytes of fresh arrays (setup
triangles, framebuffers, raster events), and glibc hands blocks that large out as new mappings
and unmaps them on free, so every frame pays a page fault per 4 KiB again (about a tenth of a
1080p frame on spheres). Raising the mmap and trim thresholds keeps such blocks in the heap,
already faulted in, for the next frame. glibc only (mallopt); elsewhere nothing changes."""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

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


LINE = 64        # bytes: a cache line of x86-64 hosts (and most AArch64 ones; Apple's are 128)


def aligned_empty(shape, dtype, align: int = LINE) -> np.ndarray:
    """np.empty whose first byte starts a cache line. numpy (and malloc under it) aligns to 16
    bytes, so a table of 192-byte rows, three lines each when aligned, touched four lines a
    row by luck of the allocation, and half its 32-byte loads crossed a line (the bvh8 walk's
    child boxes: sponza's primary rays 2-3% slower at an offset of 16 or 48 bytes)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    buf = np.empty(n + align, np.uint8)
    start = (-buf.ctypes.data) % align
    return buf[start:start + n].view(dtype).reshape(shape)


def aligned_copy(a: np.ndarray, align: int = LINE) -> np.ndarray:
    """A C-contiguous copy of a whose first byte starts a cache line (aligned_empty)."""
    out = aligned_empty(a.shape, a.dtype, align)
    out[...] = a
    return out


def aligned_concatenate(parts, align: int = LINE) -> np.ndarray:
    """np.concatenate of `parts` (along the first axis) into memory that starts a cache line
    (aligned_empty), written once."""
    first = parts[0]
    out = aligned_empty((sum(len(p) for p in parts),) + first.shape[1:], first.dtype, align)
    return np.concatenate(parts, out=out)
