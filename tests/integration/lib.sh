# Shared helpers for integration tests: real FUSE mounts, always under timeout, always
# unmounted by a trap. Source this file; set -euo pipefail is on.
set -euo pipefail
export LC_ALL=C
: "${PSGFS:?}" "${PSGFS_GEN:?}" "${PSGFS_TOOL:?}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/psgfs-it.XXXXXX")
MOUNTS=()
fails=0
passes=0

cleanup() {
	for m in "${MOUNTS[@]}"; do
		fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# ASAN is 1 when the daemon under test is an AddressSanitizer build: its shadow memory and
# quarantine are not ours, so memory bounds are reported, not checked. The ldd output is taken
# whole: under pipefail, `ldd | grep -q` fails at random when grep exits before ldd is done.
# Meson says so (PSGFS_SANITIZE); a gcc-built daemon also shows the runtime in ldd (clang links
# it into the program).
ASAN=0
case "${PSGFS_SANITIZE:-none}" in *address*) ASAN=1 ;; esac
case "$(ldd "$PSGFS" 2>/dev/null)" in *libasan*) ASAN=1 ;; esac

# mount FILE MNT [psgfs options...]: mounts in the background daemon mode, waits until ready.
mount_psgfs() {
	local file=$1 mnt=$2
	shift 2
	mkdir -p "$mnt"
	timeout 30 "$PSGFS" "$file" "$mnt" "$@"
	MOUNTS+=("$mnt")
	for _ in $(seq 100); do
		mountpoint -q "$mnt" && return 0
		sleep 0.05
	done
	echo "mount of $file did not appear" >&2
	return 1
}

unmount_psgfs() {
	timeout 30 fusermount3 -u "$1"
}

ok() {
	passes=$((passes + 1))
	echo "ok - $*"
}

not_ok() {
	fails=$((fails + 1))
	echo "not ok - $*"
}

# check DESCRIPTION COMMAND...: a test step that must succeed.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# sanitized: true in the ASan+UBSan build (meson passes PSGFS_SANITIZE=b_sanitize there;
# "none" or unset in the plain build). Checks whose cost is in third-party tools or in many
# repetitions of one code path run whole in one build and sampled in the other; which one is
# written next to the check (tests/README.md).
sanitized() {
	[ "${PSGFS_SANITIZE:-none}" != none ]
}

# all_read_whole DIR: every file under DIR reads exactly its st_size bytes (one process, no
# fork per file: dir_manifest hashes each file and says EIO on a short or failed read).
all_read_whole() {
	local out=$WORK/manifest.$RANDOM
	"$DIR_MANIFEST" "$1" > "$out" || return 1
	! awk -F'\t' '$3 == "EIO" { print "# not read whole: " $1; bad = 1 }
		END { exit !bad }' "$out" >&2
}

# short_reads [--eio-ok] LIST: print the files named in LIST (a path a line) that do not read
# exactly their st_size bytes (error, short read, or no answer in 20 s); one process for all of
# them. --eio-ok: a file failing with EIO is an answer too (counts on stderr).
short_reads() {
	python3 "$(dirname "${BASH_SOURCE[0]}")/short_reads.py" "$@"
}

# all_files_read_or_eio DIR: every file under DIR reads exactly st_size bytes or fails with
# EIO (a damaged source). Prints the counts; returns 1 on any other outcome (other errno,
# short read, hang). One reader for all the files (short_reads.py --eio-ok).
all_files_read_or_eio() {
	local list=$WORK/files.$RANDOM bad
	find "$1" -type f >"$list"
	bad=$(short_reads --eio-ok "$list" 2>"$list.counts") || return 1
	echo "$(sed "s|^# |# $1: |" "$list.counts")"
	[ -z "$bad" ] || { sed 's/^/not read whole nor EIO: /' <<<"$bad" >&2; return 1; }
}

finish() {
	echo "$passes passed, $fails failed"
	[ "$fails" -eq 0 ]
}

# Compare a mounted tree with psgfs-tool's view of the same file: names, sizes, bytes.
same_as_tool() {
	local file=$1 mnt=$2 ex=$WORK/extract.$RANDOM
	"$PSGFS_TOOL" extract "$file" "$ex" >/dev/null 2>&1 || true
	diff -r "$ex" "$mnt" >/dev/null
}

# peak_rss PID FILE: in the background, keep the peak RssAnon (kB) of PID in FILE until PID
# ends; the caller waits for $! after unmounting.
peak_rss() {
	# (No process per sample: an awk and a sleep 20 times a second were the sampler's CPU. The
	# pause is a read timing out on a pipe nobody writes to.)
	(
		local k v r rmax=0 tick
		exec {tick}<> <(:)
		while kill -0 "$1" 2>/dev/null; do
			r=0
			while read -r k v _; do
				[ "$k" = RssAnon: ] && r=$v && break
			done 2>/dev/null <"/proc/$1/status" || true
			[ "$r" -gt "$rmax" ] && rmax=$r && echo "$rmax" >"$2"
			read -rt 0.05 -u "$tick" _ || true
		done
	) &
}
