"""The registry of architectures: a preset names one, and pipelines.api runs its render
function. Presets live in pipelines.presets, scenes in scenes.library."""
from __future__ import annotations

from . import dsbr, imr, tbdr

ARCHITECTURES = {
    "imr": imr.render,
    "tbdr": tbdr.render,
    "dsbr": dsbr.render,
}
