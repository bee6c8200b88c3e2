"""Image diff: the metrics and diff image that `tilesim diff` prints and the golden tests use.

The perceptual figure is NVIDIA's FLIP (Andersson et al. 2020, the `flip-evaluator` package):
the mean of a per-pixel error in [0, 1] that models what a viewer at 67 pixels per degree sees
when flipping between the two images. It costs about a second per megapixel, so it is computed
only when asked for (`ImageDiff.flip`), never on the golden tests' passing path.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    """Two images match when at most `max_fraction` of pixels differ by more than `max_abs`
    in any channel (8-bit units). Exact: Tolerance(0, 0.0)."""
    max_abs: int = 0
    max_fraction: float = 0.0


@dataclass(frozen=True, eq=False)
class ImageDiff:
    a: np.ndarray
    b: np.ndarray
    tolerance: Tolerance
    max_abs: int            # largest channel difference
    mean_abs: float         # mean channel difference
    n_pixels_over: int      # pixels with a channel difference above the tolerance's max_abs
    fraction_over: float
    psnr_db: float          # over RGB; inf when identical
    diff: np.ndarray        # uint8 (h, w, 4): black = equal, brighter = larger difference

    @property
    def within(self) -> bool:
        return self.fraction_over <= self.tolerance.max_fraction

    @cached_property
    def flip(self) -> float:
        """Mean FLIP error of the RGB channels (0 = indistinguishable)."""
        if self.max_abs == 0:
            return 0.0
        import flip_evaluator
        ref, test = (np.ascontiguousarray(x[..., :3], np.float32) / 255.0 for x in (self.a, self.b))
        _, mean, _ = flip_evaluator.evaluate(ref, test, "LDR", applyMagma=False)
        return float(mean)

    def summary(self, perceptual: bool = False) -> str:
        n = self.a.shape[0] * self.a.shape[1]
        flip = f", FLIP {self.flip:.5f}" if perceptual else ""
        return (f"max |d| {self.max_abs}, mean |d| {self.mean_abs:.4f}, PSNR {self.psnr_db:.2f} dB{flip}; "
                f"{self.n_pixels_over:,} of {n:,} px ({100 * self.fraction_over:.4f}%) differ by more "
                f"than {self.tolerance.max_abs}")

    def as_json(self, perceptual: bool = False) -> dict:
        out = {"max_abs": self.max_abs, "mean_abs": self.mean_abs, "psnr_db": self.psnr_db,
               "pixels_over": self.n_pixels_over, "fraction_over": self.fraction_over,
               "tolerance": {"max_abs": self.tolerance.max_abs,
                             "max_fraction": self.tolerance.max_fraction},
               "within": self.within}
        if perceptual:
            out["flip"] = self.flip
        return out


def compare(a: np.ndarray, b: np.ndarray, tol: Tolerance = Tolerance()) -> ImageDiff:
    """Compare two uint8 RGBA images of the same size."""
    if a.shape != b.shape:
        raise ValueError(f"image sizes differ: {a.shape[1]}x{a.shape[0]} vs {b.shape[1]}x{b.shape[0]}")
    d = np.abs(a.astype(np.int16) - b.astype(np.int16))
    per_px = d.max(axis=2)
    over = per_px > tol.max_abs
    mse = float((d[..., :3].astype(np.float64) ** 2).mean())
    psnr = float("inf") if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)
    vis = np.zeros(a.shape[:2] + (4,), np.uint8)
    vis[..., 0] = np.minimum(per_px.astype(np.int32) * 16, 255)     # amplified difference in red
    vis[..., 1] = np.where(over, 255, 0)                               # over tolerance in green
    vis[..., 3] = 255
    return ImageDiff(a, b, tol, int(d.max()), float(d.mean()), int(over.sum()), float(over.mean()),
                     psnr, vis)
