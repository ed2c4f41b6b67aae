#!/usr/bin/env bash
# Folder mounts under change and load.
# - errno of each operation, as errno.sh checks for one file: ENOENT, ENOTDIR, EISDIR, EROFS for
#   every write (on folders, pass-through files, links, assets and files inside them), EIO for a
#   view that cannot be decoded; neither the mount nor the source folder changes.
# - Files replaced or deleted while mounted follow the single-file snapshot rules: what was
#   read keeps its bytes, an asset still open keeps serving its original file, nothing is ever
#   derived from the new file (EIO once the old one is closed); a file gone or changed before
#   its first opening is a directory saying why.
# - A folder keeps the listing read at its first visit (later additions are not shown, later
#   deletions stay listed); a folder first visited after a change shows it.
# - 2,000+ assets visited with -o max_assets=16: descriptors and RssAnon stay bounded, and an
#   asset closed long ago reopens with the same inode numbers and bytes.
. "$(dirname "$0")/lib.sh"
: "${ERRNO_PROBE:?}"

# start_fg DIR MNT [opts]: psgfs -f in the background under timeout; sets DPID.
start_fg() {
	local dir=$1 mnt=$2 tp
	shift 2
	mkdir -p "$mnt"
	timeout 600 "$PSGFS" "$dir" "$mnt" -f "$@" &
	tp=$!
	MOUNTS+=("$mnt")
	for _ in $(seq 200); do mountpoint -q "$mnt" && break; sleep 0.05; done
	DPID=$(pgrep -P "$tp")
	mountpoint -q "$mnt" && [ -n "$DPID" ]
}
stat_now() { # NAME: the daemon's counter NAME (stats file written on SIGUSR1)
	rm -f "$WORK/stats.txt"
	kill -USR1 "$DPID"
	for _ in $(seq 200); do
		grep -q '^raw_bytes ' "$WORK/stats.txt" 2>/dev/null && break
		sleep 0.02
	done
	awk -v k="$1" '$1 == k {print $2}' "$WORK/stats.txt"
}
is() { # ERRNO OP PATH [PATH2]
	local want=$1 got
	shift
	got=$(timeout 10 "$ERRNO_PROBE" "$@")
	[ "$got" = "$want" ] || { echo "# $*: got $got, want $want"; return 1; }
}
# eio FILE: reading FILE fails with EIO, the kernel's cached pages dropped first.
eio() {
	local out
	dd if="$1" iflag=nocache count=0 status=none 2>/dev/null || true
	! out=$(timeout 10 cat "$1" 2>&1 >/dev/null) && grep -q 'Input/output error' <<<"$out"
}
# orig_or_eio FILE REF: FILE reads as REF, or fails with EIO (the kernel may have dropped the
# pages it kept, and then the daemon refuses to derive anything new).
orig_or_eio() {
	local out
	if out=$(timeout 10 cat "$1" 2>&1); then
		cmp -s <(printf '%s' "$out") <(printf '%s' "$(cat "$2")")
	else
		grep -q 'Input/output error' <<<"$out"
	fi
}
uncached_cmp() { # FILE REF: FILE read with its cached pages dropped equals REF
	dd if="$1" iflag=nocache count=0 status=none 2>/dev/null || true
	cmp -s "$1" "$2"
}
sig() { (cd "$1" && find . -printf '%p %y %s %l %T@\n' | sort && find . -type f -print0 | sort -z | xargs -0 md5sum); }

# ---- errno under a folder mount ----
E=$WORK/errno
timeout 60 "$PSGFS_GEN" folder --seed 11 --assets 8 --manifest "$WORK/errno.tsv" "$E"
# An arena whose RenderOptiMeshData's dictionary size says 8 bytes: its decoded view is EIO.
"$PSGFS_GEN" sky "$E/bad.psg"
ds=$((16#$(od -An -tx1 -j $((0x30)) -N4 "$E/bad.psg" | tr -d ' \n')))
oi=$("$PSGFS_TOOL" ls "$E/bad.psg" objects | sed -n 's/.*\t0*\([0-9][0-9]*\)\.RenderOptiMeshData\.bin$/\1/p' | sed -n 1p)
printf '\x00\x00\x00\x08' | dd of="$E/bad.psg" bs=1 seek=$((ds + 24 * oi + 8)) conv=notrunc status=none
ln -s readme.txt "$E/readme.lnk"
sig "$E" >"$WORK/errno.sig"
m=$WORK/me
mount_psgfs "$E" "$m"
J=$m/data/content/junk
dir=$m/data/content            # a folder
plain=$m/readme.txt            # a pass-through file
link=$m/readme.lnk             # a link (to the pass-through file)
asset=$J/SHOUTY.PSG            # an asset directory
inner=$asset/info.txt          # a file inside it
obj=$(ls -d "$asset"/objects/*.bin | sed -n 1p)

check "baseline: stat, read, readdir are OK" bash -c \
	"[ \$('$ERRNO_PROBE' read '$plain') = OK ] && [ \$('$ERRNO_PROBE' read '$inner') = OK ] && [ \$('$ERRNO_PROBE' readdir '$dir') = OK ] && [ \$('$ERRNO_PROBE' readdir '$asset') = OK ]"
check "ENOENT: a missing name at the root" is ENOENT stat "$m/nope"
check "ENOENT: again (negative entry cached)" is ENOENT stat "$m/nope"
check "ENOENT: a missing name in a folder" is ENOENT lstat "$dir/nope.psg"
check "ENOENT: a missing name in an asset" is ENOENT stat "$asset/nope.txt"
check "ENOENT: open of a missing file in a folder" is ENOENT open_r "$dir/missing.txt"
check "ENOENT: opendir of a missing folder" is ENOENT readdir "$m/nodir"
check "ENOENT: a name under a missing folder" is ENOENT stat "$m/nodir/x"
check "ENOTDIR: a pass-through file as a folder" is ENOTDIR stat "$plain/x"
check "ENOTDIR: a file inside an asset as a folder" is ENOTDIR open_r "$inner/x"
check "ENOTDIR: open O_DIRECTORY of a pass-through file" is ENOTDIR open_dir "$plain"
check "ENOTDIR: opendir of a file inside an asset" is ENOTDIR readdir "$obj"
check "EISDIR: read of a folder" is EISDIR read "$dir"
check "EISDIR: read of the root" is EISDIR read "$m"
check "EISDIR: read of an asset directory" is EISDIR read "$asset"
check "EISDIR: open O_WRONLY of a folder" is EISDIR open_w "$dir"
for target in plain inner link; do
	p=${!target}
	check "EROFS: open O_WRONLY ($target)" is EROFS open_w "$p"
	check "EROFS: open O_RDWR ($target)" is EROFS open_rw "$p"
	check "EROFS: open O_TRUNC ($target)" is EROFS open_trunc "$p"
	check "EROFS: access(W_OK) ($target)" is EROFS access_w "$p"
	check "EROFS: truncate ($target)" is EROFS truncate "$p"
	check "EROFS: unlink ($target)" is EROFS unlink "$p"
	check "EROFS: rename ($target)" is EROFS rename "$p" "$m/renamed"
	check "EROFS: link ($target)" is EROFS link "$p" "$m/hard"
	check "EROFS: chown ($target)" is EROFS chown "$p"
	check "EROFS: utime ($target)" is EROFS utime "$p"
	check "EROFS: setxattr ($target)" is EROFS setxattr "$p"
	check "EROFS: removexattr ($target)" is EROFS removexattr "$p"
done
check "EROFS: chmod (plain)" is EROFS chmod "$plain"
check "EROFS: chmod (inner)" is EROFS chmod "$inner"
for target in dir asset; do
	p=${!target}
	check "EROFS: open O_CREAT of a new name ($target)" is EROFS open_creat "$p/new.txt"
	check "EROFS: mkdir ($target)" is EROFS mkdir "$p/newdir"
	check "EROFS: rmdir ($target)" is EROFS rmdir "$p"
	check "EROFS: rename ($target)" is EROFS rename "$p" "$m/moved"
	check "EROFS: symlink ($target)" is EROFS symlink "$p/link" x
	check "EROFS: mknod ($target)" is EROFS mknod "$p/fifo"
	check "EROFS: chmod ($target)" is EROFS chmod "$p"
	check "EROFS: utime ($target)" is EROFS utime "$p"
done
check "EROFS: open O_CREAT of an existing pass-through file" is EROFS open_creat "$plain"
check "EROFS: mkdir at the root" is EROFS mkdir "$m/newdir"
name=$(printf '%04d.RenderOptiMeshData' "$oi")
check "EIO: stat of a view that cannot be decoded" is EIO stat "$m/bad.psg/objects/$name.txt"
check "EIO: read of it" is EIO read "$m/bad.psg/objects/$name.txt"
check "EIO: again (remembered)" is EIO read "$m/bad.psg/objects/$name.txt"
check "   ... its raw .bin reads (8 bytes)" test "$(stat -c %s "$m/bad.psg/objects/$name.bin")" = 8
check "   ... errors.txt names the object" grep -q "object $oi (RenderOptiMeshData)" "$m/bad.psg/errors.txt"
check "the mounted tree is unchanged after all that" bash -c \
	"timeout 60 '$PSGFS_TOOL' extract '$E' '$WORK/eex' >/dev/null 2>&1; diff -r --no-dereference -x bad.psg '$WORK/eex' '$m'"
check "the source folder is unchanged" cmp -s "$WORK/errno.sig" <(sig "$E")
unmount_psgfs "$m"

# ---- files replaced or deleted while mounted (-o max_assets=1: opening one closes another) ----
S=$WORK/snap
mkdir -p "$S"
for x in a b e; do "$PSGFS_GEN" sky --shuffle-dict $((RANDOM % 50 + 1)) "$S/$x.psg"; done
"$PSGFS_GEN" psk --seed 4 "$S/c.psk"
"$PSGFS_GEN" sky "$S/d.psg"
echo "pass-through one" >"$S/p.txt"
echo "pass-through two" >"$S/q.txt"
"$PSGFS_GEN" sky --shuffle-dict 77 "$WORK/other.psg"
mkdir -p "$S/live" "$S/later"
"$PSGFS_GEN" psk --seed 5 "$S/live/x.psk"
"$PSGFS_GEN" psk --seed 6 "$S/live/y.psk"
for x in a b; do "$PSGFS_TOOL" extract "$S/$x.psg" "$WORK/ref.$x" >/dev/null; done
cp "$S/p.txt" "$WORK/ref.p"
sm=$WORK/ms
start_fg "$S" "$sm" -o max_assets=1 -o stats="$WORK/stats.txt"
ls "$sm" >/dev/null # the folder's listing: the snapshot every later step is held to
opens() { stat_now asset_opens; }
use_c() { # read from c.psk afresh, which opens it and so closes whatever was open
	dd if="$sm/c.psk/info.txt" iflag=nocache count=0 status=none 2>/dev/null || true
	cat "$sm/c.psk/info.txt" >/dev/null
}

# An asset replaced while it is open keeps serving the file it opened.
cat "$sm/a.psg/header.txt" >/dev/null
cp "$WORK/other.psg" "$S/a.new" && mv "$S/a.new" "$S/a.psg"
check "replaced while open: a view read before keeps its bytes" cmp -s "$sm/a.psg/header.txt" "$WORK/ref.a/header.txt"
check "replaced while open: a view not read before is the original file's" \
	cmp -s "$sm/a.psg/dictionary.tsv" "$WORK/ref.a/dictionary.tsv"
o1=$(opens)
cat "$sm/b.psg/header.txt" >/dev/null # opens b, closes a (max_assets=1)
check "   ... opening another asset closed it (asset_opens $o1 -> $(opens))" test "$(opens)" -gt "$o1"
check "replaced, then closed: a view read before has its bytes (page cache) or is EIO" \
	orig_or_eio "$sm/a.psg/header.txt" "$WORK/ref.a/header.txt"
check "replaced, then closed: a view never read is EIO, not the new file's" eio "$sm/a.psg/toc.tsv"
check "replaced, then closed: a view read before, its pages dropped, is EIO" eio "$sm/a.psg/header.txt"

# An asset deleted while open keeps serving (the daemon holds the file) until it is closed.
rm "$S/b.psg"
# (material.txt aside: a folder mount also looks for 0x<GUID> arenas, so it says more than the
# single-file extract)
check "deleted while open: every file still reads whole and identical" \
	bash -c "diff -r -x material.txt '$sm/b.psg' '$WORK/ref.b' >/dev/null && cat '$sm'/b.psg/materials/*/material.txt >/dev/null"
use_c # closes b
check "deleted, then closed: a view is EIO" eio "$sm/b.psg/dictionary.tsv"
check "deleted, then closed: the entry stays listed" bash -c "ls '$sm' | grep -qx b.psg"

# Pass-through files: served from the file opened; once closed, never from another file.
check "pass-through: reads its bytes" cmp -s "$sm/p.txt" "$WORK/ref.p"
use_c # closes p.txt
echo "a new text, longer than the old one" >"$S/p.new" && mv "$S/p.new" "$S/p.txt"
check "pass-through replaced, then closed: the old bytes (pages the kernel kept) or EIO" \
	orig_or_eio "$sm/p.txt" "$WORK/ref.p"
check "pass-through replaced, then closed: read afresh is EIO" eio "$sm/p.txt"
check "pass-through replaced: its size is still the listed one" test "$(stat -c %s "$sm/p.txt")" = "$(stat -c %s "$WORK/ref.p")"
rm "$S/q.txt"
check "pass-through deleted before its first read: EIO, still listed" bash -c \
	"ls '$sm' | grep -qx q.txt && ! cat '$sm/q.txt' >/dev/null 2>&1"

# Gone or changed before its first opening: a directory that says why.
rm "$S/d.psg"
check "deleted before its first opening: info.txt says why" \
	grep -qx 'status: cannot mount: cannot open: No such file or directory' "$sm/d.psg/info.txt"
cp "$WORK/other.psg" "$S/e.new" && mv "$S/e.new" "$S/e.psg"
check "replaced before its first opening: info.txt says why" \
	grep -qx 'status: cannot mount: changed since its folder was listed' "$sm/e.psg/info.txt"
check "after all that the mount is alive and other assets read" bash -c \
	"mountpoint -q '$sm' && grep -q '^format: psk' '$sm/c.psk/info.txt'"

# ---- folders changed while mounted: the listing read at the first visit is kept ----
ls "$sm/live" >/dev/null # first visit
"$PSGFS_GEN" psk --seed 7 "$S/live/new.psk"
rm "$S/live/y.psk"
"$PSGFS_GEN" psk --seed 8 "$S/later/z.psk"
# The kernel forgets its dentries and pages (root only), so the daemon answers what follows:
# the mount's dentries and inodes dropped (2) take their cached listings and pages with them.
# (Not 3 after a sync: that flushed and dropped the whole machine's page cache, seconds of
# system time charged to this test, for inodes of other file systems.)
[ -w /proc/sys/vm/drop_caches ] && echo 2 >/proc/sys/vm/drop_caches
check "a file added after the first visit is not shown" bash -c "! ls '$sm/live' | grep -qx new.psk"
check "   ... and is not found" is ENOENT stat "$sm/live/new.psk"
check "a file deleted after the first visit stays listed" bash -c "ls '$sm/live' | grep -qx y.psk"
check "   ... and, never opened, says why" grep -q 'No such file or directory' "$sm/live/y.psk/info.txt"
check "a folder first visited after a change shows it" test -d "$sm/later/z.psk/chunks"
unmount_psgfs "$sm"

# ---- 2,000+ assets with -o max_assets=16: bounded descriptors and memory ----
B=$WORK/big
timeout 300 "$PSGFS_GEN" folder --seed 3 --assets 2100 --manifest "$WORK/big.tsv" "$B"
awk -F'\t' '$3 == "asset" {print $1}' "$WORK/big.tsv" >"$WORK/big.assets"
n_big=$(wc -l <"$WORK/big.assets")
bm=$WORK/mb
start_fg "$B" "$bm" -o max_assets=16 -o cache_size=8M -o stats="$WORK/stats.txt"
first_asset=$(head -1 "$WORK/big.assets")
ino0=$(stat -c %i "$bm/$first_asset/info.txt")
fd0=$(ls "/proc/$DPID/fd" | wc -l)
(
	# No process per sample (an ls, a wc, an awk, a mv and a sleep 20 times a second were
	# seconds of CPU): the descriptors are counted by a glob, RssAnon read by bash, the file
	# renamed into place only when a peak grows, the pause a read timing out on an idle pipe.
	fmax=0 rmax=0
	exec {tick}<> <(:)
	shopt -s nullglob
	echo "$fmax $rmax" >"$WORK/sampled"
	while kill -0 "$DPID" 2>/dev/null; do
		fds=("/proc/$DPID/fd/"*)
		f=${#fds[@]} r=0
		while read -r k v _; do
			[ "$k" = RssAnon: ] && r=$v && break
		done 2>/dev/null <"/proc/$DPID/status" || true
		if [ "$f" -gt "$fmax" ] || [ "$r" -gt "$rmax" ]; then
			[ "$f" -gt "$fmax" ] && fmax=$f
			[ "$r" -gt "$rmax" ] && rmax=$r
			# renamed into place: the reader below must never see the file truncated
			echo "$fmax $rmax" >"$WORK/sampled.new" && mv -f "$WORK/sampled.new" "$WORK/sampled"
		fi
		read -rt 0.05 -u "$tick" _ || true
	done
) &
sampler=$!
(cd "$bm" && sed 's|$|/info.txt|' "$WORK/big.assets" | tr '\n' '\0' | xargs -0 cat) >/dev/null
# Every asset's tree listed and its names.txt read: the whole mount in the plain build, where
# RssAnon is bounded; under ASan+UBSan (RssAnon not bounded) every 8th asset's, in manifest
# order, the same code path 2,100 times over (tests/README.md).
if ! sanitized; then
	timeout 300 grep -r --include=names.txt -c BONE "$bm" >/dev/null || true
else
	(cd "$bm" && awk 'NR % 8 == 1' "$WORK/big.assets" | tr '\n' '\0' |
		timeout 300 xargs -0 grep -r --include=names.txt -c BONE) >/dev/null || true
fi
read -r fmax rmax <"$WORK/sampled"
opened=$(stat_now asset_opens)
check "every asset was opened ($opened opens for $n_big assets)" test "$opened" -ge "$n_big"
check "open descriptors stayed bounded: at most $fd0 at rest + 16 assets + 4 ($fmax)" \
	test "$fmax" -le $((fd0 + 20))
if [ "$ASAN" = 1 ]; then # ASan's shadow memory and quarantine are not ours
	echo "# peak RssAnon $rmax kB (not checked: AddressSanitizer build)"
else
	check "peak RssAnon stayed within the 8 MiB cache + 32 MiB ($rmax kB)" test "$rmax" -le $(((8 + 32) * 1024))
fi
check "the cache evicted ($(stat_now cache_evictions) evictions)" test "$(stat_now cache_evictions)" -gt 0
check "an asset closed long ago: the same inode number" test "$(stat -c %i "$bm/$first_asset/info.txt")" = "$ino0"
check "   ... and the same bytes, read afresh" uncached_cmp "$bm/$first_asset/info.txt" \
	<("$PSGFS_TOOL" cat "$B/$first_asset" info.txt)
unmount_psgfs "$bm"
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
finish
