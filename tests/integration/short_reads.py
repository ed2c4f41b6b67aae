#!/usr/bin/env python3
"""short_reads.py [--eio-ok] LIST: print the files named in LIST (one path a line) that do not
read exactly their st_size bytes (a read error, a short or long read, or no answer within 20 s),
one a line. One process reads them all: the shell loop it replaces forked a cat, a wc and a
stat per file (tests/integration/lib.sh: short_reads). With --eio-ok, a file whose open or read
fails with EIO (and nothing else) is an answer too, not printed; the counts of files read whole
and of files answering EIO go to stderr as a '# ' line."""
import errno
import os
import signal
import sys


def hang(*_):
    raise TimeoutError("no answer in 20 s")


def reads_whole(path):
    """True when PATH reads exactly st_size bytes, "EIO" when it fails with EIO, else False."""
    got = 0
    try:
        signal.alarm(20)
        with open(path, "rb", buffering=0) as f:
            while chunk := f.read(1 << 20):
                got += len(chunk)
        return got == os.stat(path).st_size
    except OSError as e:
        return "EIO" if e.errno == errno.EIO else False
    except TimeoutError:
        return False
    finally:
        signal.alarm(0)


def main():
    eio_ok = sys.argv[1] == "--eio-ok"
    signal.signal(signal.SIGALRM, hang)
    whole = eio = 0
    with open(sys.argv[-1], encoding="utf-8", errors="surrogateescape") as lst:
        for line in lst:
            path = line.rstrip("\n")
            if not path:
                continue
            r = reads_whole(path)
            if r is True:
                whole += 1
            elif r == "EIO" and eio_ok:
                eio += 1
            else:
                print(path, flush=True)
    if eio_ok:
        print(f"# {whole} files read, {eio} answer EIO", file=sys.stderr)


if __name__ == "__main__":
    main()
