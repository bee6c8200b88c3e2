"""The architectures: how a frame's render passes become pixels, and in what order.

Each is `render(scene, preset, width, height, samples, frontend=None) -> Result`
(pipelines.registry names them for the presets): it consumes the scene's render passes
(`Scene.frame(samples)`), runs the shared stages of `renderer` (front end, binning, raster,
shade, ROP) in its own order, charges every access through one `renderer.memory.MemoryModel`
and produces the images, counters and per-tile maps. Every architecture makes the same image.

    imr     immediate mode: submission order over the whole screen (imr_kernels: the replay)
    dsbr    AMD's draw-stream binning rasterizer: IMR plus batches worked bin by bin
    tbdr    tile-based deferred: parameter buffer, HSR per tile, tile memory (tbdr_kernels)
    shared  what they share around the stages: geometry streams, attachments, tile maps
"""
