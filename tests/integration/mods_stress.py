#!/usr/bin/env python3
"""Texture mods under load, for tests/integration/mods_stress.sh. Each command prints
key=value lines (the shell checks them).

  saves MNT N          N saves of the A8R8G8B8 picture of each arena a*.psg of MNT in turn
                       (its texels inverted, then back), a reader thread stating, listing and
                       reading the arenas meanwhile; then each picture must be the last written
  torn MNT ARENA       a descriptor of ARENA's picture reads half of it, a save changes it,
                       the descriptor reads the rest: old, EIO, or mixed (for .dds and .png)
  refused MNT ARENA N  N editor saves whose rename over the picture is refused (garbage),
                       N temporaries abandoned (never renamed), then valid saves
"""
import errno
import os
import sys
import threading
import time

PIECE = 65536


def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def argb_name(arena):
    """The generated textures arena's texture 6 (A8R8G8B8 64x32): exact in both pictures."""
    dds = sorted(n for n in os.listdir(os.path.join(arena, "textures")) if n.endswith(".dds"))
    return os.path.join(arena, "textures", dds[6][:-4])


def read_file(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        out = b""
        while True:
            b = os.read(fd, PIECE)
            if not b:
                return out
            out += b
    finally:
        os.close(fd)


def save(path, data):
    """trunc + write + close, as cp does: None or the errno name of the failing step."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    except OSError as e:
        return "open:" + ename(e)
    try:
        for off in range(0, len(data), PIECE):
            os.pwrite(fd, data[off:off + PIECE], off)
    except OSError as e:
        os.close(fd)
        return "write:" + ename(e)
    try:
        os.close(fd)
    except OSError as e:
        return "close:" + ename(e)
    return None


def inverted(dds):
    return dds[:128] + bytes(255 - b for b in dds[128:])


def saves(mnt, n):
    arenas = sorted(os.path.join(mnt, a) for a in os.listdir(mnt) if a.startswith("a"))
    pics = [argb_name(a) + ".dds" for a in arenas]
    orig = [read_file(p) for p in pics]
    last = list(orig)
    fails = {}
    stop = threading.Event()
    rfails = {}

    def count(e):
        rfails[ename(e)] = rfails.get(ename(e), 0) + 1

    def pictures():  # EIO when a save of the picture came between its open and its end
        k = 0
        while not stop.is_set():
            p = argb_name(arenas[k % len(arenas)]) + (".png" if k % 2 else ".dds")
            k += 1
            try:
                read_file(p)
            except OSError as e:
                if e.errno != errno.EIO:
                    count(e)

    def others():  # what cannot fail across a save
        k = 0
        while not stop.is_set():
            a = arenas[k % len(arenas)]
            k += 1
            try:
                os.stat(argb_name(a) + ".png")
                os.listdir(os.path.join(a, "textures"))
                read_file(os.path.join(a, "info.txt"))
            except OSError as e:
                count(e)

    threads = [threading.Thread(target=f) for f in (pictures, others)]
    for th in threads:
        th.start()
    t0 = time.monotonic()
    for i in range(n):
        k = i % len(pics)
        data = inverted(orig[k]) if (i // len(pics)) % 2 == 0 else orig[k]
        err = save(pics[k], data)
        if err:
            fails[err] = fails.get(err, 0) + 1
        else:
            last[k] = data
    stop.set()
    for th in threads:
        th.join()
    print(f"seconds={time.monotonic() - t0:.1f}")
    print(f"saves={n}")
    print("save_failures=" + str(sum(fails.values())) + "".join(f" {k}:{v}" for k, v in fails.items()))
    print("read_failures=" + str(sum(rfails.values())) + "".join(f" {k}:{v}" for k, v in rfails.items()))
    wrong = 0
    for k, p in enumerate(pics):
        for _ in range(50):
            try:
                if read_file(p) == last[k]:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            wrong += 1
    print(f"wrong_pictures={wrong}")


def torn(mnt, arena):
    base = argb_name(os.path.join(mnt, arena))
    dds = read_file(base + ".dds")
    for ext in (".dds", ".png"):
        p = base + ext
        save(base + ".dds", dds)
        time.sleep(0.3)
        old = read_file(p)
        fd = os.open(p, os.O_RDONLY)
        half = len(old) // 2
        first = os.pread(fd, half, 0)
        err = save(base + ".dds", inverted(dds))
        time.sleep(0.5)  # the kernel has forgotten its pages of the picture
        try:
            rest = b""
            while True:
                b = os.pread(fd, PIECE, half + len(rest))
                if not b:
                    break
                rest += b
            got = "old" if first + rest == old else "MIXED"
        except OSError as e:
            got = ename(e)
        os.close(fd)
        print(f"torn{ext}={got} save={err or 'OK'}")
    save(base + ".dds", dds)


def refused(mnt, arena, n):
    base = argb_name(os.path.join(mnt, arena))
    d = os.path.dirname(base)
    pic = base + ".dds"
    dds = read_file(pic)
    results = {}
    for i in range(int(n)):
        tmp = os.path.join(d, f".goutputstream-{i}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, b"garbage " * 100)
            os.close(fd)
            os.rename(tmp, pic)
            r = "OK"
        except OSError as e:
            r = ename(e)
        results[r] = results.get(r, 0) + 1
    print("refused=" + " ".join(f"{k}:{v}" for k, v in sorted(results.items())))
    results = {}
    for i in range(int(n)):  # abandoned: written, closed, never renamed
        try:
            fd = os.open(os.path.join(d, f".abandoned-{i}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            os.write(fd, b"x")
            os.close(fd)
            r = "OK"
        except OSError as e:
            r = ename(e)
        results[r] = results.get(r, 0) + 1
    print("abandoned=" + " ".join(f"{k}:{v}" for k, v in sorted(results.items())))
    print("valid=" + (save(pic, inverted(dds)) or "OK"))
    tmp = os.path.join(d, ".goutputstream-valid")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, dds)
        os.close(fd)
        os.rename(tmp, pic)
        print("valid_temp=OK")
    except OSError as e:
        print("valid_temp=" + ename(e))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "saves":
        saves(args[0], int(args[1]))
    elif cmd == "torn":
        torn(*args)
    elif cmd == "refused":
        refused(*args)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
