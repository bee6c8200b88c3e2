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
under the same name) and every call from Python goes through it.

A helper, and a kernel that other kernels call (`@callee`), is compiled for the plain types of
its arguments, not their literal ones. numba types a constant argument as a literal (0 as
Literal[int](0)) and compiles the callee for it, and its type inference compiles a callee at
each pass over the caller: a counter that starts at 0 and is reassigned in a loop is
Literal[int](0) on the first pass and int64 at the end, and only the last compile is linked.
texture_walk compiled three times for its one call in the tile kernel (1.3 s), the memory
requests six and nine times for the imr replay's calls: 3.4 s of the 56 s a cold `render
triangle` compiles on two cores, whose wall time went from 30.8-31.4 s to 29.0-29.9 (taking
turns, 2026-12-06). Inlined, a constant argument folds into its callee in LLVM all the same.
A function that needs a literal (a tuple indexed by it) is still compiled for it: its plain
compile fails typing first."""
from __future__ import annotations

from numba import njit
from numba.core import errors, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher


class PlainArgsDispatcher(CPUDispatcher):
    """A CPUDispatcher that a kernel's call compiles for its arguments' plain types (the module
    docstring says why)."""

    def get_call_template(self, args, kws):
        plain = tuple(types.unliteral(a) for a in args)
        plain_kws = {k: types.unliteral(v) for k, v in kws.items()}
        if self._can_compile and (plain != tuple(args) or plain_kws != kws):
            try:
                return super().get_call_template(plain, plain_kws)
            except errors.TypingError:
                pass                      # it needs a literal: compiled for the literal types
        return super().get_call_template(args, kws)


WRAPPERS_OFF = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


class InlinedDispatcher(PlainArgsDispatcher):
    """A CPUDispatcher whose compiled overloads serve only kernels (the typing and linking of
    their calls read `overloads`); a call from Python goes to the twin (python_twin)."""

    def ready_cache(self):
        """Its cache made at the first compile, not at import, where numba makes and tests the
        cache folder for each function (the CLI's imports 122-123 -> 113-114 ms): a warm start
        compiles no helper, its kernels load from the cache with their helpers in."""
        if not self._caching:
            self._caching = True
            self.enable_caching()

    def compile(self, sig):
        with global_compiler_lock:
            self.ready_cache()
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


def callee(fn=None, *, error_model: str = "numpy"):
    """@callee: njit(cache=True, nogil=True) for a kernel that other kernels call (and Python
    may), compiled for its arguments' plain types (PlainArgsDispatcher)."""
    def make(f):
        disp = PlainArgsDispatcher(py_func=f, locals={}, targetoptions=dict(
            nopython=True, boundscheck=None, nogil=True, error_model=error_model))
        disp.enable_caching()
        return disp
    return make if fn is None else make(fn)
