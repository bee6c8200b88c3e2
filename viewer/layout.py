"""Window layout: where each panel's title, image and counter strip go, in window pixels with the
origin at the top-left (y down, as the renderer's images). Pure arithmetic, no GL.

    size = window_size(n_panels=3, width=640, height=360)     # (1920 + gaps, 360 + title, strips, footer)
    rects = panel_layouts(3, *size, aspect=640 / 360)
"""
from __future__ import annotations

from dataclasses import dataclass

TITLE_H = 24       # px: one line of 15 px text
STRIP_H = 60       # px: three lines of 13 px counters
FOOTER_H = 28      # px: mode, colour scale legend, render state
GAP = 4            # px between panels and around the edge
MAX_PANELS = 4


@dataclass(frozen=True)
class Rect:
    x: int
    y: int
    w: int
    h: int

    def contains(self, px: float, py: float) -> bool:
        return self.x <= px < self.x + self.w and self.y <= py < self.y + self.h


@dataclass(frozen=True)
class PanelLayout:
    title: Rect
    image: Rect        # letterboxed to the render's aspect inside the cell
    strip: Rect


def grid(n: int) -> tuple[int, int]:
    """(columns, rows): side by side up to three, two by two for four."""
    if not 1 <= n <= MAX_PANELS:
        raise ValueError(f"the viewer shows 1 to {MAX_PANELS} panels, got {n}")
    return (2, 2) if n == 4 else (n, 1)


def window_size(n: int, width: int, height: int) -> tuple[int, int]:
    """The window that shows n panels of width x height pixels each at 1:1."""
    cols, rows = grid(n)
    return (cols * width + (cols + 1) * GAP,
            rows * (TITLE_H + height + STRIP_H) + (rows + 1) * GAP + FOOTER_H)


def panel_layouts(n: int, win_w: int, win_h: int, aspect: float) -> list[PanelLayout]:
    cols, rows = grid(n)
    cell_w = max((win_w - (cols + 1) * GAP) // cols, 1)
    cell_h = max((win_h - FOOTER_H - (rows + 1) * GAP) // rows, 1)
    out = []
    for i in range(n):
        cx = GAP + (i % cols) * (cell_w + GAP)
        cy = GAP + (i // cols) * (cell_h + GAP)
        room_h = max(cell_h - TITLE_H - STRIP_H, 1)
        w = min(cell_w, round(room_h * aspect))
        h = min(room_h, round(w / aspect))
        w, h = max(w, 1), max(h, 1)
        image = Rect(cx + (cell_w - w) // 2, cy + TITLE_H + (room_h - h) // 2, w, h)
        out.append(PanelLayout(Rect(cx, cy, cell_w, TITLE_H), image,
                               Rect(cx, cy + TITLE_H + room_h, cell_w, STRIP_H)))
    return out


def footer(win_w: int, win_h: int) -> Rect:
    return Rect(0, win_h - FOOTER_H, win_w, FOOTER_H)


def panel_at(layouts: list[PanelLayout], x: float, y: float) -> int | None:
    for i, p in enumerate(layouts):
        if p.image.contains(x, y):
            return i
    return None


def scaled(width: int, height: int, scale: float) -> tuple[int, int]:
    """A render size `scale` times the panel's, never below 8 x 8 pixels."""
    return max(8, round(width * scale)), max(8, round(height * scale))
