#!/usr/bin/env python3
"""short_reads.py LIST: print the files named in LIST (one path a line) that do not read
exactly their st_size bytes (a read error, a short or long read, or no answer within 20 s),
one a line. One process reads them all: the shell loop it replaces forked a cat, a wc and a
stat per file (tests/integration/lib.sh: short_reads)."""
import os
import signal
import sys


def hang(*_):
    raise TimeoutError("no answer in 20 s")


def reads_whole(path):
    got = 0
    try:
        signal.alarm(20)
        with open(path, "rb", buffering=0) as f:
            while chunk := f.read(1 << 20):
                got += len(chunk)
        return got == os.stat(path).st_size
    except (OSError, TimeoutError):
        return False
    finally:
        signal.alarm(0)


def main():
    signal.signal(signal.SIGALRM, hang)
    with open(sys.argv[1], encoding="utf-8", errors="surrogateescape") as lst:
        for line in lst:
            path = line.rstrip("\n")
            if path and not reads_whole(path):
                print(path, flush=True)


if __name__ == "__main__":
    main()
