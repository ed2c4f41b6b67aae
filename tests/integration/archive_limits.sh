#!/usr/bin/env bash
# Archives within the mount's limits (issue 30, items 3 and 4): the memory a chunked archive
# read whole holds stays near the cache budget (evicted pieces go back to the system), and a
# folder of more archives than descriptors allow keeps working: archives share max_assets
# with the other assets, least recently used closed first, and running out of descriptors is
# EMFILE, never ENOMEM or ENOENT.
. "$(dirname "$0")/lib.sh"
# RSS is measured as in use: meson sets MALLOC_PERTURB_, which makes malloc touch every page
# it hands out or takes back.
unset MALLOC_PERTURB_

# ---- memory: evicted pieces are given back ----
# 600 MB of entries (2,000 RefPack and stored entries and one 100 MB chunked entry) read whole
# by four readers at once at cache_size=32M. Pieces are up to 4 MiB: before the malloc
# threshold was fixed, glibc kept the freed ones (50-51 MB peak RssAnon; 35.5-37 MB after).
arc=$WORK/chunked.big
"$PSGFS_GEN" big --size 500000000 --entries 2000 --chunked 100000000 "$arc"
m=$WORK/m
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
if sanitized || [ "$ASAN" = 1 ]; then echo "# ASan build: peak RssAnon reported, not bounded"; else
	check "chunked archive: peak RssAnon within 32 MiB + 10 MiB ($peak kB)" \
		test "$peak" -le $(((32 + 10) * 1024))
fi

finish
