#!/usr/bin/env bash
# Unmounting right after mounting (issue 29 item 3): `fusermount3 -u` as soon as the mount
# point's device changes never finds the mount busy, in the foreground or daemonised, and
# psgfs exits 0 each time. Nothing of psgfs may hold the mount to find out that it works (a
# stat of the mount point did, and failed 4 to 8 unmounts in 40).
. "$(dirname "$0")/lib.sh"

sky=$WORK/sky.psg
"$PSGFS_GEN" sky "$sky"
mp=$WORK/mp
mkdir -p "$mp"
MOUNTS+=("$mp")

# cycles MODE N: mount and unmount N times; no EBUSY, no failed cycle.
cycles() {
	local out
	out=$(timeout 60 python3 "$(dirname "$0")/mount_cycles.py" "$1" "$2" "$PSGFS" "$sky" "$mp")
	echo "# $1: $out"
	[ "$out" = "busy 0 failed 0 cycles $2" ]
}

# Each cycle starts a daemon: the sanitized build, five times slower to start, samples 15.
n=40
sanitized && n=15
check "foreground: $n mounts unmounted at once, none busy" cycles fg $n
check "daemonised: $n mounts unmounted before psgfs returns, none busy" cycles daemon $n
check "nothing left mounted" bash -c "! mountpoint -q '$mp'"
finish
