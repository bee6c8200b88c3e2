"""Where numba keeps the compiled kernels: a directory named by a hash of tilesim's sources.

numba checks a cached kernel against the timestamp of its own file only. A kernel that inlines a
helper or a constant from another module (memory_kernels' field numbers, say) keeps running the
machine code built from that module's old text after it changes, indexing arrays by a layout
they no longer have: wrong counters at best, a heap corrupted at worst (seen: glibc's
"munmap_chunk(): invalid pointer" at exit after a stash changed memory_kernels under a cached
imr_kernels). Keying the whole cache by every source file a kernel can reach (kernel_sources:
the modules that import numba, and the project's modules they import, transitively) makes any
edit of them start a fresh one. Everything else (the frame runner, the architectures' Python
drivers, scenes/, the presets, the commands, renderer's loaders and tables such as
texture_formats) is no kernel's source, so editing it keeps the cache warm.
It must be set before the first kernel module is imported: numba picks a function's cache
directory when the function is decorated. NUMBA_CACHE_DIR, when set, is the parent directory."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import numba

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("renderer", "pipelines/arch", "pipelines/passes")   # where kernels live
# The project's top-level packages (pyproject's packages.find): the only imports followed. Installed
# with `pip install .`, ROOT is site-packages, where `import numpy` names a file too: following it
# read 1559 files (numba, numpy, IPython...) at every start, 1.5 s of a warm render's 1.7.
OWN = ("renderer", "pipelines", "scenes", "assets", "viewer")
KEEP = 3        # cache directories kept (the newest), so that switching branches stays warm
# LLVM's optimisation level for the kernels (NUMBA_OPT; numba's default is 3), unless the
# environment names one. At 2 the tile kernel compiles in 22.3 s rather than 28.8 (one process,
# an empty cache, one sample; its late callees 6.3 s rather than 8.1) and its machine code is
# 12% smaller (level 3 adds passes such as LLVM's non-trivial loop unswitching, which copies a
# loop for a flag invariant in it, argument promotion and call-site splitting). The frames and
# walks ran as fast within the noise of processes taking turns on 2026-12-07 (docs/speed.md,
# "The first run"); the kernels' own vector code is written by hand (vector_ir).
OPT_LEVEL = 2


def _is_kernel_module(text: str) -> bool:
    """Whether a module defines kernels: numba's decorators, or renderer.inlined's."""
    return "from numba" in text or "import numba" in text or "import inlined" in text


_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w.]+)", re.M)
_DOCSTRING = re.compile(r'"""[\s\S]*?"""')


def _local_imports(path: Path, text: str, root: Path) -> list[Path]:
    """The project's own modules `path` imports (absolute and relative), as files. (A regular
    expression, not ast: the key is made at every start, and parsing 50 files took 0.4 s.)"""
    package = path.relative_to(root).parent.parts
    text = _DOCSTRING.sub("", text)                             # examples in docstrings
    names = [m.split(".") for m in _IMPORT.findall(text)]
    for dots, module, what in _FROM.findall(text):
        base = list(package[:len(package) - len(dots) + 1]) if dots else []
        mod = base + (module.split(".") if module else [])
        names.append(mod)
        for name in what.strip("()").split(","):                # `from . import x`: module x
            name = name.split(" as ")[0].strip()
            if name.isidentifier():
                names.append(mod + [name])
    found = []
    for parts in names:
        if not parts or parts[0] not in OWN:
            continue
        for f in (root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")):
            if f.is_file():
                found.append(f)
    return found


def kernel_sources(root: Path = ROOT) -> list[Path]:
    """Every module with a numba kernel under PACKAGES, and every project module they import,
    transitively (the constants and helpers their machine code may have taken in)."""
    texts = {f: f.read_text() for package in PACKAGES for f in sorted((root / package).rglob("*.py"))}
    todo = [f for f, text in texts.items() if _is_kernel_module(text)]
    seen: set[Path] = set()
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo += _local_imports(f, texts[f] if f in texts else f.read_text(), root)
    return sorted(seen)


def source_key(root: Path = ROOT) -> str:
    return _key_of(kernel_sources(root), root)


def _key_of(files: list[Path], root: Path) -> str:
    h = hashlib.sha1()
    for f in files:
        h.update(f.relative_to(root).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _stamps(files) -> list[list]:
    """Each file's path, size, modification time and inode: what says it is unchanged (numba
    trusts a kernel's own file on its size and time; the inode adds a file replaced whole)."""
    out = []
    for f in files:
        st = f.stat()
        out.append([str(f), st.st_size, st.st_mtime_ns, st.st_ino])
    return out


def remembered_source_key(base: Path, root: Path = ROOT) -> str:
    """source_key(root), remembered in `base` with the stamps of the files it read: while no file
    under PACKAGES and no kernel source elsewhere has changed, none is read again (reading and
    hashing them took 30 ms of a warm start's 1 s)."""
    note = base / f"source-key-{hashlib.sha1(str(root).encode()).hexdigest()[:8]}.json"
    packaged = sorted(f for package in PACKAGES for f in (root / package).rglob("*.py"))
    try:
        saved = json.loads(note.read_text())
        files = [Path(s[0]) for s in saved["stamps"]]
        if saved["packaged"] == [str(f) for f in packaged] and saved["stamps"] == _stamps(files):
            return saved["key"]
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        pass                                   # none yet, unreadable, or a file gone: read them
    sources = kernel_sources(root)
    key = _key_of(sources, root)
    try:
        stamps = _stamps(sorted(set(sources) | set(packaged)))
        # Read again after the stamps: a file written while it was read is not remembered as
        # the key's (its stamp, taken before, then differs from the file's next time)
        if _key_of(sources, root) == key:
            tmp = note.with_name(f"{note.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"key": key, "packaged": [str(f) for f in packaged],
                                       "stamps": stamps}))
            os.replace(tmp, note)
    except OSError:
        pass
    return key


def cache_home() -> Path:
    """tilesim's folder of the user's caches: $XDG_CACHE_HOME/tilesim, else ~/.cache/tilesim (the
    kernels', the encoded textures' and the model files' unless their own variables say)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tilesim"


def use_opt_level() -> None:
    """Compile at OPT_LEVEL where NUMBA_OPT does not say otherwise, through numba's own
    configuration: the variable set in the environment (the precompile's workers inherit it) and
    numba's configuration read again now, before use_source_keyed_cache sets the cache folder.
    numba reads its environment again at each compile, and only where it changed since it last
    read it: left to that first compile, the new variable would have it read every variable
    again there and drop the cache folder set since, so that kernels imported later cached
    beside their sources. (A bad value keeps numba's warning and its default.)"""
    os.environ.setdefault("NUMBA_OPT", str(OPT_LEVEL))
    numba.core.config.reload_config()


def opt_name() -> str:
    """The optimisation level as NUMBA_OPT names it (0-3 or "max")."""
    return str(getattr(numba.config.OPT, "_raw_value", numba.config.OPT))


def use_source_keyed_cache() -> Path:
    """Point numba's cache at <base>/numba-<source key>-o<optimisation level> (numba's cache
    index does not say at which level a kernel was compiled); drop all but the KEEP newest."""
    base = Path(os.environ.get("NUMBA_CACHE_DIR") or cache_home())
    here = base / f"numba-{remembered_source_key(base)}-o{opt_name()}"
    numba.config.CACHE_DIR = str(here)
    try:
        here.mkdir(parents=True, exist_ok=True)
        here.touch()                          # the newest, whether new or not
        old = sorted(base.glob("numba-*"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP:]
        for d in old:
            shutil.rmtree(d, ignore_errors=True)
    except OSError:
        pass        # an unwritable cache: numba falls back to its own locations
    return here


def load_without_refresh() -> None:
    """Load a cached kernel without first refreshing numba's target context. numba's cache
    refreshes it before every load (Cache.load_overload), and the first refresh in a process
    installs every typing and lowering registry numba has (its numpy, cffi, string and math
    support: 0.19 s, cffi's C parser and, where installed, scipy.linalg imported among them)
    that only a compile uses: a cached kernel is machine code and an environment, and needs the
    runtime (NRT) that the refresh starts first, started here. A compile still refreshes it
    (numba.core.compiler.CompilerBase), so a kernel the cache lacks compiles as before. A warm
    `render triangle`, same checkout, scipy hidden: 0.98-1.01 -> 0.83-0.88 s; with scipy
    installed 1.16-1.18 -> 0.86 s (2026-12-06). Checked warm, in processes that compiled
    nothing: the report (every preset and built-in scene), ray passes on both BVH forms, the
    post chain, deferred, particles, mesh and NGG front ends, a heat map, ASTC textures.
    tilesim's kernels only (OWN's modules): a host program's own cached functions load as numba
    loads them."""
    from numba.core import caching
    from numba.core.runtime import rtsys
    numba_load = caching.Cache.load_overload

    def load_overload(self, sig, target_context):
        module = getattr(self._py_func, "__module__", None) or ""
        if module.split(".")[0] not in OWN:
            return numba_load(self, sig, target_context)
        rtsys.initialize(target_context)      # (what the refresh does first: the kernels' runtime)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)
    caching.Cache.load_overload = load_overload
