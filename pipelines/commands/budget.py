"""The memory a command may use, and what a frame will take of it, known before anything large
is allocated. Consumes --max-memory text, a resolution and a scene's frame graph; produces byte
counts, or a UserError (one line, exit 2) when a frame or a model's textures would pass the budget.

Nothing else stops a 16384 x 16384 x 4-sample frame (tens of GB) or a model whose small PNGs
decode to gigabytes from running the machine out of memory, so the CLI asks here first:

    budget = memory_budget(args.max_memory)          # default: half of what the machine has free
    check_frame(scene, 8192, 8192, 4, (), budget)    # UserError: needs about 11 GiB, budget 9 GiB
"""
from __future__ import annotations

import os
import re

from pipelines.commands.output import UserError

DEFAULT_SHARE = 0.5      # of available memory: room for the OS, the caches and other programs
# Bytes a frame's arrays take per byte of its surfaces (colour, depth, G-buffer, post chain),
# measured as peak RSS above the idle process on quad/deferred/postchain at 2048^2 and 4096^2
# for imr, tbdr and dsbr presets: 1.6-2.2 x at 1 sample; 4.2 x at 4 (sample masks, resolve
# copies, per-sample shading inputs). Rounded up.
SURFACE_FACTOR = {1: 2.5, 4: 4.5}
PIXEL_BYTES = 16         # per pixel beyond the surfaces: the output image, its PNG encoding
RAY_BYTES = 96           # per pixel per ray pass: origin, direction, hit, distance, result
                         # (measured: about 80 B with primary, shadow and AO at 2048^2)


def parse_size(text: str) -> int:
    """'8G', '512M', '1.5GiB', '2048' (bytes) -> bytes; powers of 1024, as free(1) and ulimit."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text.lower())
    if not m or float(m.group(1)) <= 0:
        raise UserError(f"--max-memory {text!r}: expected a size such as 8G, 512M or 1.5GiB")
    return int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " "))


def available_memory() -> int | None:
    """Bytes the machine can give without swapping: MemAvailable, or less under a cgroup limit."""
    found = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:                                    # cgroup v2 (containers, systemd slices)
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as f:
                found.append(int(limit) - int(f.read().strip()))
    except (OSError, ValueError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (OSError, ValueError, AttributeError):
            return None
    return max(min(found), 0)


def memory_budget(text: str | None) -> int | None:
    """--max-memory in bytes, else DEFAULT_SHARE of available memory (None: unknown, no limit)."""
    if text:
        return parse_size(text)
    free = available_memory()
    return None if free is None else int(free * DEFAULT_SHARE)


def frame_bytes(scene, width: int, height: int, samples: int, rays=()) -> int:
    """About the peak memory rendering `scene` at this size takes (module docstring's factors)."""
    from renderer.formats import FORMATS
    from scenes.model import ComputePass, RayPass, RenderPass

    surfaces, n_rays = {}, 0
    for p in scene.graph(samples, tuple(rays)).passes:
        if isinstance(p, RenderPass):
            for a in (p.color, p.depth):
                if a is not None:
                    surfaces[a.name] = FORMATS[a.format].bytes_per_sample * p.samples
        elif isinstance(p, ComputePass):
            for name, fmt in p.writes.items():
                surfaces[name] = FORMATS[fmt].bytes_per_sample
        elif isinstance(p, RayPass):
            n_rays += 1
    per_pixel = SURFACE_FACTOR[samples] * sum(surfaces.values()) + PIXEL_BYTES + RAY_BYTES * n_rays
    return int(width * height * per_pixel)


def least_frame_bytes(width: int, height: int, samples: int) -> int:
    """The least any frame takes (colour and depth only): checked before a scene is even loaded."""
    return int(width * height * (SURFACE_FACTOR[samples] * 8 * samples + PIXEL_BYTES))


def check(need: int, budget: int | None, what: str) -> None:
    if budget is not None and need > budget:
        raise UserError(f"{what} needs about {gib(need)} of memory, over the budget of {gib(budget)} "
                        "(--max-memory; default half the available memory)")


def gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**27 else f"{n / 2**20:.0f} MiB"
