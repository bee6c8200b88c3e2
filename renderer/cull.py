"""Face culling, as a draw's state names it (scenes.model.DrawState.cull) and the stages read it:
the front end and rasterizer (renderer.geometry_kernels' CULL_* are these values), the BVH's
per-triangle flags."""
from enum import IntEnum


class CullMode(IntEnum):
    NONE = 0
    BACK = 1     # front faces are counter-clockwise in NDC (OpenGL default)
    FRONT = 2
