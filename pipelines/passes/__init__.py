"""The passes of a frame graph that are not raster (pipelines.frame.run runs them after the
render passes).

    raytrace   ray passes (scenes.model.RayPass): consumes the scene's triangles, camera, light
               and the raster's depth; produces hit, shadow and AO images, per-pixel steps and
               rt.* counters, every node fetch priced through the preset's caches
    postchain  compute passes (scenes.model.ComputePass): consumes the frame's G-buffer;
               produces each surface and the comp.* counters of its compression state across
               stage boundaries (postchain_kernels: the passes' work)
"""
