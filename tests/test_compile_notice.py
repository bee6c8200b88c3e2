"""The first run's compile is announced (pipelines.commands.compile_notice): a kernel compiled
inside the notice prints the start and the count; one loaded or already compiled prints nothing."""
from __future__ import annotations

import io

from numba import njit

from pipelines.commands.compile_notice import compiling_notice


def test_a_compile_is_announced_and_counted():
    @njit(cache=False)
    def twice(x):
        return 2 * x

    out = io.StringIO()
    with compiling_notice(out):
        assert twice(21) == 42            # compiled here, on first call
    text = out.getvalue()
    assert "compiling numba kernels" in text
    assert "compiled 1 kernel in" in text
    out = io.StringIO()
    with compiling_notice(out):
        assert twice(4) == 8              # already compiled: no event
    assert out.getvalue() == ""


def test_the_first_encode_of_a_format_is_announced(tmp_path, monkeypatch):
    """A texture level encoded (a disk-cache miss) is said once per format, with the count at
    the end; read back from the disk cache, nothing is said."""
    import numpy as np

    from renderer.texture_formats import encoded_level
    monkeypatch.setenv("TILESIM_TEXTURE_CACHE", str(tmp_path))
    img = np.random.default_rng(1).integers(0, 256, (16, 16, 4), dtype=np.uint8)
    out = io.StringIO()
    with compiling_notice(out):
        encoded_level(img, "bc1")
        encoded_level(img[:8, :8], "bc1")
    text = out.getvalue()
    assert text.count("encoding textures as bc1") == 1 and str(tmp_path) in text
    assert "encoded 2 texture levels in" in text
    out = io.StringIO()
    with compiling_notice(out):
        encoded_level(img, "bc1")
    assert out.getvalue() == ""


def test_compiles_ahead_in_workers_are_announced_and_counted():
    """precompile's workers compile where this process sees no event: the notice says how many
    entry points on how many processes, and counts the kernels the workers report."""
    out = io.StringIO()
    with compiling_notice(out) as notice:
        notice.ahead(30, 2)
        notice.ahead_done(1, 2, "renderer.raster_kernels", 40)
        notice.ahead_done(2, 2, "renderer.geometry_kernels", 12)
    text = out.getvalue()
    assert "compiling numba kernels for this version, 30 entry points on 2 processes" in text
    assert "compiled 52 kernels in" in text
