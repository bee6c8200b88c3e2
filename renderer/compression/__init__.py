"""Framebuffer compression: lossless block codecs on the actual pixel data (DCC-, AFBC- and
Apple-style), a plane-equation depth codec (AMD HTILE-style), their size-only fast paths, and
transaction elimination's per-tile signatures.

    from renderer.compression import encode, decode, compressed_size, block_sizes
    enc = encode(result.color, "dcc", max_compressed_block=128)
    assert (decode(enc) == result.color).all()
    compressed_size(result.color, "afbc")      # payload + metadata bytes
    depth_compressed_size(depth, clear=1.0)    # d32f: clear / plane / raw 8x8 tiles + HTILE
"""
from .codecs import (CODECS, CompressionError, Encoded, as_surface, block_sizes,
                     compressed_size, decode, encode, rop_block_bytes, rop_meta_bytes,
                     tile_size_map)
from .depth import (EncodedDepth, decode_depth, depth_compressed_size, depth_tile_sizes,
                    encode_depth)
from .te import tile_signatures, tiles_to_write

__all__ = ["CODECS", "CompressionError", "Encoded", "EncodedDepth", "as_surface", "block_sizes",
           "compressed_size", "decode", "decode_depth", "depth_compressed_size",
           "depth_tile_sizes", "encode", "encode_depth", "rop_block_bytes", "rop_meta_bytes",
           "tile_size_map", "tile_signatures",
           "tiles_to_write"]
