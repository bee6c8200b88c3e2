"""`@inlined`: the decorator of a kernel's helpers, the numba functions that only other kernels call
and that LLVM inlines into them (raster_sections says why LLVM's inliner rather than numba's).

numba compiles every function it can call from Python with two wrappers, a CPython one (unbox the
arguments, box the result) and a C one (for ctypes and first-class function values), each made,
optimised, turned into machine code and cached. A helper inlined into its callers needs neither:
compiled without them (no_cpython_wrapper, no_cfunc_wrapper) the raster module's cold compile
took 28.0-28.3 s instead of 31.1-31.3 (renderer.raster_kernels at one sample, one process,
empty cache, 2026-12-06), and a cold `render triangle` 30-31 s instead of 33-34.

Called from Python (a test holding a helper against its slow twin), such a helper has no machine
code to enter: numba would jump through a null wrapper and crash. Its dispatcher never offers its
compiled code to a Python call; the first call from Python compiles a twin with the wrappers (the
same source and options, in memory, not cached: a twin's cache entry would replace the helper's
under the same name) and every call from Python goes through it."""
from __future__ import annotations

from numba import njit
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

WRAPPERS_OFF = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


class InlinedDispatcher(CPUDispatcher):
    """A CPUDispatcher whose compiled overloads serve only kernels (the typing and linking of
    their calls read `overloads`); a call from Python goes to the twin (python_twin)."""

    def compile(self, sig):
        # Its cache made at the first compile, not at import, where numba makes and tests the
        # cache folder for each function (the CLI's imports 122-123 -> 113-114 ms): a warm start
        # compiles no helper, its kernels load from the cache with their helpers in
        with global_compiler_lock:
            if not self._caching:
                self._caching = True
                self.enable_caching()
            return super().compile(sig)

    def add_overload(self, cres):
        # Not in the C-level table of the dispatcher's Python calls: its entry point is null
        self.overloads[tuple(cres.signature.args)] = cres

    def python_twin(self):
        """The helper compiled with both wrappers, for calls from Python (made on the first)."""
        twin = self.__dict__.get("_twin")
        if twin is None:
            options = {k: v for k, v in self.targetoptions.items()
                       if k not in WRAPPERS_OFF and k not in ("nopython", "boundscheck")}
            twin = self.__dict__["_twin"] = njit(**options)(self.py_func)
        return twin

    def _compile_for_args(self, *args, **kws):
        # numba's C dispatcher asks this for a callable when no overload of its table matches
        # (for this dispatcher: every call from Python), then calls it with the arguments
        return self.python_twin()


def inlined(fn=None, *, error_model: str = "numpy"):
    """@inlined or @inlined(error_model="python"): a helper compiled once, cached, marked
    alwaysinline for LLVM (forceinline) and without the wrappers of a Python call."""
    def make(f):
        options = dict(nopython=True, boundscheck=None, forceinline=True, error_model=error_model,
                       **WRAPPERS_OFF)
        disp = InlinedDispatcher(py_func=f, locals={}, targetoptions=options)
        disp._caching = False                     # enabled at its first compile
        return disp
    return make if fn is None else make(fn)
