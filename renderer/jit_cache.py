"""Where numba keeps the compiled kernels: a directory named by a hash of tilesim's sources.

numba checks a cached kernel against the timestamp of its own file only. A kernel that inlines a
helper or a constant from another module (memory_kernels' field numbers, say) keeps running the
machine code built from that module's old text after it changes, indexing arrays by a layout
they no longer have: wrong counters at best, a heap corrupted at worst (seen: glibc's
"munmap_chunk(): invalid pointer" at exit after a stash changed memory_kernels under a cached
imr_kernels). Keying the whole cache by every source file a kernel can reach makes any edit of
them start a fresh one. The frame runner, the presets and the commands (pipelines' top level,
pipelines/presets, pipelines/commands) hold no kernel and no kernel imports them, so editing
them keeps the cache warm.
It must be set before the first kernel module is imported: numba picks a function's cache
directory when the function is decorated. NUMBA_CACHE_DIR, when set, is the parent directory."""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numba

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("renderer", "pipelines/arch", "pipelines/passes", "scenes")   # kernels, their constants
KEEP = 3        # cache directories kept (the newest), so that switching branches stays warm


def source_key(root: Path = ROOT) -> str:
    h = hashlib.sha1()
    for package in PACKAGES:
        for f in sorted((root / package).rglob("*.py")):
            h.update(f.relative_to(root).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def use_source_keyed_cache() -> Path:
    """Point numba's cache at <base>/numba-<source key>; drop all but the KEEP newest."""
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tilesim"
    base = Path(os.environ.get("NUMBA_CACHE_DIR") or home)
    here = base / f"numba-{source_key()}"
    numba.config.CACHE_DIR = str(here)
    try:
        here.mkdir(parents=True, exist_ok=True)
        here.touch()                          # the newest, whether new or not
        old = sorted(base.glob("numba-*"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP:]
        for d in old:
            shutil.rmtree(d, ignore_errors=True)
    except OSError:
        pass        # an unwritable cache: numba falls back to its own locations
    return here
