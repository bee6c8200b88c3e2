"""Division by a size that is a power of two in practice, as a shift: 64-bit integer division is
among the slowest instructions a kernel runs (binning's tile ranges, the texture footprint's
blocks). The exponent is found once, outside the kernels, and -1 says the size is not one.

    shift = exponent(tile)                  # 6 for 64, -1 for 48
    q = over(x, tile, shift)                # in a kernel: x // tile
    is_pow2(w)                              # in a kernel: whether w is a power of two
"""
from __future__ import annotations

from .inlined import inlined


def exponent(n: int) -> int:
    """log2 of a power of two, -1 for any other n."""
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else -1


@inlined
def is_pow2(n):
    """Whether n is a power of two (1, 2, 4, ...), in a kernel."""
    return n > 0 and n & (n - 1) == 0


@inlined
def over(x, b, shift):
    """x // b, by a shift where b == 1 << shift (an arithmetic shift floors as // does)."""
    return x >> shift if shift >= 0 else x // b
