"""tilesim pipelines: one module per architecture, the presets, the registry, the CLI.

    from pipelines import render
    result = render("bunny", "imr-baseline", 640, 480)
"""
from pipelines.api import render  # noqa: F401
from pipelines.result import Result  # noqa: F401
