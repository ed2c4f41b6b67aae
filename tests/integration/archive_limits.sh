#!/usr/bin/env bash
# Archives within the mount's limits (issue 30, items 3 and 4): the memory a chunked archive
# read whole holds stays near the cache budget (evicted pieces go back to the system), and a
# folder of more archives than descriptors allow keeps working: archives share max_assets
# with the other assets, least recently used closed first, and running out of descriptors is
# EMFILE, never ENOMEM or ENOENT.
. "$(dirname "$0")/lib.sh"
: "${MKARC:?}" "${ERRNO_PROBE:?}"
# RSS is measured as in use: meson sets MALLOC_PERTURB_, which makes malloc touch every page
# it hands out or takes back.
unset MALLOC_PERTURB_

# ---- memory: evicted pieces are given back ----
# 600 MB of entries (2,000 RefPack and stored entries and one 100 MB chunked entry) read whole
# by four readers at once at cache_size=32M. Pieces are up to 4 MiB: before the malloc
# threshold was fixed, glibc kept the freed ones (50-51 MB peak RssAnon; 35.5-37 MB after).
# Plain build only: the bound means nothing under ASan (shadow memory, quarantine), and the
# reading itself is archive_mount's and the other tests' in both builds.
m=$WORK/m
if sanitized || [ "$ASAN" = 1 ]; then echo "# ASan build: the 600 MB archive is not read"; else
	arc=$WORK/chunked.big
	"$PSGFS_GEN" big --size 500000000 --entries 2000 --chunked 100000000 "$arc"
	mount_psgfs "$arc" "$m" -o cache_size=32M
	pid=$(pgrep -n -f "psgfs $arc")
	peak_rss "$pid" "$WORK/chunked.rss"
	sampler=$!
	check "every entry of a chunked archive reads whole, four readers at once" bash -c \
		"find '$m' -type f -name '*.dat' -print0 | timeout 300 xargs -0 -n 64 -P 4 cat >/dev/null"
	unmount_psgfs "$m"
	wait "$sampler" || true
	peak=$(cat "$WORK/chunked.rss" 2>/dev/null || echo 0)
	echo "# 600 MB archive read whole at cache_size=32M: peak RssAnon $peak kB"
	check "chunked archive: peak RssAnon within 32 MiB + 10 MiB ($peak kB)" \
		test "$peak" -le $(((32 + 10) * 1024))
fi

# ---- memory: an archive's tables are charged to the budget ----
# 300,000 entries at cache_size=1M held 36 MB after mounting, outside the budget. Tables that
# do not fit what is left of the budget are not indexed, and info.txt and errors.txt say so.
many=$WORK/entries.big
"$PSGFS_GEN" big --size 3000000 --entries 300000 "$many"
mount_psgfs "$many" "$m" -o cache_size=1M
pid=$(pgrep -n -f "psgfs $many")
ls "$m" >/dev/null
r_tab=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status")
echo "# 300,000 entries at cache_size=1M: RssAnon $r_tab kB after mounting and listing"
check "tables over the budget: info.txt says the archive is not indexed, and why" \
	grep -q "^status: cannot mount: not indexed: its tables (300000 entries) need .* KiB, more than the .* KiB left of cache_size" "$m/info.txt"
check "... errors.txt too" grep -q "^not indexed: its tables (300000 entries)" "$m/errors.txt"
check "... info.txt still names the format" grep -qx "format: EA EB v3 archive (.big)" "$m/info.txt"
if sanitized || [ "$ASAN" = 1 ]; then echo "# ASan build: RssAnon reported, not bounded"; else
	check "tables over the budget: RssAnon within 1 MiB + 16 MiB ($r_tab kB)" \
		test "$r_tab" -le $(((1 + 16) * 1024))
fi
unmount_psgfs "$m"
mount_psgfs "$many" "$m"
check "... and at the default budget the archive is indexed" grep -qx "entries: 300000" "$m/info.txt"
unmount_psgfs "$m"

# ---- descriptors: archives share max_assets ----
# 1,100 archives, a loose asset and a loose file in a folder mounted at ulimit -n 1024. Every
# archive kept its descriptor until unmount: after 1,015 were visited, everything failed with
# ENOMEM (loose assets, other archives). Now the least recently used are closed and reopened
# when read again. Under ASan, where each archive opened costs several times more, the same
# shape at a quarter of the scale: 300 archives at ulimit -n 256 (still more archives than
# descriptors, and more descriptors than max_assets).
n_arc=1100 fd_limit=1024
if sanitized || [ "$ASAN" = 1 ]; then n_arc=300 fd_limit=256; fi
D=$WORK/many
mkdir -p "$D"
printf 'hello\n' >"$WORK/notes.txt"
"$MKARC" "$WORK/one.big" data notes.txt "$WORK/notes.txt"
python3 - "$WORK/one.big" "$D" "$n_arc" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
for i in range(int(sys.argv[3])):
    open('%s/a%04d.big' % (sys.argv[2], i), 'wb').write(b)
PY
"$PSGFS_GEN" sky "$D/sky.psg"
printf 'loose\n' >"$D/loose.txt"
# mount_at_limit DIR MNT OPTIONS...: a folder mount whose daemon has $fd_limit descriptors.
mount_at_limit() {
	local dir=$1 mnt=$2
	shift 2
	mkdir -p "$mnt"
	(ulimit -n "$fd_limit" && timeout 30 "$PSGFS" "$dir" "$mnt" "$@")
	MOUNTS+=("$mnt")
	for _ in $(seq 100); do mountpoint -q "$mnt" && return 0; sleep 0.05; done
	return 1
}
fm=$WORK/fm
mount_at_limit "$D" "$fm"
ls "$fm"/*.big/data/notes.txt >"$WORK/many.list" || true
check "$n_arc archives at ulimit -n $fd_limit: all listed" test "$(wc -l <"$WORK/many.list")" = "$n_arc"
check "$n_arc archives at ulimit -n $fd_limit: every archive's entry reads whole" \
	test -z "$(short_reads "$WORK/many.list")"
check "... then a loose asset's view" test "$("$ERRNO_PROBE" read "$fm/sky.psg/info.txt")" = OK
check "... a loose file" cmp -s "$fm/loose.txt" "$D/loose.txt"
check "... the first archives again (their descriptors reopened)" bash -c \
	"cmp -s '$fm/a0000.big/data/notes.txt' '$WORK/notes.txt' &&
	 cmp -s '$fm/a0001.big/data/notes.txt' '$WORK/notes.txt'"
check "... info.txt of an archive closed and reopened says nothing changed" bash -c \
	"! grep -q changed '$fm/a0000.big/info.txt'"
pid=$(pgrep -n -f "psgfs $D")
nfd=$(ls "/proc/$pid/fd" | wc -l)
echo "# daemon holds $nfd descriptors after visiting $n_arc archives (max_assets 128)"
check "descriptors stay within max_assets + a few ($nfd)" test "$nfd" -le $((128 + 32))
unmount_psgfs "$fm"
# More descriptors allowed than the system gives: running out is EMFILE, never ENOMEM/ENOENT.
mount_at_limit "$D" "$fm" -o max_assets=4000
ls "$fm"/*.big/data/notes.txt >/dev/null 2>&1 || true
short_reads "$WORK/many.list" >/dev/null || true
got=$("$ERRNO_PROBE" read "$fm/a$(printf %04d $((n_arc - 1))).big/data/notes.txt")
for f in a0000.big/data/notes.txt sky.psg/info.txt; do
	got="$got $("$ERRNO_PROBE" read "$fm/$f")"
done
echo "# out of descriptors (max_assets=4000, ulimit -n $fd_limit): $got"
check "out of descriptors: OK or EMFILE, never ENOMEM or ENOENT ($got)" bash -c \
	"! grep -qE 'ENOMEM|ENOENT|EIO' <<<'$got'"
unmount_psgfs "$fm"

finish
