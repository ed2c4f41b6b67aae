#!/usr/bin/env python3
"""mount_cycles.py MODE N PSGFS FILE MNT: mount FILE on MNT and unmount it as soon as the mount
point's device changes, N times, as scripts and automounters do (issue 29 item 3). MODE fg runs
`psgfs -f` in the background; daemon runs `psgfs` and unmounts without waiting for it to
return. Prints one line: "busy B failed F cycles N", where B counts `fusermount3 -u` refused
with EBUSY and F the cycles whose psgfs did not exit 0 or whose mount never appeared. A busy
mount is unmounted again until it goes, so every cycle starts from an empty mount point."""
import os
import subprocess
import sys
import time


def unmount(mnt):
    r = subprocess.run(["fusermount3", "-u", mnt], capture_output=True, text=True)
    return r.returncode == 0, "busy" in r.stderr


def unmount_at_last(mnt):
    for _ in range(200):
        if unmount(mnt)[0]:
            return True
        time.sleep(0.01)
    subprocess.run(["fusermount3", "-u", "-z", mnt], capture_output=True)
    return False


def cycle(mode, psgfs, src, mnt, under):
    args = ["timeout", "20", psgfs, src, mnt] + (["-f"] if mode == "fg" else [])
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 10
    while os.stat(mnt).st_dev == under:
        if time.monotonic() > end or (p.poll() is not None and p.returncode != 0):
            p.kill()
            p.wait()
            return False, False
        time.sleep(0.0005)
    done, busy = unmount(mnt)
    if not done:
        done = unmount_at_last(mnt)
    return done and p.wait(timeout=20) == 0, busy


def main():
    mode, n, psgfs, src, mnt = sys.argv[1], int(sys.argv[2]), *sys.argv[3:6]
    under = os.stat(mnt).st_dev
    busy = failed = 0
    for _ in range(n):
        ok, b = cycle(mode, psgfs, src, mnt, under)
        busy += b
        failed += not ok
    print(f"busy {busy} failed {failed} cycles {n}")


if __name__ == "__main__":
    main()
