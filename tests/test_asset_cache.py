"""The disk cache of the built-in scenes' model files (scenes.asset_cache): a second load reads the
entry instead of the file, a changed file is loaded again and replaces its entry, and
TILESIM_CACHE_DIR=off keeps nothing."""
from __future__ import annotations

import os

import numpy as np

from scenes import asset_cache


class Loads:
    """A loader that counts its calls and returns what the file holds."""

    def __init__(self):
        self.calls = 0

    def __call__(self, path):
        self.calls += 1
        return {"bytes": path.read_bytes(), "array": np.arange(5, dtype=np.float32)}


def test_a_second_load_reads_the_entry_and_a_changed_file_replaces_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TILESIM_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "model.obj"
    model.write_bytes(b"v 0 0 0\n")
    load = Loads()
    first = asset_cache.cached_scene(model, load)
    again = asset_cache.cached_scene(model, load)
    assert load.calls == 1 and again["bytes"] == first["bytes"] == b"v 0 0 0\n"
    assert np.array_equal(again["array"], first["array"]) and again is not first
    entries = list((tmp_path / "cache" / "scenes").glob("model.obj.*.pickle"))
    assert len(entries) == 1

    model.write_bytes(b"v 1 1 1\nv 2 2 2\n")
    os.utime(model, ns=(1, 1))                      # a different size and time
    changed = asset_cache.cached_scene(model, load)
    assert load.calls == 2 and changed["bytes"] == b"v 1 1 1\nv 2 2 2\n"
    now = list((tmp_path / "cache" / "scenes").glob("model.obj.*.pickle"))
    assert len(now) == 1 and now != entries


def test_a_broken_entry_is_loaded_again_and_off_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("TILESIM_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "model.ply"
    model.write_bytes(b"ply\n")
    load = Loads()
    asset_cache.cached_scene(model, load)
    (entry,) = (tmp_path / "cache" / "scenes").glob("model.ply.*.pickle")
    entry.write_bytes(entry.read_bytes()[:10])      # truncated, as a crash mid-write could not
    assert asset_cache.cached_scene(model, load)["bytes"] == b"ply\n" and load.calls == 2

    monkeypatch.setenv("TILESIM_CACHE_DIR", "off")
    other = tmp_path / "other.obj"
    other.write_bytes(b"")
    asset_cache.cached_scene(other, load)
    asset_cache.cached_scene(other, load)
    assert load.calls == 4 and not list((tmp_path / "cache" / "scenes").glob("other.obj.*"))


def test_a_model_scene_from_the_cache_renders_as_a_fresh_one(tmp_path, monkeypatch):
    """teapot's OBJ loaded once, then read back from its entry (the loader would fail now): the
    same counters and image as the scene loaded from the file with no cache."""
    from pipelines.frame import Settings, run
    from pipelines.presets import get_preset
    from scenes import library

    def fresh():
        library._build.cache_clear()
        return library.get_scene("teapot")

    monkeypatch.setenv("TILESIM_CACHE_DIR", "off")
    loaded = fresh()
    monkeypatch.setenv("TILESIM_CACHE_DIR", str(tmp_path / "cache"))
    fresh()
    assert len(list((tmp_path / "cache" / "scenes").glob("teapot.obj.*.pickle"))) == 1

    def no_file(path):
        raise AssertionError(f"{path} read again")
    monkeypatch.setattr(library, "load_mesh_file", no_file)
    cached = fresh()
    library._build.cache_clear()                    # (the next get_scene loads it afresh)
    a = run(cached, get_preset("apple-m3"), Settings(96, 64))
    b = run(loaded, get_preset("apple-m3"), Settings(96, 64))
    assert a.counters == b.counters and (a.image == b.image).all()
