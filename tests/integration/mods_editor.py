#!/usr/bin/env python3
"""How editors save a picture, for tests/integration/mods_mount.sh. Each command prints OK, or
STEP:ERRNO for the first step that failed (close:EINVAL, rename:EROFS ...).

  trunc FILE SRC               open O_TRUNC, write SRC in 64 KiB pieces, close (cp, convert)
  temp DIR NAME SRC [TMP]      write DIR/TMP (O_EXCL), fsync, close, rename over DIR/NAME (GIO)
  reverse FILE SRC             open O_TRUNC, write SRC's pieces last first (pwrite), close
  patch FILE SRC OFF           open O_RDWR (no truncation), write SRC at OFF, close
  two FILE SRC1 SRC2 FIRST     two writers at once, both O_TRUNC; FIRST (1 or 2) closes first
  readback FILE SRC            open O_RDWR|O_TRUNC, write SRC, read it back through the same fd
  dup FILE SRC                 open O_TRUNC, dup, close the first descriptor, write, close
  timed FILE SRC               as trunc; prints the seconds close() took (bench/run)
"""
import errno
import os
import sys

PIECE = 65536


def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def step(what, fn, *args):
    try:
        return fn(*args)
    except OSError as e:
        print(f"{what}:{name(e)}")
        sys.exit(0)


def data(path):
    with open(path, "rb") as f:
        return f.read()


def write_all(fd, b, reverse=False):
    offs = list(range(0, len(b), PIECE)) or [0]
    for off in reversed(offs) if reverse else offs:
        step("write", os.pwrite, fd, b[off:off + PIECE], off)


def trunc(path, src, reverse=False):
    fd = step("open", os.open, path, os.O_WRONLY | os.O_TRUNC)
    write_all(fd, data(src), reverse)
    step("close", os.close, fd)


def temp(d, nm, src, tmp=None):
    tmp = tmp or f".goutputstream-{os.getpid()}"
    fd = step("create", os.open, os.path.join(d, tmp), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    write_all(fd, data(src))
    step("fsync", os.fsync, fd)
    step("close", os.close, fd)
    step("rename", os.rename, os.path.join(d, tmp), os.path.join(d, nm))


def patch(path, src, off):
    fd = step("open", os.open, path, os.O_RDWR)
    step("write", os.pwrite, fd, data(src), int(off))
    step("close", os.close, fd)


def two(path, src1, src2, first):
    a = step("open", os.open, path, os.O_WRONLY | os.O_TRUNC)
    b = step("open", os.open, path, os.O_WRONLY | os.O_TRUNC)
    write_all(a, data(src1))
    write_all(b, data(src2))
    order = [a, b] if first == "1" else [b, a]
    for fd in order:
        step("close", os.close, fd)


def readback(path, src):
    b = data(src)
    fd = step("open", os.open, path, os.O_RDWR | os.O_TRUNC)
    write_all(fd, b)
    got = step("read", os.pread, fd, len(b) + 10, 0)
    if got != b:
        print("read:DIFFERENT")
        sys.exit(0)
    step("close", os.close, fd)


def dup(path, src):
    fd = step("open", os.open, path, os.O_WRONLY | os.O_TRUNC)
    fd2 = step("dup", os.dup, fd)
    step("close-first", os.close, fd)
    write_all(fd2, data(src))
    step("close", os.close, fd2)


def timed(path, src):
    import time
    fd = step("open", os.open, path, os.O_WRONLY | os.O_TRUNC)
    write_all(fd, data(src))
    t0 = time.monotonic()
    step("close", os.close, fd)
    print(f"{time.monotonic() - t0:.3f}")
    sys.exit(0)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"timed": timed, "trunc": trunc, "temp": temp, "patch": patch, "two": two, "readback": readback,
     "dup": dup, "reverse": lambda p, s: trunc(p, s, True)}[cmd](*args)
    print("OK")


if __name__ == "__main__":
    main()
