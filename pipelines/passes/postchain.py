"""Post-processing chain: a small frame graph of a G-buffer pass and compute passes over real
surfaces, with each surface's compression state tracked across stage boundaries by the preset's
policy (pipelines.presets.compression); and transaction elimination over two rendered frames.

    from pipelines.passes.postchain import postchain
    r = postchain("sponza", "amd-gcn", 320, 180)
    r.counters["comp.tax_bytes"], r.events[:3], r.surfaces["final"]

Consumes: a Result of pipelines.api.render (colour, depth) and an unlit render of the same scene
(albedo). Produces: PostResult (the surfaces, comp.* counters, the event list of every read,
write, decompress and read-modify-write with its bytes).

How the G-buffer is made (the raster pipelines write one RGBA8 colour and depth, not MRTs):
    albedo  RGBA8    the scene rendered with every material unlit: base colour x texture
    normal  RGBA16F  view-space normals reconstructed from the rendered depth (cross product of
                     position differences), as a G-buffer pass would have written them
    depth   D32F     the rendered depth (not compressed here: no depth codec is modelled)
Compute passes: light (deferred Lambert -> HDR RGBA16F), ssao (depth + normals -> AO RGBA8),
tonemap (HDR x AO -> LDR RGBA8), blur_x and blur_y (separable 5-tap), then a render pass,
present, that samples LDR and the blur and writes the final colour.

Accounting per access (bytes of a surface = U raw; C = payload + metadata measured by the codec
on that surface's current data):
  - a write by a stage that may write compressed moves C, else U; a read by a stage that may
    read compressed moves C if the surface is compressed, else U;
  - a compressed surface accessed by a stage that may not use it compressed (or by a scattered /
    atomic pass, on every preset) is first decompressed in place: read C, write U ("decompress",
    counted), and stays raw until a compressing writer rewrites it;
  - comp.tax_bytes: per access that moved U where a compression-keeping design (same codec,
    every stage reads and writes compressed) moves C, U - C. This is the seed's
    tax = sum over switches (U - C) (seed-notes/004_partB.md L63, L533); the decompress passes
    themselves are comp.decompress.bytes (the seed's formula leaves them out: 004_partA.md L358);
  - partial writes: a compute pass whose workgroup covers less than a metadata block writes each
    block k times; a compressed writer that does not merge them reads and rewrites the block each
    time (comp.rmw.bytes = k reads + k - 1 extra writes of the block's compressed bytes, taken at
    the block's final size).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from renderer.compression import codecs as codec_mod
from renderer.compression import tile_signatures, tiles_to_write
from renderer.compression.te import SIGNATURE, TE_TILE
from renderer.counters import Counters
from renderer.formats import FORMATS
from renderer.memo import MeshMemo, digest, draws_key, draws_kept
from renderer.memory import MemoryModel
from renderer.transforms import look_at, perspective
from scenes.library import POST_CHAIN, get_scene
from scenes.model import ComputePass, Draw, Light, Material, Scene
from scenes.procedural import uv_sphere

from pipelines.passes import postchain_kernels as K
from pipelines.passes.present import scanout_counters
from pipelines.presets import get_preset

RGBA16F = FORMATS["rgba16f"]

HDR_INTENSITY = 2.0        # the HDR pass scales lit colour into [0, 2]: a range tone mapping needs
SSAO_RADIUS_PX = 6
LPDDR5_GBPS = 51.2         # 64-bit LPDDR5-6400 peak, seed-notes/004_partA.md L354 (seed L869)
FPS = 60.0


class PostchainError(ValueError):
    pass


@dataclass
class SurfaceState:
    format: str
    data: np.ndarray
    compressed: bool = False
    U: int = 0                          # raw bytes
    C: int = 0                          # payload + metadata bytes of the current data
    meta: int = 0                       # of which metadata
    blocks: int = 0                     # metadata blocks


@dataclass
class PostResult:
    preset: str
    codec: str
    width: int
    height: int
    surfaces: dict[str, np.ndarray]
    counters: Counters
    events: list[dict] = field(default_factory=list)
    pass_counters: dict[str, Counters] = field(default_factory=dict)   # per pass; they sum to counters
    display: Counters | None = None   # run_graph(present=...)'s scan-out step; counters include it

    def by_surface(self) -> list[dict]:
        """One row per surface: format, raw and compressed bytes of its last contents, the ratio,
        bytes read and written, decompress events and tax, for a report table."""
        rows = []
        c = self.counters
        for name, data in self.surfaces.items():
            key = f"comp.surface.{name}."
            raw, comp = c[key + "raw_bytes"], c[key + "compressed_bytes"]
            rows.append({"surface": name, "raw_bytes": raw, "compressed_bytes": comp,
                         "ratio": raw / comp if comp else 0.0, "read_bytes": c[key + "read_bytes"],
                         "write_bytes": c[key + "write_bytes"],
                         "decompress_events": c[key + "decompress.events"],
                         "tax_bytes": c[key + "tax_bytes"]})
        return rows

    def by_pass(self) -> list[dict]:
        """One row per pass: stage, bytes read and written, decompress, rmw and tax bytes."""
        rows = {}
        for e in self.events:
            rows.setdefault(e["pass"], {"pass": e["pass"], "stage": e["stage"]})
        c = self.counters
        for name, row in rows.items():
            key = f"comp.pass.{name}."
            for k in ("read_bytes", "write_bytes", "decompress_bytes", "rmw_bytes", "tax_bytes"):
                row[k] = c[key + k]
        return list(rows.values())

    def tax_at(self, fps: float = FPS, budget_gbps: float = LPDDR5_GBPS) -> dict[str, float]:
        """The compression tax as GB/s at `fps` and its share of a DRAM budget (the seed's
        worked example compares with 51.2 GB/s LPDDR5, seed-notes/004_partA.md L354)."""
        tax = self.counters["comp.tax_bytes"]
        extra = tax + self.counters["comp.decompress.bytes"] + self.counters["comp.rmw.bytes"]
        return {"tax_mb": tax / 1e6, "tax_gbps": tax * fps / 1e9,
                "tax_share": tax * fps / 1e9 / budget_gbps,
                "boundary_gbps": extra * fps / 1e9, "budget_gbps": budget_gbps}


def _measure(state: SurfaceState, policy: dict) -> None:
    """U, C, metadata bytes and block count of the surface's current data under the codec."""
    fmt = FORMATS[state.format]
    h, w = state.data.shape[:2]
    state.U = h * w * fmt.bytes_per_sample
    codec = policy["codec"]
    if codec == "none" or state.format == "d32f":
        state.C, state.meta, state.blocks = state.U, 0, 0
        return
    sizes = codec_mod.block_sizes(state.data, codec, int(policy["dcc_max_compressed_block"]))
    state.blocks = sizes.size
    state.meta = sizes.size * codec_mod.META_BYTES[codec]
    state.C = int(sizes.sum())


def _block_px(policy: dict, fmt: str) -> tuple[int, int]:
    codec = policy["codec"]
    bpp = FORMATS[fmt].bytes_per_sample
    if codec == "dcc":
        return 8, codec_mod.DCC_BLOCK // bpp // 8
    if codec == "ubwc":
        bw = 16 if bpp <= 4 else 8
        return bw, codec_mod.UBWC_BLOCK // bpp // bw
    return (16, 16) if codec in ("afbc", "apple") else (1, 1)


def _compressible(state: SurfaceState, policy: dict) -> bool:
    return policy["codec"] != "none" and state.format != "d32f"


def run_graph(passes: list[ComputePass], preset: str, kernels: dict[str, Callable[[dict], dict]],
              surfaces: dict[str, SurfaceState] | None = None, policy: dict | None = None,
              cache_bytes: int = 0, memory: MemoryModel | None = None,
              present: str | None = None) -> PostResult:
    """Run the passes (frame-graph nodes, scenes.model.ComputePass) in order on real surfaces and
    count every byte the compression policy of `preset` moves (module docstring).
    `kernels[p.kernel](inputs)` maps the surfaces pass p reads to those it writes. `policy`
    overrides the preset's (`preset.compression`). The counters come per pass too (PostResult.pass_counters).

    memory: the frame's memory model (pipelines.frame.run). Every access is then a request to its
    caches, entering at L2 (the texture and shader caches above it are not modelled): a read or
    write of n bytes of a surface touches the first n bytes of the surface's own region, line by
    line (its compressed size where it is compressed: the payload the codec keeps; the metadata
    in a region of its own, stream meta), so a surface written by one pass and read by the next
    may still be in L2, and every pass meets what the frame's render passes left there. The
    mem.* counters are then what the caches moved (per pass: the model's counts across it); at
    the end of the chain the caches write back the dirty lines of every surface it wrote
    (counted in its last pass: the frame ends with it). Without a model, every access moves its
    bytes to or from DRAM (the codec study of bench/bench_compression.py and the claims).

    present: the surface the display engine scans out after the last pass (the frame's "final"):
    a step of its own, PostResult.display (pipelines.passes.present says what it counts).

    cache_bytes > 0 (without a model) adds a coarse last-level cache: whole surfaces in LRU
    order, each taking its compressed bytes if the preset keeps compressed lines in cache (RDNA
    4, UTC) and its raw bytes otherwise (RDNA 2's Infinity Cache holds decompressed data,
    000_partA.md L170); a read of a surface still resident moves no DRAM bytes
    (comp.cache.hit_bytes). Writes still go to DRAM (write-through: the store a later pass or the
    display needs)."""
    if memory is not None and cache_bytes:
        raise PostchainError("run_graph: give the frame's memory model or a coarse cache, not both")
    policy = dict(get_preset(preset).compression.as_dict() if policy is None else policy)
    surfaces = {} if surfaces is None else surfaces
    by_pass: dict[str, Counters] = {}
    cnt = Counters()                          # the current pass's
    events: list[dict] = []
    width = height = 0
    lru: list[tuple[str, int]] = []           # (surface, bytes in cache), most recent last

    def touch(name: str, s: SurfaceState):
        if cache_bytes <= 0:
            return
        lru[:] = [e for e in lru if e[0] != name]
        lru.append((name, s.C if s.compressed and policy["compressed_in_cache"] else s.U))
        while lru and sum(b for _, b in lru) > cache_bytes:
            lru.pop(0)

    l2 = memory.level("l2") if memory is not None else 0
    regions: dict[tuple, None] = {}           # the model's regions the chain's surfaces took, in order

    def move(name: str, nbytes: int, stream: str, direction: str, meta: int):
        """The bytes an access moves: through the frame's caches, else straight to DRAM."""
        if memory is None:
            cnt.add(f"mem.dram.{direction}.{stream}", nbytes - meta)
            if meta:
                cnt.add(f"mem.dram.{direction}.meta", meta)
            return
        write = direction == "write"
        regions.update(dict.fromkeys([("post", name)] + ([("post", name, "meta")] if meta else [])))
        memory.write_linear(l2, memory.region(("post", name)), nbytes - meta, stream, write)
        if meta:
            memory.write_linear(l2, memory.region(("post", name, "meta")), meta, "meta", write)

    def log(p: ComputePass, name: str, kind: str, nbytes: int, stream: str, direction: str,
            compressed: bool, tax: int = 0, meta: int = 0, times: int = 1):
        """An access of nbytes (of which meta are metadata) to surface `name`, `times` times over
        the same bytes (a read-modify-write per partial write)."""
        if nbytes:
            for _ in range(times):
                move(name, nbytes, stream, direction, meta)
            nbytes *= times
            cnt.add(f"comp.pass.{p.name}.{direction}_bytes", nbytes)
            cnt.add(f"comp.surface.{name}.{direction}_bytes", nbytes)
            state = "compressed" if compressed else "raw"
            cnt.add(f"comp.stream.{stream}.{direction}.{state}_bytes", nbytes)
        if tax:
            cnt.add("comp.tax_bytes", tax)
            cnt.add(f"comp.pass.{p.name}.tax_bytes", tax)
            cnt.add(f"comp.surface.{name}.tax_bytes", tax)
        events.append({"pass": p.name, "stage": p.stage, "surface": name, "kind": kind,
                       "compressed": compressed, "bytes": int(nbytes), "tax": int(tax)})

    def decompress(p: ComputePass, name: str, s: SurfaceState):
        """In-place decompress (or conversion to linear): read C, write U; metadata dropped."""
        nbytes = s.C + s.U
        cnt.add("comp.decompress.events", 1)
        cnt.add("comp.decompress.bytes", nbytes)
        cnt.add(f"comp.pass.{p.name}.decompress_bytes", nbytes)
        cnt.add(f"comp.surface.{name}.decompress.events", 1)
        log(p, name, "decompress", s.C, "color", "read", True, meta=s.meta)
        log(p, name, "decompress", s.U, "color", "write", False)
        s.compressed = False
        touch(name, s)

    def run_pass(p: ComputePass):
        nonlocal width, height
        if p.stage not in ("ps", "cs"):
            raise PostchainError(f"pass {p.name!r}: stage must be 'ps' or 'cs', got {p.stage!r}")
        missing = [r for r in p.reads if r not in surfaces]
        if missing:
            raise PostchainError(f"pass {p.name!r} reads {missing} before any pass wrote them")
        may_read = policy["ps_reads_compressed"] if p.stage == "ps" else policy["cs_reads_compressed"]
        for name in p.reads:
            s = surfaces[name]
            if s.compressed and (not may_read or p.scattered):
                decompress(p, name, s)
            stream = "texture"
            if any(e[0] == name for e in lru):
                hit = s.C if s.compressed else s.U
                cnt.add("comp.cache.hit_bytes", hit)
                cnt.add(f"comp.pass.{p.name}.cache_hit_bytes", hit)
                events.append({"pass": p.name, "stage": p.stage, "surface": name, "kind": "cache_hit",
                               "compressed": s.compressed, "bytes": 0, "tax": 0})
                touch(name, s)
                continue
            if s.compressed:
                log(p, name, "read", s.C, stream, "read", True, meta=s.meta)
            else:
                tax = s.U - s.C if _compressible(s, policy) else 0
                log(p, name, "read", s.U, stream, "read", False, tax)
            touch(name, s)
        if p.kernel not in kernels:
            raise PostchainError(f"pass {p.name!r}: no kernel {p.kernel!r}")
        outputs = kernels[p.kernel]({n: surfaces[n].data for n in p.reads})
        may_write = p.stage == "ps" or (policy["cs_writes_compressed"] and not p.scattered)
        for name, fmt in p.writes.items():
            if name not in outputs:
                raise PostchainError(f"pass {p.name!r} did not produce {name!r}")
            data = outputs[name]
            if fmt not in FORMATS:
                raise PostchainError(f"pass {p.name!r}: unknown format {fmt!r} for {name!r}")
            old = surfaces.get(name)
            if old is not None and old.compressed and _compressible(old, policy) and not may_write:
                decompress(p, name, old)          # GCN before a compute write; AFBC to linear
            s = SurfaceState(fmt, data)
            _measure(s, policy)
            height, width = data.shape[:2]
            stream = "depth" if fmt == "d32f" else "color" if p.stage == "ps" else "compute"
            compressible = _compressible(s, policy)
            if compressible and may_write:
                s.compressed = True
                if old is not None and not old.compressed:
                    cnt.add("comp.recompress.events", 1)
                log(p, name, "write", s.C, stream, "write", True, meta=s.meta)
                cnt.add("comp.blocks", s.blocks)
                cnt.add("comp.compressed_bytes", s.C)
                bw, bh = _block_px(policy, fmt)
                wx, wy = p.workgroup
                k = -(-bw // wx) * -(-bh // wy) if p.stage == "cs" else 1
                if k > 1 and not policy["merges_partial_writes"]:
                    rmw = k * s.C + (k - 1) * s.C
                    cnt.add("comp.rmw.bytes", rmw)
                    cnt.add(f"comp.pass.{p.name}.rmw_bytes", rmw)
                    log(p, name, "rmw", s.C, stream, "read", True, meta=s.meta, times=k)
                    log(p, name, "rmw", s.C, stream, "write", True, meta=s.meta,
                        times=k - 1)
            else:
                tax = s.U - s.C if compressible else 0
                log(p, name, "write", s.U, stream, "write", False, tax)
            cnt.add("comp.raw_bytes", s.U)
            cnt.add(f"comp.surface.{name}.raw_bytes", s.U)
            cnt.add(f"comp.surface.{name}.compressed_bytes", s.C)
            surfaces[name] = s
            touch(name, s)

    def scan_out(p: ComputePass):
        """The display reads `present` as stored where it can, else after a decompress."""
        s = surfaces[present]
        if s.compressed and not policy["display_reads_compressed"]:
            decompress(p, present, s)
        cnt.update(scanout_counters(s.C if s.compressed else s.U, s.U))

    for i, p in enumerate(passes):
        cnt = by_pass.setdefault(p.name, Counters())
        before = memory.counters() if memory is not None else None
        run_pass(p)
        if memory is None:
            continue
        if i == len(passes) - 1:            # the frame's end: what the chain left dirty is stored
            for key in regions:
                memory.flush(memory.region(key), store=True)
        for k, v in memory.counters().items():
            cnt.add(k, v - before[k])
    shown = cnt = Counters()                  # the display step's, apart from the passes'
    if present is not None:
        before = memory.counters() if memory is not None else None
        scan_out(ComputePass("display", "display", (present,), {}, stage="display"))
        if memory is not None:               # a decompress's raw blocks are stored
            for key in regions:
                memory.flush(memory.region(key), store=True)
            for k, v in memory.counters().items():
                if v != before[k]:
                    cnt.add(k, v - before[k])
    return PostResult(preset, policy["codec"], width, height,
                      {n: s.data for n, s in surfaces.items()},
                      sum(by_pass.values(), Counters()) + shown, events, by_pass,
                      shown if present is not None else None)


# --- the built-in post chain -----------------------------------------------------------------
def _unlit(scene: Scene) -> Scene:
    draws = [dataclasses.replace(d, material=dataclasses.replace(d.material, unlit=True))
             for d in scene.draws]
    return dataclasses.replace(scene, name=scene.name + "-albedo", draws=draws, passes=None,
                               compute=())


def gbuffer(scene: Scene | str, width: int, height: int, raster_preset="imr-baseline", lit=None):
    """The G-buffer targets of `scene` (module docstring) as arrays, and the render Result
    (`lit`, when given: the frame's own single-sampled render). The image does not depend on the
    architecture (DESIGN.md §4), so any raster preset serves.

    The targets are shared and must not be written to. They are remembered while the same draws
    are drawn from the same camera to the same depth, with the same texture formats: a report's
    twelve presets ask for them once each. So are the chain's results (chain_kernels), which
    depend on nothing else. Per preset, the post chain's frame had spent 55-65% of its G-buffer
    drawing the unlit scene as a frame with counters, and 1.5 of 2.8 s (twelve presets at
    1280x720) repeating the same image work."""
    from pipelines.frame import Settings, raster
    from pipelines.picture import image_key
    from pipelines.presets import get_preset
    scene = get_scene(scene) if isinstance(scene, str) else scene
    preset = get_preset(raster_preset) if isinstance(raster_preset, str) else raster_preset
    if lit is None:
        lit = raster(scene, preset, Settings(width, height))
    key = (draws_key(scene.draws), scene.camera, scene.light, width, height,
           image_key(scene, preset), digest(lit.depth))
    g = _GBUFFERS.get(key, draws_kept(scene.draws),
                      lambda: _gbuffer(scene, preset, width, height, lit.depth))
    return g, lit


_GBUFFERS = MeshMemo(1)


def _gbuffer(scene: Scene, preset, width: int, height: int, depth: np.ndarray) -> dict:
    """gbuffer's targets. The albedo is the unlit scene's picture (pipelines.picture: the image
    every architecture makes, bit for bit, without counters or the cache model)."""
    from pipelines.picture import picture
    albedo = picture(_unlit(scene), preset, width, height)
    cam = scene.camera
    proj = perspective(cam.fovy_deg, width / height, cam.near, cam.far)
    pos = K.view_positions(depth, np.linalg.inv(proj))
    normal = K.normals_from_positions(pos)
    view = look_at(cam.eye, cam.target, cam.up)
    light_dir = view[:3, :3] @ np.asarray(scene.light.direction, np.float64)
    light_dir = (light_dir / np.linalg.norm(light_dir)).astype(np.float32)
    return {"albedo": albedo, "normal": normal.astype(np.float16).view(np.uint16),
            "depth": depth, "position": pos, "light_dir": light_dir, "light": scene.light,
            "made": {}}


def _half(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float16).view(np.uint16)


def _float(bits: np.ndarray) -> np.ndarray:
    return bits.view(np.float16).astype(np.float32)


def chain_kernels(g: dict) -> dict[str, Callable[[dict], dict]]:
    """The work of each pass of the built-in post chain (scenes.library.POST_CHAIN) on the
    G-buffer `g` (gbuffer()): kernel name -> inputs -> outputs."""
    light: Light = g["light"]
    pos = g["position"]
    covered = pos[..., 3] != 0
    # occluders count within 5 % of the median view distance: a scale-free SSAO radius
    world_radius = 0.05 * float(np.median(-pos[..., 2][covered])) if covered.any() else 1.0
    made = g["made"]             # (gbuffer's: one table for every preset's chain)

    def once(name: str, kernel: Callable[[dict], dict]) -> Callable[[dict], dict]:
        """kernel, its outputs kept in g for the same input arrays (a frame through another
        preset reads the same ones: they were kept too)."""
        def run(inputs: dict) -> dict:
            key = (name, tuple((k, id(v)) for k, v in sorted(inputs.items())))
            if key not in made:
                made[key] = (inputs, kernel(inputs))     # (the inputs kept: their ids stay theirs)
            return made[key][1]
        return run

    return {name: once(name, kernel) for name, kernel in {
        "gbuffer": lambda s: {"albedo": g["albedo"], "normal": g["normal"], "depth": g["depth"]},
        "light": lambda s: {"hdr": _half(K.deferred_light(
            s["albedo"], _float(s["normal"]), g["light_dir"], np.float32(light.color),
            np.float32(light.ambient), np.float32(HDR_INTENSITY)))},
        "ssao": lambda s: {"ao": K.ssao(pos, _float(s["normal"]), SSAO_RADIUS_PX, world_radius)},
        "tonemap": lambda s: {"ldr": K.tonemap(_float(s["hdr"]), s["ao"])},
        "blur_x": lambda s: {"blur_tmp": K.blur_rows(s["ldr"])},
        "blur_y": lambda s: {"blur": K.blur_cols(s["blur_tmp"])},
        "present": lambda s: {"final": K.composite(s["ldr"], s["blur"])},
    }.items()}


def postchain(scene: Scene | str, preset: str, width: int = 320, height: int = 180,
              raster_preset: str | None = None, cache_bytes: int = 0) -> PostResult:
    """Render `scene`, build its G-buffer and run the post chain under `preset`'s compression.
    `raster_preset` renders the image (default: `preset` if it is a known raster preset, else
    imr-baseline; the image is the same on every architecture)."""
    from pipelines.presets import PRESETS
    if raster_preset is None:
        raster_preset = preset if preset in PRESETS else "imr-baseline"
    g, _ = gbuffer(scene, width, height, raster_preset)
    return run_graph(POST_CHAIN, preset, chain_kernels(g), cache_bytes=cache_bytes)


# --- the seed's compression-tax frame --------------------------------------------------------
def tax_frame(targets: dict[str, np.ndarray], switches: int = 4):
    """The seed's worked example (seed-notes/004_partA.md L346-356): a G-buffer pass writes
    `targets` (RGBA16F bit patterns), then `switches` stage switches alternate CS and PS, each
    stage reading the whole G-buffer once (light CS, shading PS, ...). Returns the passes and
    their kernels (run_graph's arguments)."""
    names = tuple(targets)
    out = [ComputePass("gbuffer", "gbuffer", (), {n: "rgba16f" for n in names}, stage="ps")]
    for i in range(switches):
        stage = "cs" if i % 2 == 0 else "ps"
        out.append(ComputePass(f"{stage}{i + 1}", "read", names, {}, stage=stage))
    return out, {"gbuffer": lambda s: dict(targets), "read": lambda s: {}}


# --- transaction elimination -----------------------------------------------------------------
def two_frame_scene(frame: int, background: str = "sponza") -> Scene:
    """A static background scene plus one small sphere that moves between frames (frame 0 and
    1: 0.6 world units apart); frame 2 repeats frame 1 (a static frame)."""
    base = get_scene(background)
    mesh = uv_sphere(12, 24, "mover")
    cam = base.camera
    eye, target = np.asarray(cam.eye, np.float64), np.asarray(cam.target, np.float64)
    fwd = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(fwd, np.asarray(cam.up, np.float64))
    right /= np.linalg.norm(right)
    step = min(frame, 1)
    centre = eye + fwd * (cam.near * 4.0) + right * (0.6 * step - 0.3) * cam.near
    m = np.eye(4)
    m[:3, :3] *= 0.25 * cam.near
    m[:3, 3] = centre
    mover = Draw(mesh, Material("mover", (0.95, 0.3, 0.2, 1.0)), m)
    return dataclasses.replace(base, name=f"{background}+mover{frame}", draws=[*base.draws, mover],
                               passes=None)


def transaction_elimination(frames: list[np.ndarray], tile: int = TE_TILE) -> list[Counters]:
    """Per frame: tiles, tiles written (signature changed), colour bytes written and saved, and
    signature traffic (each frame writes its signatures and reads the previous frame's)."""
    out = []
    prev = None
    for color in frames:
        sig = tile_signatures(color, tile)
        write = tiles_to_write(prev, sig)
        ty, tx = np.nonzero(write)
        h, w = color.shape[:2]
        bpp = color.shape[2] * color.itemsize
        tile_bytes = (np.minimum((ty + 1) * tile, h) - ty * tile) * (np.minimum((tx + 1) * tile, w) - tx * tile) * bpp
        c = Counters()
        c.add("te.tiles", sig.size)
        c.add("te.tiles_written", write.sum())
        c.add("mem.dram.write.color", int(tile_bytes.sum()))
        c.add("te.saved_bytes", h * w * bpp - int(tile_bytes.sum()))
        c.add("mem.dram.write.meta", sig.size * SIGNATURE.itemsize)
        if prev is not None:
            c.add("mem.dram.read.meta", sig.size * SIGNATURE.itemsize)
        out.append(c)
        prev = sig
    return out
