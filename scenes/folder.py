"""The folder a model file may read from. Consumes a model's path and the names the file gives
(OBJ `mtllib` and `map_Kd`, glTF buffer and image URIs); produces real paths inside the model's
folder, or a `SceneError` saying only that the name leaves it.

A model is input a user may not have written (a download, an attachment), and a name in it such
as `../../../etc/shadow` or a symlink beside it pointing at `/root` would make the loader read, or
only stat, a file the user never named; its size, its existence or names found in it would then
show in our error messages. So a name is resolved here before anything opens or stats it: `..`
and absolute names lexically, symlinks one component at a time with `lstat` and `readlink` on
entries inside the folder only (a link's target is checked before it is followed, so nothing
outside is ever touched). `allow_outside` (the CLI's --allow-outside) turns the check off.

    folder = ModelFolder(Path("models/car.obj"))
    mtl = folder.resolve("car.mtl", "material library")      # models/car.mtl, real path
    folder.resolve("../../etc/passwd", "material library")   # SceneError: ... leaves the model's folder
"""
from __future__ import annotations

import os
import stat
from collections import deque
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .model import SceneError

MAX_LINKS = 40          # symlinks followed in one name (Linux's own limit, ELOOP)


class ModelFolder:
    def __init__(self, model: Path, allow_outside: bool = False):
        self.model = Path(model)
        # the user named the model, so its folder is trusted; the real path, so that a link
        # inside that points back into the folder by its real name is recognised as inside
        self.root = Path(os.path.realpath(self.model.parent))
        self.root_as_named = Path(os.path.abspath(self.model.parent))
        self.allow_outside = allow_outside

    def resolve(self, name: str, what: str, base: Path | None = None, shown: str | None = None) -> Path:
        """`name` (relative to `base`, a folder inside; default the model's) as a real path inside
        the folder; SceneError, naming `what` and the name as the file wrote it (`shown`, default
        `name`) only, when it leaves the folder."""
        base = self.root if base is None else Path(base)
        if self.allow_outside:
            return base / name
        found = self._walk(base, name)
        if found is None:
            raise SceneError(f"{self.model}: {what} {(shown or name)[:120]!r} leaves the model's "
                             "folder (--allow-outside permits it)")
        return found

    def resolve_uri(self, uri: str, what: str) -> Path:
        """A glTF URI (RFC 3986, relative to the model; percent-encoded; `file:` read as a path)."""
        parts = urlsplit(uri)
        if parts.scheme == "file":
            # an absolute file URI; inside the folder it is allowed like any other path
            return self.resolve(unquote(parts.path), what, shown=uri)
        if parts.scheme and len(parts.scheme) > 1:   # one letter: a Windows drive, a path
            raise SceneError(f"{self.model}: {what} {uri[:120]!r}: only relative and data: URIs "
                             "are supported")
        return self.resolve(unquote(uri), what, shown=uri)

    def _walk(self, base: Path, name: str) -> Path | None:
        """The real path of `name` from `base`, or None when it leaves the folder. Only entries
        inside the folder are lstat'ed or read; a missing entry ends the symlink checks for its
        own name (nothing below it can exist) but `..` after it still counts lexically."""
        root = self.root
        if os.path.isabs(name):
            rel = self._inside(Path(os.path.normpath(name)))
            if rel is None:
                return None
            here: list[str] = []
            todo = deque(rel.parts)
        else:
            rel = self._inside(base)
            if rel is None:
                return None
            here = list(rel.parts)
            todo = deque(Path(name).parts)
        links = 0
        while todo:
            part = todo.popleft()
            if part in ("", ".", os.sep):
                continue
            if part == "..":
                if not here:
                    return None
                here.pop()
                continue
            entry = root.joinpath(*here, part)
            try:
                mode = os.lstat(entry).st_mode
            except (OSError, ValueError):   # missing (the caller reports it), or a NUL in the name
                here.append(part)
                continue
            if not stat.S_ISLNK(mode):
                here.append(part)
                continue
            links += 1
            if links > MAX_LINKS:
                return None
            target = os.readlink(entry)
            if os.path.isabs(target):
                rel = self._inside(Path(os.path.normpath(target)))
                if rel is None:
                    return None
                here = []
                todo.extendleft(reversed(rel.parts))
            else:
                todo.extendleft(reversed(Path(target).parts))
        return root.joinpath(*here)

    def _inside(self, path: Path) -> Path | None:
        """`path` (absolute, normalised) relative to the folder, by its real or its given name."""
        for root in (self.root, self.root_as_named):
            if path == root or root in path.parents:
                return path.relative_to(root)
        return None


def trimesh_resolver(folder: ModelFolder, uris: bool = False):
    """A trimesh resolver that reads only through `folder` (trimesh looks up OBJ materials and
    textures and glTF buffers and images by itself; this makes those reads obey the same rule).
    `uris`: trimesh's names are glTF URIs (percent-encoded, maybe `file:`). Names it refused
    are kept in `.refused`, as the messages (trimesh swallows a resolver's errors in places)."""
    from trimesh.resolvers import FilePathResolver

    class FolderResolver(FilePathResolver):
        refused: list[str]

        def get(self, name: str) -> bytes:
            try:
                name = name.strip()
                path = folder.resolve_uri(name, "file") if uris else folder.resolve(name, "file")
            except SceneError as e:
                self.refused.append(str(e))
                raise FileNotFoundError(name) from None
            with open(path, "rb") as f:
                return f.read()

        def keys(self):
            return iter(())    # trimesh's listing walks the whole folder tree; nothing needs it

        def namespaced(self, namespace: str):
            raise FileNotFoundError(namespace)

        def write(self, name, data):
            raise PermissionError(name)

    resolver = FolderResolver(str(folder.model))
    resolver.refused = []
    return resolver
