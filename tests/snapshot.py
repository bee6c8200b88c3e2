"""The behaviour snapshot: a compact digest of every counter, image and heat map a frame makes, over
a grid of built-in scenes x presets x sample counts (and ray passes on one scene), stored in
tests/golden/snapshot.json. A restructuring keeps every digest; a commit that moves a figure
regenerates the file on purpose and says which figures moved and why:

    python -m pytest tests/test_snapshot.py --update-snapshot     # rewrite (on purpose only)
    python tests/snapshot.py sponza/amd-rdna2/1x                  # one case's full counters

A case's digest is a short hash per counter group (the counter names' first part: geom, raster,
mem, tile, rt, comp, ...) and per array (image, depth, each tile and pixel map, each ray image,
each post-chain surface), so a failure names what moved.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipelines.presets import PRESETS  # noqa: E402
from pipelines.frame import Settings  # noqa: E402
from scenes.library import get_scene, scene_names  # noqa: E402

PATH = Path(__file__).parent / "golden" / "snapshot.json"
WIDTH, HEIGHT = 160, 90             # not a multiple of any tile or bin: edge tiles are exercised
RAY_SCENE = "teapot"                # ray passes on every preset: a small BVH, built quickly
RAYS = ("primary", "shadow", "ao")


def cases() -> list[tuple[str, str, int, tuple[str, ...]]]:
    """(scene, preset, samples, ray passes) of every case, in a fixed order."""
    out = [(s, p, n, ()) for s in scene_names() for p in PRESETS for n in (1, 4)]
    out += [(RAY_SCENE, p, 1, RAYS) for p in PRESETS]
    return out


def case_id(scene: str, preset: str, samples: int, rays: tuple[str, ...]) -> str:
    return f"{scene}/{preset}/{samples}x" + (f"/rays={','.join(rays)}" if rays else "")


def frame_outputs(scene: str, preset: str, samples: int, rays: tuple[str, ...]):
    """Counters and every named array of one frame, as the report and `tilesim render` make it."""
    from pipelines.frame import run
    f = run(get_scene(scene), PRESETS[preset], Settings(WIDTH, HEIGHT, samples, rays=rays))
    return f.counters, f.arrays()


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def digest(counters, arrays: dict[str, np.ndarray]) -> dict[str, str]:
    groups: dict[str, dict] = {}
    for k, v in sorted(counters.items()):
        groups.setdefault(k.split(".")[0], {})[k] = int(v)
    out = {f"counters.{g}": _hash(json.dumps(c, sort_keys=True).encode()) for g, c in groups.items()}
    for name, a in sorted(arrays.items()):
        a = np.ascontiguousarray(a)
        out[name] = _hash(f"{a.dtype.str}{a.shape}".encode() + a.tobytes())
    return out


def load() -> dict:
    return json.loads(PATH.read_text()) if PATH.exists() else {}


def save(digests: dict) -> None:
    PATH.write_text(json.dumps({"width": WIDTH, "height": HEIGHT, "cases": digests}, indent=0,
                               sort_keys=True) + "\n")


if __name__ == "__main__":
    for spec in sys.argv[1:]:
        scene, preset, samples, *rest = spec.split("/")
        rays = tuple(rest[0].removeprefix("rays=").split(",")) if rest else ()
        c, arrays = frame_outputs(scene, preset, int(samples.rstrip("x")), rays)
        print(json.dumps({"counters": c.as_json(), "digest": digest(c, arrays)}, indent=1))
