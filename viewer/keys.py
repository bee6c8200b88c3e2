"""Key -> action table and the on-screen help built from it. Keys are named as moderngl-window's
`Keys` attributes ("H", "F1", "NUMBER_1", "EQUAL"), so the table does not depend on the window
library; `key_name` turns a window's key code back into that name.

    action = KEYMAP.get(key_name(wnd.keys, key))     # e.g. "mode:dram"
"""
from __future__ import annotations

from .modes import MODES

# Pressed once: name -> action.
KEYMAP = {
    "H": "help", "F1": "help",
    **{f"NUMBER_{i + 1}": f"mode:{m}" for i, m in enumerate(MODES)},
    "TAB": "mode:next",
    "R": "reset",
    "N": "scene:next", "P": "scene:prev",
    "M": "msaa", "G": "frontend",
    "EQUAL": "scale:up", "MINUS": "scale:down",
    "S": "screenshot", "F12": "screenshot",
    "LEFT": "orbit:left", "RIGHT": "orbit:right", "UP": "orbit:up", "DOWN": "orbit:down",
}

# Held down: name -> (forward, right, upward) fly direction, summed over held keys.
FLY_KEYS = {
    "W": (1, 0, 0), "S": (-1, 0, 0), "A": (0, -1, 0), "D": (0, 1, 0),
    "E": (0, 0, 1), "Q": (0, 0, -1),
}
# S both saves a screenshot (tap) and flies back (hold): held under app.S_HOLD_S it does not fly,
# and released before then it saves the screenshot (app.Viewer.on_key_event).

HELP = (
    ("H / F1", "show or hide this help"),
    ("1 .. 5", ", ".join(MODES)),
    ("Tab", "next mode, ray passes' images and steps too (--rays)"),
    ("mouse over a panel", "the value under it, every panel, in the footer"),
    ("left drag", "orbit about the target"),
    ("right drag, shift+drag", "pan"),
    ("wheel", "zoom"),
    ("W A S D, Q E", "fly (hold)"),
    ("arrows", "orbit in steps"),
    ("R", "reset to the scene's camera"),
    ("N / P", "next / previous scene"),
    ("M", "MSAA 1x / 4x"),
    ("G", "geometry front end: each preset's, legacy, ngg, mesh"),
    ("+ / -", "resolution scale"),
    ("S (tap), F12", "save screenshot PNG + counters JSON"),
    ("Esc", "quit"),
)

SCALES = (0.25, 0.5, 0.75, 1.0)     # resolution scale steps of + / -
FRONTENDS = (None, "legacy", "ngg", "mesh")   # G steps through these (renderer.frontend.FRONTENDS,
                                              # not imported: that pulls numba in)
ORBIT_STEP_PX = 30                  # an arrow key orbits as far as a 30 px drag


def key_name(keys_cls, key) -> str | None:
    """The attribute name under which `keys_cls` (a moderngl-window Keys class) holds `key`."""
    table = _reverse(keys_cls)
    return table.get(key)


_REVERSE: dict = {}


def _reverse(keys_cls) -> dict:
    table = _REVERSE.get(keys_cls)
    if table is None:
        table = {}
        for name in dir(keys_cls):
            if name.isupper() and not name.startswith("ACTION_"):
                value = getattr(keys_cls, name)
                if value != "undefined" and value not in table:
                    table[value] = name
        _REVERSE[keys_cls] = table
    return table


class NamedKeys:
    """Keys for windows that have none (moderngl-window's headless window): each key's code is
    its own name, so tests send `on_key_event("H", NamedKeys.ACTION_PRESS, mods)`."""
    ACTION_PRESS = "ACTION_PRESS"
    ACTION_RELEASE = "ACTION_RELEASE"


for _n in {*KEYMAP, *FLY_KEYS, "ESCAPE", "LEFT_SHIFT", "RIGHT_SHIFT"}:
    setattr(NamedKeys, _n, _n)


def next_scale(scale: float, step: int) -> float:
    """The next resolution scale up (step 1) or down (-1) in SCALES, clamped at the ends."""
    i = min(range(len(SCALES)), key=lambda k: abs(SCALES[k] - scale))
    return SCALES[max(0, min(len(SCALES) - 1, i + step))]
