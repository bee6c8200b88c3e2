"""OpenGL reference renderer (Mesa llvmpipe through moderngl on a headless EGL context).

Two uses:

- `render_gl(scene, width, height) -> (covered, depth)`: the outside oracle for coverage and depth
  (DESIGN.md "Tests": outside oracles where they exist). Consumes one `Scene`, produces bool
  (h, w) coverage and float32 (h, w) window depth, row 0 at the top as tilesim's images.
- `GLFrame(scene, width, height)`: the scene uploaded once and rendered frame after frame on
  llvmpipe with a fragment shader comparable to tilesim's (Lambert, one directional light +
  ambient, base colour × texture), for bench/benchmark.py to time.

    from gl_oracle import render_gl
    covered, depth = render_gl(get_scene("dragon"), 1280, 720)

Conventions match DESIGN.md §2: the same clip_from_world (renderer.transforms), depth test LESS,
clear depth 1.0, counter-clockwise front faces. Where GL and tilesim's state differ in meaning
they are mapped, not copied: tilesim's `depth_test=False` still honours `depth_write` (as D3D and
Vulkan do) while disabling GL_DEPTH_TEST would also stop depth writes, so it becomes func ALWAYS.

Precision: moderngl's `depth_texture` is D24 unorm on llvmpipe (read back as float it is exactly
k / (2^24 - 1); moderngl does not accept a D32F texture as a depth attachment). The depth *test*
therefore runs in 24 bits (resolution 6e-8), and the depth we *report* is `gl_FragCoord.z` of the
winning fragment written to an R32F colour attachment whose writes are masked exactly as the
depth buffer's (depth_write), so it holds llvmpipe's float32 window depth. Coverage comes from a
separate R8 attachment every passing fragment writes 1 to, so coverage does not hinge on depth < 1.

Not modelled: MASK (alpha-tested) and BLEND draws are skipped by `render_gl` — their coverage
needs the texture and the alpha test (or does not write depth), and the oracle scenes are opaque.
Only the first render pass of `scene.frame(1)` is drawn.
"""
from __future__ import annotations


import numpy as np

from renderer.transforms import clip_from_world
from scenes.model import AlphaMode, CullMode, MipFilter, Scene, Wrap

_CTX = None     # one EGL context per process: creating one costs ~100 ms and leaks driver state

# a texture's sampler as GL's minification filter (GL_LINEAR, _MIPMAP_NEAREST, _MIPMAP_LINEAR)
GL_MIN_FILTER = {MipFilter.NONE: 0x2601, MipFilter.NEAREST: 0x2701, MipFilter.LINEAR: 0x2703}

_ORACLE_VS = """
#version 330
uniform mat4 clip_from_object;
in vec3 in_position;
void main() { gl_Position = clip_from_object * vec4(in_position, 1.0); }
"""

_ORACLE_FS = """
#version 330
layout(location = 0) out float covered;     // R8: 1 wherever a fragment passed the depth test
layout(location = 1) out float depth;       // R32F: window depth, masked like the depth buffer
void main() { covered = 1.0; depth = gl_FragCoord.z; }
"""

_SHADE_VS = """
#version 330
uniform mat4 clip_from_object;
uniform mat4 world_from_object;
uniform mat3 normal_from_object;            // inverse transpose of world_from_object's 3x3
in vec3 in_position;
in vec3 in_normal;
in vec2 in_uv;
out vec3 world_pos;
out vec3 world_normal;
out vec2 uv;
void main() {
    gl_Position = clip_from_object * vec4(in_position, 1.0);
    world_pos = (world_from_object * vec4(in_position, 1.0)).xyz;
    world_normal = normal_from_object * in_normal;
    uv = in_uv;
}
"""

_SHADE_FS = """
#version 330
uniform vec4 base_color;
uniform bool has_normals;
uniform bool has_texture;
uniform bool unlit;
uniform bool mask;
uniform float alpha_cutoff;
uniform vec3 light_dir;                     // unit, towards the light (world)
uniform vec3 light_color;
uniform vec3 ambient;
uniform sampler2D base_texture;
in vec3 world_pos;
in vec3 world_normal;
in vec2 uv;
out vec4 frag;
void main() {
    vec4 c = base_color;
    if (has_texture) c *= texture(base_texture, uv);
    if (mask && c.a < alpha_cutoff) discard;
    if (!unlit) {
        vec3 n = has_normals ? normalize(world_normal)
                             : normalize(cross(dFdx(world_pos), dFdy(world_pos)));
        if (has_normals && !gl_FrontFacing) n = -n;
        c.rgb *= ambient + max(dot(n, light_dir), 0.0) * light_color;
    }
    frag = c;
}
"""


def context():
    """The process's standalone EGL context (Mesa llvmpipe), created on first use.

    Raises whatever moderngl raises when no EGL/GL is available; tests turn that into a skip."""
    global _CTX
    if _CTX is None:
        import moderngl
        _CTX = moderngl.create_standalone_context(backend="egl")
    return _CTX


def gl_renderer() -> str:
    return context().info["GL_RENDERER"]


def _set_state(ctx, state) -> None:
    """Depth and cull state of one draw (DrawState → GL); colour masks are set by the caller."""
    import moderngl
    if state.depth_test or state.depth_write:
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.depth_func = "<" if state.depth_test else "1"   # tilesim: no test, write still honoured
    else:
        ctx.disable(moderngl.DEPTH_TEST)
    if state.cull == CullMode.NONE:
        ctx.disable(moderngl.CULL_FACE)
    else:
        ctx.enable(moderngl.CULL_FACE)
        ctx.cull_face = "back" if state.cull == CullMode.BACK else "front"
    ctx.front_face = "ccw"


def _clip_from_object(scene: Scene, draw, width: int, height: int) -> bytes:
    m = clip_from_world(scene.camera, width, height) @ draw.world_from_object
    return m.T.astype("f4").tobytes()     # moderngl uniforms are column-major


def render_gl(scene: Scene, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Coverage (bool (h, w)) and window depth (float32 (h, w), 1.0 where nothing wrote depth)
    of the scene's first pass on llvmpipe, row 0 at the top. MASK and BLEND draws are skipped."""
    import moderngl
    ctx = context()
    prog = ctx.program(vertex_shader=_ORACLE_VS, fragment_shader=_ORACLE_FS)
    cov_tex = ctx.texture((width, height), 1, dtype="f1")
    z_tex = ctx.texture((width, height), 1, dtype="f4")
    depth_tex = ctx.depth_texture((width, height))
    fbo = ctx.framebuffer(color_attachments=[cov_tex, z_tex], depth_attachment=depth_tex)
    owned = [prog, cov_tex, z_tex, depth_tex, fbo]
    try:
        fbo.use()
        ctx.viewport = (0, 0, width, height)
        ctx.disable(moderngl.BLEND)
        fbo.color_mask = ((True,) * 4, (True,) * 4)
        fbo.depth_mask = True
        fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        # clear() fills every colour attachment with the same value; the depth copy must start at 1
        z_tex.write(np.ones((height, width), np.float32).tobytes())
        buffers: dict[int, object] = {}
        for draw in scene.frame(1)[0].draws:
            if draw.material.alpha_mode != AlphaMode.OPAQUE:
                continue
            mesh = draw.mesh
            if id(mesh) not in buffers:
                vbo = ctx.buffer(np.ascontiguousarray(mesh.positions, np.float32).tobytes())
                ibo = ctx.buffer(np.ascontiguousarray(mesh.indices, np.uint32).tobytes())
                vao = ctx.vertex_array(prog, [(vbo, "3f", "in_position")], index_buffer=ibo,
                                       index_element_size=4)
                buffers[id(mesh)] = vao
                owned += [vbo, ibo, vao]
            prog["clip_from_object"].write(_clip_from_object(scene, draw, width, height))
            _set_state(ctx, draw.state)
            fbo.depth_mask = bool(draw.state.depth_write)
            fbo.color_mask = ((True, True, True, True), (bool(draw.state.depth_write),) + (True,) * 3)
            buffers[id(mesh)].render(moderngl.TRIANGLES)
        ctx.finish()
        covered = np.frombuffer(fbo.read(attachment=0, components=1, dtype="f1"), np.uint8)
        depth = np.frombuffer(fbo.read(attachment=1, components=1, dtype="f4"), np.float32)
    finally:
        for o in reversed(owned):
            o.release()
        ctx.disable(moderngl.CULL_FACE)
        ctx.disable(moderngl.DEPTH_TEST)
    # GL row 0 is the bottom of the window; tilesim's row 0 is the top
    covered = covered.reshape(height, width)[::-1] > 0
    depth = depth.reshape(height, width)[::-1].copy()
    return covered, depth


class GLFrame:
    """A scene uploaded once (buffers, textures, compiled shader), rendered many times (render();
    release() when done)."""

    def __init__(self, scene: Scene, width: int, height: int):
        import moderngl
        ctx = self.ctx = context()
        self.scene, self.width, self.height = scene, width, height
        self.prog = ctx.program(vertex_shader=_SHADE_VS, fragment_shader=_SHADE_FS)
        self.color = ctx.texture((width, height), 4, dtype="f1")
        self.depth = ctx.depth_texture((width, height))
        self.fbo = ctx.framebuffer(color_attachments=[self.color], depth_attachment=self.depth)
        self.owned = [self.prog, self.color, self.depth, self.fbo]
        light = scene.light
        d = np.asarray(light.direction, np.float64)
        self.prog["light_dir"].value = tuple(d / np.linalg.norm(d))
        self.prog["light_color"].value = tuple(light.color)
        self.prog["ambient"].value = tuple(light.ambient)
        self.prog["base_texture"].value = 0
        vaos, textures, self.draws = {}, {}, []
        for draw in scene.frame(1)[0].draws:
            mesh, mat = draw.mesh, draw.material
            if id(mesh) not in vaos:
                n = len(mesh.positions)
                normals = mesh.normals if mesh.normals is not None else np.zeros((n, 3), np.float32)
                uvs = mesh.uvs if mesh.uvs is not None else np.zeros((n, 2), np.float32)
                verts = np.hstack([mesh.positions, normals, uvs]).astype("f4")
                vbo = ctx.buffer(verts.tobytes())
                ibo = ctx.buffer(np.ascontiguousarray(mesh.indices, np.uint32).tobytes())
                vaos[id(mesh)] = ctx.vertex_array(
                    self.prog, [(vbo, "3f 3f 2f", "in_position", "in_normal", "in_uv")],
                    index_buffer=ibo, index_element_size=4)
                self.owned += [vbo, ibo, vaos[id(mesh)]]
            tex = None
            if mat.texture is not None and mesh.uvs is not None:
                if id(mat.texture) not in textures:
                    rgba = mat.texture.rgba
                    # glTF v = 0 is row 0 of the image = the first row GL uploads: no flip
                    t = ctx.texture((rgba.shape[1], rgba.shape[0]), 4, np.ascontiguousarray(rgba).tobytes())
                    t.build_mipmaps()
                    t.filter = (GL_MIN_FILTER[mat.texture.mip], moderngl.LINEAR)     # its sampler's
                    t.repeat_x = mat.texture.wrap_s == Wrap.REPEAT     # (mirror: not in moderngl's
                    t.repeat_y = mat.texture.wrap_t == Wrap.REPEAT     #  texture object; clamped)
                    textures[id(mat.texture)] = t
                    self.owned.append(t)
                tex = textures[id(mat.texture)]
            w = draw.world_from_object
            self.draws.append(dict(
                vao=vaos[id(mesh)], texture=tex, state=draw.state,
                clip_from_object=_clip_from_object(scene, draw, width, height),
                world_from_object=w.T.astype("f4").tobytes(),
                normal_from_object=np.linalg.inv(w[:3, :3]).astype("f4").tobytes(),  # (M^-T)^T
                base_color=tuple(mat.base_color), has_normals=mesh.normals is not None,
                unlit=mat.unlit, mask=mat.alpha_mode == AlphaMode.MASK,
                alpha_cutoff=mat.alpha_cutoff))
        bg = scene.background
        self.clear = tuple(float(v) for v in bg[:4])

    def render(self) -> np.ndarray:
        """One frame: clear, every draw, finish, colour read back to host memory (uint8 RGBA)."""
        import moderngl
        ctx, prog = self.ctx, self.prog
        self.fbo.use()
        ctx.viewport = (0, 0, self.width, self.height)
        self.fbo.depth_mask = True
        self.fbo.clear(*self.clear, depth=1.0)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        for d in self.draws:
            _set_state(ctx, d["state"])
            self.fbo.depth_mask = bool(d["state"].depth_write)
            if d["state"].blend:
                ctx.enable(moderngl.BLEND)
            else:
                ctx.disable(moderngl.BLEND)
            prog["clip_from_object"].write(d["clip_from_object"])
            prog["world_from_object"].write(d["world_from_object"])
            prog["normal_from_object"].write(d["normal_from_object"])
            prog["base_color"].value = d["base_color"]
            prog["has_normals"].value = d["has_normals"]
            prog["has_texture"].value = d["texture"] is not None
            prog["unlit"].value = d["unlit"]
            prog["mask"].value = d["mask"]
            prog["alpha_cutoff"].value = d["alpha_cutoff"]
            if d["texture"] is not None:
                d["texture"].use(0)
            d["vao"].render(moderngl.TRIANGLES)
        ctx.finish()
        image = np.frombuffer(self.fbo.read(components=4), np.uint8)
        return image.reshape(self.height, self.width, 4)[::-1]

    def release(self) -> None:
        import moderngl
        for o in reversed(self.owned):
            o.release()
        self.ctx.disable(moderngl.BLEND)
        self.ctx.disable(moderngl.CULL_FACE)
        self.ctx.disable(moderngl.DEPTH_TEST)
