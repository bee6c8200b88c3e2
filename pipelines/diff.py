"""Image diff: the metrics and diff image that `tilesim diff` prints and the golden tests use."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    """Two images match when at most `max_fraction` of pixels differ by more than `max_abs`
    in any channel (8-bit units). Exact: Tolerance(0, 0.0)."""
    max_abs: int = 0
    max_fraction: float = 0.0


@dataclass(frozen=True)
class ImageDiff:
    max_abs: int            # largest channel difference
    mean_abs: float         # mean channel difference
    n_pixels_over: int      # pixels with a channel difference above the tolerance's max_abs
    fraction_over: float
    psnr_db: float          # over RGB; inf when identical
    diff: np.ndarray        # uint8 (h, w, 4): black = equal, brighter = larger difference

    def within(self, tol: Tolerance) -> bool:
        return self.fraction_over <= tol.max_fraction

    def summary(self) -> str:
        return (f"max |d| {self.max_abs}, mean |d| {self.mean_abs:.4f}, {self.n_pixels_over} px "
                f"({100 * self.fraction_over:.4f}%) over tolerance, PSNR {self.psnr_db:.2f} dB")


def compare(a: np.ndarray, b: np.ndarray, tol: Tolerance = Tolerance()) -> ImageDiff:
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
    return ImageDiff(int(d.max()), float(d.mean()), int(over.sum()), float(over.mean()), psnr, vis)
