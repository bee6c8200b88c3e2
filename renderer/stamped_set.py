"""A set of int64 keys for numba kernels that empties in constant time: open addressing with
linear probing, every slot stamped with the generation that wrote it, so that moving to a new
generation empties the set without clearing it. Kernels use it for "already seen in the current
group": the lines a fetch wave has asked for, the vertices a DSBR batch holds."""
from __future__ import annotations

import numpy as np

from renderer.inlined import inlined

GOLDEN = np.int64(-7046029254386353131)   # 2^64 / golden ratio, as the int64 it wraps to


@inlined
def add_new(keys, gens, g, gen, key):
    """Adds `key` to set g (row g of keys and gens, int64, a power-of-two width; slots of other
    generations are free) for generation `gen`. Returns whether it was not there yet. The home
    slot is Fibonacci hashing: high bits of the key times GOLDEN (wrapping)."""
    mask = keys.shape[1] - 1
    h = (key * GOLDEN) >> 40 & mask
    while gens[g, h] == gen:
        if keys[g, h] == key:
            return False
        h = (h + 1) & mask
    gens[g, h] = gen
    keys[g, h] = key
    return True
