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
