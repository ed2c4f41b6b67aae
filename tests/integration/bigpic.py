#!/usr/bin/env python3
"""bigpic.py dds|png W H OUT: a large test picture, cheaply.

dds: an uncompressed A8R8G8B8 DDS without mips (as ImageMagick writes with
     -define dds:compression=none -define dds:mipmaps=0), red at the top to blue at the bottom.
png: an 8-bit RGB PNG, yellow at the top to green at the bottom, with a ramp across.
dxt1: a DXT1 DDS with its full mip chain (as ImageMagick writes an opaque picture with
     -define dds:compression=dxt5), its blocks noise from a fixed seed.

ImageMagick took 1.8 and 5 CPU-seconds for the 4096x4096 pictures mods_mount puts into a
texture (its Q16 pixel cache, then PNG filtering); these take a fraction of a second. What is
judged is the daemon's output, still by ImageMagick (compare).
"""
import random
import struct
import sys
import zlib


def ramp(i, n):
    return (255 * i + (n - 1) // 2) // (n - 1) if n > 1 else 0


def dds(w, h, out):
    head = struct.pack('<4s7I44x', b'DDS ', 124, 0x100F, h, w, 4 * w, 0, 1)
    # pixel format: size, DDPF_RGB | DDPF_ALPHAPIXELS, no FourCC, 32 bits, R G B A masks
    head += struct.pack('<2I4s5I', 32, 0x41, b'\0\0\0\0', 32, 0x00FF0000, 0x0000FF00,
                        0x000000FF, 0xFF000000)
    head += struct.pack('<5I', 0x1000, 0, 0, 0, 0)
    with open(out, 'wb') as f:
        f.write(head)
        for y in range(h):
            b = ramp(y, h)
            f.write(bytes((b, 0, 255 - b, 255)) * w)  # B G R A in memory


def dxt1(w, h, out):
    levels, size, lw, lh = 0, 0, w, h
    while True:
        levels += 1
        size += max(1, (lw + 3) // 4) * max(1, (lh + 3) // 4) * 8
        if lw == 1 and lh == 1:
            break
        lw, lh = max(1, lw // 2), max(1, lh // 2)
    # caps, height, width, linear size, depth, mip count; DDSD_LINEARSIZE | DDSD_MIPMAPCOUNT
    head = struct.pack('<4s7I44x', b'DDS ', 124, 0x000A1007, h, w, w * h // 2, 0, levels)
    head += struct.pack('<2I4s5I', 32, 0x4, b'DXT1', 0, 0, 0, 0, 0)
    head += struct.pack('<5I', 0x401008, 0, 0, 0, 0)
    with open(out, 'wb') as f:
        f.write(head)
        f.write(random.Random(1).randbytes(size))


def png_is_dds(w, h, path):
    """Level 0 of the A8R8G8B8 .dds at PATH (after its 128-byte header) holds the png
    picture's pixels, alpha 255: exit 0, or 1 naming the first row that differs."""
    across = bytes(ramp(x, w) for x in range(w))
    row = bytearray(4 * w)  # B G R A in memory
    row[0::4] = across
    row[3::4] = b'\xff' * w
    with open(path, 'rb') as f:
        if len(f.read(128)) != 128:
            sys.exit('# %s: no DDS header' % path)
        for y in range(h):
            row[1::4] = bytes((255 - ramp(y, h) // 2,)) * w
            row[2::4] = bytes((255 - ramp(y, h),)) * w
            if f.read(4 * w) != row:
                print('# %s: level 0 row %d is not the picture' % (path, y))
                sys.exit(1)


def chunk(kind, data):
    return (struct.pack('>I', len(data)) + kind + data +
            struct.pack('>I', zlib.crc32(kind + data) & 0xFFFFFFFF))


def png(w, h, out):
    across = bytes(ramp(x, w) for x in range(w))
    z = zlib.compressobj(1)
    idat = []
    row = bytearray(1 + 3 * w)  # filter byte 0 (none), then R G B
    row[3::3] = across
    for y in range(h):
        g = 255 - ramp(y, h) // 2  # yellow (255,255,0) to green (0,128,0)
        row[1::3] = bytes((255 - ramp(y, h),)) * w
        row[2::3] = bytes((g,)) * w
        idat.append(z.compress(bytes(row)))
    idat.append(z.flush())
    with open(out, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n')
        f.write(chunk(b'IHDR', struct.pack('>2I5B', w, h, 8, 2, 0, 0, 0)))
        f.write(chunk(b'IDAT', b''.join(idat)))
        f.write(chunk(b'IEND', b''))


def main():
    if len(sys.argv) == 5 and sys.argv[1] == 'png-is-dds':
        png_is_dds(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        return
    if len(sys.argv) != 5 or sys.argv[1] not in ('dds', 'png', 'dxt1'):
        sys.exit(__doc__.splitlines()[0])
    kind, w, h, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    {'dds': dds, 'png': png, 'dxt1': dxt1}[kind](w, h, out)


if __name__ == '__main__':
    main()
