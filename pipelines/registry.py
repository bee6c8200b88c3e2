"""The one registry of named things the CLI, the viewer and the tests choose from:
architectures (a render function each), presets and scenes."""
from __future__ import annotations

from . import dsbr, imr, tbdr
from .presets import PRESETS, get_preset  # noqa: F401  (re-exported)

ARCHITECTURES = {
    "imr": imr.render,
    "tbdr": tbdr.render,
    "dsbr": dsbr.render,
}
