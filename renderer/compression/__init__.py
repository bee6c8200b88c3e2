"""Framebuffer compression: lossless block codecs on the actual pixel data (DCC-, AFBC- and
Apple-style), their size-only fast path, and transaction elimination's per-tile signatures.

    from renderer.compression import encode, decode, compressed_size, block_sizes
    enc = encode(result.color, "dcc", max_compressed_block=128)
    assert (decode(enc) == result.color).all()
    compressed_size(result.color, "afbc")      # payload + metadata bytes
"""
from .codecs import (CODECS, CompressionError, Encoded, as_surface, block_sizes,
                     compressed_size, decode, encode, tile_size_map)
from .te import tile_signatures, tiles_to_write

__all__ = ["CODECS", "CompressionError", "Encoded", "as_surface", "block_sizes",
           "compressed_size", "decode", "encode", "tile_size_map", "tile_signatures",
           "tiles_to_write"]
