"""The registry of architectures: a preset names one, and pipelines.api runs its render
function. Presets live in pipelines.presets, scenes in scenes.library."""
from __future__ import annotations

from pipelines.arch import dsbr

from pipelines.arch import imr

from pipelines.arch import tbdr

ARCHITECTURES = {
    "imr": imr.render,
    "tbdr": tbdr.render,
    "dsbr": dsbr.render,
}
