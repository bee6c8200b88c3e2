"""The scene model: meshes, glTF-style materials, draws in submission order, camera, light, and the
frame graph.

A frame is a `FrameGraph`: render passes (attachments with load/store actions, sample count,
draws), compute passes (read surfaces written earlier, write new ones) and ray passes (trace the
scene's BVH), in order, each naming the surfaces it reads and writes. `Scene.graph(samples, rays)`
makes it; `pipelines.frame.run` walks it. The architectures consume its render passes
(`Scene.frame(samples)`). Nothing here renders or counts; these are plain data with validation,
so a bad file fails here with one clear message.

    mesh = Mesh("tri", positions=np.array([[-1,-1,0],[1,-1,0],[0,1,0]], np.float32),
                indices=np.array([[0, 1, 2]], np.uint32))
    scene = Scene("triangle", "one triangle", draws=[Draw(mesh, Material("red", (1, 0, 0, 1)))],
                  camera=Camera(eye=(0, 0, 3), target=(0, 0, 0)))
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from renderer.cull import CullMode  # noqa: F401  (a draw state's; the stages read it)
from renderer.errors import SceneError  # noqa: F401  (raised here for bad files and values)


class AlphaMode(IntEnum):
    OPAQUE = 0   # glTF alphaMode OPAQUE: alpha ignored
    MASK = 1     # alpha test against alpha_cutoff ("punch-through"); needs the shader for coverage
    BLEND = 2    # source-over in submission order


class LoadAction(IntEnum):
    LOAD = 0       # read the attachment's previous contents
    CLEAR = 1      # start from the clear value
    DONT_CARE = 2  # contents undefined; we start from the clear value so images stay comparable


class StoreAction(IntEnum):
    STORE = 0
    DONT_CARE = 1


class Wrap(IntEnum):
    """A sampler's wrap mode along one axis (glTF sampler wrapS / wrapT)."""
    REPEAT = 0          # 10497
    CLAMP = 1           # 33071 CLAMP_TO_EDGE
    MIRROR = 2          # 33648 MIRRORED_REPEAT


class MipFilter(IntEnum):
    """How a sampler uses the mip chain (glTF minFilter; magnification is always bilinear)."""
    NONE = 0            # LINEAR: level 0 only
    NEAREST = 1         # LINEAR_MIPMAP_NEAREST: bilinear in the nearest level (a file without
                        # a sampler gets this: glTF leaves the filter to the implementation)
    LINEAR = 2          # LINEAR_MIPMAP_LINEAR: trilinear, the two nearest levels blended


@dataclass(frozen=True, eq=False)
class Texture:
    """RGBA8 image, row 0 at the top (v = 0 at the top, as glTF), and the sampler that reads it."""
    name: str
    rgba: np.ndarray  # uint8 (h, w, 4)
    wrap_s: Wrap = Wrap.REPEAT
    wrap_t: Wrap = Wrap.REPEAT
    mip: MipFilter = MipFilter.NEAREST

    def __post_init__(self):
        a = self.rgba
        if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 4 or a.shape[0] < 1 or a.shape[1] < 1:
            raise SceneError(f"texture {self.name!r}: expected uint8 (h, w, 4), got {a.dtype} {a.shape}")


@dataclass(frozen=True, eq=False)
class Material:
    """glTF metallic-roughness reduced to what tilesim shades (DESIGN.md §2): Lambert on base colour."""
    name: str
    base_color: tuple[float, float, float, float] = (0.8, 0.8, 0.8, 1.0)  # linear RGBA factor
    texture: Texture | None = None      # multiplies base_color; sampled bilinear + mipmaps
    alpha_mode: AlphaMode = AlphaMode.OPAQUE
    alpha_cutoff: float = 0.5           # glTF default
    double_sided: bool = False          # glTF: double-sided disables back-face culling
    unlit: bool = False                 # KHR_materials_unlit: no lighting term


@dataclass(eq=False)
class Mesh:
    """Indexed triangles in object space."""
    name: str
    positions: np.ndarray                # float32 (n_vertices, 3)
    indices: np.ndarray                  # uint32 (n_triangles, 3)
    normals: np.ndarray | None = None    # float32 (n_vertices, 3), unit; None → faceted from geometry
    uvs: np.ndarray | None = None        # float32 (n_vertices, 2), glTF convention (v down)

    def __post_init__(self):
        self.positions = np.ascontiguousarray(self.positions, np.float32)
        idx = np.asarray(self.indices)
        if idx.ndim == 1 and idx.size % 3 == 0:
            idx = idx.reshape(-1, 3)
        if self.positions.ndim != 2 or self.positions.shape[1] != 3:
            raise SceneError(f"mesh {self.name!r}: positions must be (n, 3), got {self.positions.shape}")
        if idx.ndim != 2 or idx.shape[1] != 3:
            raise SceneError(f"mesh {self.name!r}: indices must be triangles (m, 3), got {idx.shape}")
        n = len(self.positions)
        if n == 0 or len(idx) == 0:
            raise SceneError(f"mesh {self.name!r}: empty (no vertices or no triangles)")
        if not np.isfinite(self.positions).all():
            bad = int(np.flatnonzero(~np.isfinite(self.positions).all(axis=1))[0])
            raise SceneError(f"mesh {self.name!r}: vertex {bad} is NaN or infinite")
        if np.issubdtype(idx.dtype, np.signedinteger) and idx.min() < 0:
            raise SceneError(f"mesh {self.name!r}: negative index {int(idx.min())}")
        if idx.max() >= n:
            raise SceneError(f"mesh {self.name!r}: index {int(idx.max())} out of range for {n} vertices")
        self.indices = np.ascontiguousarray(idx, np.uint32)
        for attr, width in (("normals", 3), ("uvs", 2)):
            a = getattr(self, attr)
            if a is None:
                continue
            a = np.ascontiguousarray(a, np.float32)
            if a.shape != (n, width):
                raise SceneError(f"mesh {self.name!r}: {attr} must be ({n}, {width}), got {a.shape}")
            if not np.isfinite(a).all():
                raise SceneError(f"mesh {self.name!r}: {attr} contain NaN or infinite values")
            setattr(self, attr, a)

    @property
    def n_triangles(self) -> int:
        return len(self.indices)


@dataclass(frozen=True)
class DrawState:
    """Fixed-function state of one draw; architectures read it to decide early-Z, binning, HSR."""
    depth_test: bool = True     # compare LESS (DESIGN.md §2)
    depth_write: bool = True
    cull: CullMode = CullMode.BACK
    blend: bool = False         # source-over
    stream_out: bool = False    # writes its vertices back (transform feedback): NGG and mesh
                                # shading cannot take it and fall back to legacy (seed 000 L1008)
    mesh_shader: bool = False   # drawn with mesh shaders where the GPU has them (the default
                                # front end of a preset with mesh shading)

    @staticmethod
    def for_material(m: Material) -> "DrawState":
        """The state a glTF viewer uses: blended draws test depth but do not write it."""
        blend = m.alpha_mode == AlphaMode.BLEND
        return DrawState(depth_test=True, depth_write=not blend,
                         cull=CullMode.NONE if m.double_sided else CullMode.BACK, blend=blend)


@dataclass(eq=False)
class Draw:
    mesh: Mesh
    material: Material
    world_from_object: np.ndarray = field(default_factory=lambda: np.eye(4))  # float64 (4, 4)
    state: DrawState | None = None      # None → DrawState.for_material(material)

    def __post_init__(self):
        self.world_from_object = np.asarray(self.world_from_object, np.float64)
        if self.world_from_object.shape != (4, 4) or not np.isfinite(self.world_from_object).all():
            raise SceneError(f"draw of {self.mesh.name!r}: transform must be a finite 4x4 matrix")
        if self.state is None:
            self.state = DrawState.for_material(self.material)


@dataclass(frozen=True)
class Camera:
    eye: tuple[float, float, float]
    target: tuple[float, float, float]
    up: tuple[float, float, float] = (0.0, 1.0, 0.0)
    fovy_deg: float = 60.0       # vertical field of view
    near: float = 0.1
    far: float = 100.0

    def __post_init__(self):
        vals = (*self.eye, *self.target, *self.up, self.fovy_deg, self.near, self.far)
        if not np.isfinite(vals).all():
            raise SceneError("camera: values must be finite")
        if not 0.0 < self.fovy_deg < 180.0:
            raise SceneError(f"camera: fovy must be in (0, 180) degrees, got {self.fovy_deg}")
        if not 0.0 < self.near < self.far:
            raise SceneError(f"camera: need 0 < near < far, got near={self.near} far={self.far}")
        fwd = np.subtract(self.target, self.eye)
        if np.linalg.norm(fwd) == 0 or np.linalg.norm(np.cross(fwd, self.up)) == 0:
            raise SceneError("camera: eye equals target, or up is parallel to the view direction")

    @staticmethod
    def parse(text: str, near: float = 0.1, far: float = 100.0) -> "Camera":
        """`eye:target:up:fovy`, e.g. `0,1,5:0,0,0:0,1,0:60` (the CLI's --camera)."""
        parts = text.split(":")
        try:
            if len(parts) != 4:
                raise ValueError
            vecs = [tuple(float(v) for v in p.split(",")) for p in parts[:3]]
            if any(len(v) != 3 for v in vecs):
                raise ValueError
            fovy = float(parts[3])
        except ValueError:
            raise SceneError(f"--camera {text!r}: expected eye:target:up:fovy, e.g. 0,1,5:0,0,0:0,1,0:60") from None
        return Camera(vecs[0], vecs[1], vecs[2], fovy, near, far)


@dataclass(frozen=True)
class Light:
    """One directional light plus ambient (DESIGN.md §2)."""
    direction: tuple[float, float, float] = (0.4, 0.8, 0.45)   # towards the light, world space
    color: tuple[float, float, float] = (0.85, 0.85, 0.85)
    ambient: tuple[float, float, float] = (0.2, 0.2, 0.2)


@dataclass(frozen=True)
class Attachment:
    """One render target of a pass. Byte sizes come from `format` (renderer.formats)."""
    name: str                   # passes naming the same attachment share its surface
    format: str                 # 'rgba8' | 'd32f' (renderer.formats.FORMATS)
    load: LoadAction = LoadAction.CLEAR
    store: StoreAction = StoreAction.STORE
    clear: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
    memoryless: bool = False    # lives only on chip (tilers); an IMR must still back it with DRAM


@dataclass(eq=False)
class RenderPass:
    name: str
    color: Attachment
    depth: Attachment | None
    draws: list[Draw]
    samples: int = 1            # 1 or 4 (DESIGN.md §2)
    imageblock_bytes: int = 0   # per pixel, explicit imageblock data a tiler keeps on chip (Metal)
    threadgroup_bytes: int = 0  # per tile, threadgroup memory of tile shaders (Metal)
    inputs: tuple[str, ...] = ()  # attachments of earlier passes read once per pixel (a full-screen
                                  # lighting pass sampling the G-buffer)
    shows: str | None = None    # the pass's colour is this earlier attachment's image: a lighting
                                # pass's result, which the G-buffer pass computed with the same
                                # Lambert on the same visible surfaces (G-buffer texels are not kept)

    def __post_init__(self):
        if self.samples not in (1, 4):
            raise SceneError(f"pass {self.name!r}: samples must be 1 or 4, got {self.samples}")


@dataclass(frozen=True, eq=False)
class ComputePass:
    """A pass over whole surfaces (DESIGN.md §3): reads surfaces earlier passes wrote, writes new
    ones. `kernel` names its work in pipelines.passes.postchain.KERNELS; stage "ps" is a full-screen
    render pass (pixel shader and render backend: it always writes compressed where the codec
    can), "cs" a compute dispatch of `workgroup`-sized groups."""
    name: str
    kernel: str
    reads: tuple[str, ...]
    writes: dict[str, str]              # surface -> format (renderer.formats.FORMATS)
    stage: str = "cs"                   # "cs" | "ps"
    workgroup: tuple[int, int] = (8, 8)  # px one workgroup writes (compute)
    scattered: bool = False             # atomics / scattered writes: forces decompression


RAY_PASSES = ("primary", "shadow", "ao")


def parse_ray_passes(text: str | None) -> tuple[str, ...]:
    """`primary,shadow` -> ("primary", "shadow"); an unknown name is a SceneError."""
    passes = tuple(p.strip() for p in text.split(",") if p.strip()) if text else ()
    for p in passes:
        RayPass(p)
    return passes


@dataclass(frozen=True)
class RayPass:
    """A pass of rays traced against the scene's BVH (pipelines.passes.raytrace): primary visibility,
    shadows to the light from the raster's depth, or ambient occlusion from the primary hits."""
    name: str                           # RAY_PASSES

    def __post_init__(self):
        if self.name not in RAY_PASSES:
            raise SceneError(f"unknown ray pass {self.name!r} (try: {', '.join(RAY_PASSES)})")

    @property
    def reads(self) -> tuple[str, ...]:
        return {"primary": (), "shadow": ("depth",), "ao": ("rt.primary",)}[self.name]

    @property
    def writes(self) -> tuple[str, ...]:
        return (f"rt.{self.name}",)


@dataclass(eq=False)
class FrameGraph:
    """A frame's passes in order. Render passes come first (the architecture runs them as one
    frame), then compute passes, then ray passes (which read the raster's depth) in the order of
    RAY_PASSES, which is the order they meet the caches in."""
    passes: list

    def __post_init__(self):
        kinds = [_KIND_ORDER[type(p)] for p in self.passes]
        if kinds != sorted(kinds):
            raise SceneError("frame graph: render passes, then compute passes, then ray passes")
        names = [p.name for p in self.passes]
        if len(set(names)) != len(names):
            raise SceneError(f"frame graph: pass names must be unique, got {names}")

    def of(self, kind) -> list:
        return [p for p in self.passes if isinstance(p, kind)]

    @property
    def render_passes(self) -> list["RenderPass"]:
        return self.of(RenderPass)

    @property
    def compute_passes(self) -> list[ComputePass]:
        return self.of(ComputePass)

    @property
    def ray_passes(self) -> list[RayPass]:
        return self.of(RayPass)


_KIND_ORDER = {RenderPass: 0, ComputePass: 1, RayPass: 2}


def node_reads(node) -> tuple[str, ...]:
    """The surfaces a frame-graph node reads."""
    return node.inputs if isinstance(node, RenderPass) else node.reads


def discard_unread_depth(nodes: list) -> list:
    """The nodes with each render pass's stored depth that no later node reads made don't-care
    and memoryless: what an application declares for a depth buffer it is done with."""
    out = list(nodes)
    for i, node in enumerate(out):
        depth = node.depth if isinstance(node, RenderPass) else None
        if depth is None or depth.store != StoreAction.STORE or depth.memoryless:
            continue
        if not any(depth.name in node_reads(later) for later in out[i + 1:]):
            out[i] = dataclasses.replace(node, depth=dataclasses.replace(
                depth, store=StoreAction.DONT_CARE, memoryless=True))
    return out


@dataclass(eq=False)
class Scene:
    """What a user renders: draws in submission order under one camera and light.

    `passes`, when given, makes the render passes as a function of the sample count; otherwise
    the frame is one pass: colour cleared and stored, depth cleared and stored (what a GL app that
    does not invalidate depth gets). `compute` passes follow the render passes (a post chain).
    """
    name: str
    description: str
    draws: list[Draw]
    camera: Camera
    light: Light = field(default_factory=Light)
    background: tuple[float, float, float, float] = (0.06, 0.07, 0.09, 1.0)
    passes: "callable | None" = None
    compute: tuple[ComputePass, ...] = ()
    notes: tuple[str, ...] = ()      # what its file holds that tilesim does not model (--verbose)

    def graph(self, samples: int = 1, rays: tuple[str, ...] = (),
              store_depth: bool = False) -> FrameGraph:
        """The frame graph: the render passes, the scene's compute passes, then the ray passes
        asked for (AO starts from the primary hits, so asking for AO traces primary rays too).
        Depth is stored as an application declares it: in the one pass a scene without passes
        of its own gets, a depth no later node reads ends don't-care and memoryless (Vulkan
        STORE_OP_DONT_CARE, Metal MTLStorageModeMemoryless), unless `store_depth` keeps it;
        passes a scene declares keep their own store actions."""
        for r in rays:
            RayPass(r)                             # an unknown name fails here, in one line
        wanted = set(rays) | ({"primary"} if "ao" in rays else set())
        nodes = [*self.frame(samples), *self.compute, *(RayPass(r) for r in RAY_PASSES if r in wanted)]
        implied = self.passes is None      # passes a scene declares keep their own store actions
        return FrameGraph(discard_unread_depth(nodes) if implied and not store_depth else nodes)

    def frame(self, samples: int = 1) -> list[RenderPass]:
        if self.passes is not None:
            return self.passes(self, samples)
        color = Attachment("color", "rgba8", LoadAction.CLEAR, StoreAction.STORE, self.background)
        depth = Attachment("depth", "d32f", LoadAction.CLEAR, StoreAction.STORE, (1.0,))
        return [RenderPass("main", color, depth, list(self.draws), samples)]

    @property
    def n_triangles(self) -> int:
        return sum(d.mesh.n_triangles for d in self.draws)
