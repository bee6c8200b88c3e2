"""tilesim pipelines: a frame through a preset. scene -> frame graph -> frame.run -> passes
(arch/ for render passes, passes/ for compute and ray passes) -> memory verbs -> FrameResult ->
commands/ (CLI, report) and the viewer. presets/ names the GPUs.

    from pipelines import render
    result = render("bunny", "imr-baseline", 640, 480)
"""
from pipelines.api import render  # noqa: F401
from pipelines.result import Result  # noqa: F401
