"""Scenes loaded from the asset files, kept on disk between processes.

Decoding a model's file is most of what a built-in scene costs to make, and every command paid it
in every process: sponza's glTF 0.64 s (0.6 of it the glTF schema's validator, made once a
process), the bunny's OBJ checks 0.63 s, pul1duel 0.36 s; 2.1 s for the eighteen scenes of the
report (2026-12-06). A pickle of the loaded scene reads back in a few milliseconds (sponza 3.8 MB,
pul1duel 17.9 MB). Entries live under $TILESIM_CACHE_DIR/scenes (default ~/.cache/tilesim/scenes;
TILESIM_CACHE_DIR=off keeps none), one per asset file, named by the file and a digest of what
the loaded scene is made from: the file's size and modification time and the sources of this
package (the loaders and the classes pickled). A changed file or loader is a new entry, which
replaces the old one. A user's own files (tilesim render model.glb) are loaded each time and
never kept.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Callable

from renderer.jit_cache import cache_home


def cache_dir() -> Path | None:
    """$TILESIM_CACHE_DIR/scenes (default ~/.cache/tilesim/scenes); None where it is `off`."""
    root = os.environ.get("TILESIM_CACHE_DIR") or cache_home()
    return None if root == "off" else Path(root) / "scenes"


@lru_cache(maxsize=1)
def _sources_digest() -> bytes:
    """A digest of this package's sources (about 5 ms)."""
    h = hashlib.sha256()
    for p in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.digest()


def cached_scene(path: Path, load: Callable):
    """load(path), from the disk cache where it holds this file as it is now, else loaded and
    stored there (a write that fails leaves the scene this process's alone)."""
    root = cache_dir()
    if root is None:
        return load(path)
    st = path.stat()
    h = hashlib.sha256(_sources_digest())
    h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    entry = root / f"{path.name}.{h.hexdigest()[:16]}.pickle"
    try:
        with open(entry, "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
        pass
    scene = load(path)
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=root, prefix=".scene.")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(scene, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)           # atomic: another process may be writing it too
        for old in root.glob(f"{path.name}.*.pickle"):
            if old != entry:
                old.unlink(missing_ok=True)
    except OSError:
        pass
    return scene
