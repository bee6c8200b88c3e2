"""tilesim pipelines: one module per architecture, the presets, the registry, the CLI.

    from pipelines import render
    result = render("bunny", "imr-baseline", 640, 480)
"""
from .api import render  # noqa: F401
from .result import Result  # noqa: F401
