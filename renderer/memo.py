"""Results computed from meshes, remembered while the same meshes are drawn again: the viewer
redraws one scene every frame, a report draws one frame through every preset. Keys hold the
meshes' id()s; each entry keeps its meshes alive, so an id cannot be reused while it is cached.
Thread-safe: the viewer renders its panels on several threads at once, and the first of them to
ask for a value computes it while the others wait for it (one setup for every panel)."""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable

import numpy as np


class MeshMemo:
    """A small least-recently-used table. Values are shared: callers must not write to them."""

    def __init__(self, entries: int):
        self.entries = entries
        self._table: OrderedDict = OrderedDict()
        self._lock = threading.RLock()     # held while computing: compute() may ask again

    def get(self, key, meshes: Iterable, compute: Callable):
        """The value for key, computed by compute() the first time (meshes: what key's ids name)."""
        with self._lock:
            if key in self._table:
                self._table.move_to_end(key)
                return self._table[key][1]
            value = compute()
            self._table[key] = (tuple(meshes), value)
            if len(self._table) > self.entries:
                self._table.popitem(last=False)
            return value

    def clear(self) -> None:
        with self._lock:
            self._table.clear()


def mesh_ids(draws) -> tuple:
    return tuple(id(d.mesh) for d in draws)


def draws_key(draws) -> tuple:
    """What of the draws decides their pixels: each one's mesh and material (by id: keep
    draws_kept(draws) alive with the entry), transform and state."""
    return tuple((id(d.mesh), id(d.material), d.world_from_object.tobytes(), d.state)
                 for d in draws)


def draws_kept(draws) -> list:
    """The objects draws_key names by id, for MeshMemo.get to keep alive with the entry."""
    return [x for d in draws for x in (d.mesh, d.material)]


def digest(*arrays: np.ndarray) -> tuple:
    """A key for arrays by value: their shapes and dtypes, and a hash of their bytes (blake2b,
    about 1 GB/s: 4 ms for a 1280x720 float32 image); a mask's bytes as bits, an eighth as
    many to hash (its shape says how many)."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        h.update(np.packbits(a) if a.dtype == np.bool_ else np.ascontiguousarray(a))
    return tuple((a.shape, a.dtype.str) for a in arrays) + (h.digest(),)
