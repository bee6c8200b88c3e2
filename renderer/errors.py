"""The error of unusable input: a scene, mesh or set of triangles that cannot be rendered. The
message names the problem in one line (the CLI prints it and exits 2). scenes.model raises it
for bad files and values; the stages raise it for input that reaches them unusable."""


class SceneError(ValueError):
    """A scene or mesh that cannot be rendered; the message names the problem in one line."""
