#!/usr/bin/env bash
# psgfs-tool pack (docs/archives.md "Writing archives"): generated archives extracted and packed
# back hold the same entries, byte for byte, in every --format x --compress; a packed archive
# mounts; the game folder's archives round trip; every refusal is one line naming the file,
# with its own exit code, leaves an existing OUT untouched and no temporary file behind.
. "$(dirname "$0")/lib.sh"

T=$PSGFS_TOOL
# entries of an archive: path, size, sha256 of every file (the archive's own info.txt and
# errors.txt left out: they describe the container)
entries() { "$T" manifest --assets files "$1" | grep -v -e '^info\.txt	' -e '^errors\.txt	'; }
# unpack ARCHIVE DIR: the loose files only
unpack() {
	"$T" extract "$1" "$2" >/dev/null && rm -f "$2/info.txt" "$2/errors.txt"
}
pack_q() { "$T" pack "$@" >/dev/null; }
# same_tree DIR ARCHIVE: the archive's extract is DIR's files
same_tree() {
	local x=$WORK/st.$RANDOM
	unpack "$2" "$x" && diff -r "$1" "$x" >/dev/null
}
magic() { head -c 4 "$1" | od -An -tx1 | tr -d ' \n'; }
left_over() { find "$1" -maxdepth 1 -name '.*.big.*' | grep -q .; }
no_temp_left() { ! left_over "$WORK"; }
in_file() { grep -a -q "$1" "$2"; }

"$PSGFS_GEN" big --seed 5 "$WORK/orig.big"
unpack "$WORK/orig.big" "$WORK/src"
entries "$WORK/orig.big" > "$WORK/orig.m"
check "the original has entries" [ "$(grep -c '	[0-9a-f]\{64\}$' "$WORK/orig.m")" -ge 30 ]

for f in eb bigf big4; do
	for c in none refpack chunked; do
		[ "$f" != eb ] && [ "$c" = chunked ] && continue
		out=$WORK/p-$f-$c.big
		if "$T" pack --format "$f" --compress "$c" --min-size 1 "$WORK/src" "$out" >/dev/null; then
			entries "$out" > "$out.m"
			check "pack --format $f --compress $c: same entries" cmp -s "$WORK/orig.m" "$out.m"
		else
			not_ok "pack --format $f --compress $c"
		fi
	done
done
check "--format eb: EB v3 magic" [ "$(magic "$WORK/p-eb-none.big")" = 45420003 ]
check "--format bigf: BIGF magic" [ "$(magic "$WORK/p-bigf-none.big")" = 42494746 ]
check "--format big4: BIG4 magic" [ "$(magic "$WORK/p-big4-none.big")" = 42494734 ]
# declared order: flags 0x20 (by name), then the paths in bytewise order
check "--format eb: sort flag 0x20" [ "$(od -An -tx1 -j8 -N2 "$WORK/p-eb-none.big" | tr -d ' ')" = 0020 ]
check "compression shrinks" [ "$(stat -c %s "$WORK/p-eb-refpack.big")" -lt \
	"$(stat -c %s "$WORK/p-eb-none.big")" ]
check "--compress chunked: chunkref entries" in_file chunkref "$WORK/p-eb-chunked.big"
"$T" pack --platform x360 --wide "$WORK/src" "$WORK/wide.big" >/dev/null &&
	entries "$WORK/wide.big" > "$WORK/wide.m"
check "--wide --platform x360: same entries" cmp -s "$WORK/orig.m" "$WORK/wide.m"
check "--wide: flag bit 0" [ "$(od -An -tx1 -j9 -N1 "$WORK/wide.big" | tr -d ' ')" = 21 ]
"$T" pack --min-size 1 "$WORK/src" "$WORK/again.big" >/dev/null
check "same folder, same bytes" cmp -s "$WORK/p-eb-refpack.big" "$WORK/again.big"
# an empty entry is stored (its table row: stored size 0 = as is)
check "the empty entry is listed" grep -q '	0	' "$WORK/orig.m"

# an empty folder is an archive of no entries
mkdir "$WORK/empty"
for f in eb bigf big4; do
	check "--format $f: an empty folder packs" pack_q --format $f "$WORK/empty" "$WORK/e-$f.big"
	check "--format $f: an empty folder reads back empty" same_tree "$WORK/empty" "$WORK/e-$f.big"
done

# a packed archive mounts, and shows the same files as the original's extract
mkdir "$WORK/mnt"
if mount_psgfs "$WORK/p-eb-chunked.big" "$WORK/mnt" -o assets=files; then
	mkdir "$WORK/view" && cp -r "$WORK/mnt/data" "$WORK/view/"
	check "mounted packed archive: same files as the source" diff -r "$WORK/src" "$WORK/view"
	unmount_psgfs "$WORK/mnt"
else
	not_ok "mount the packed archive"
fi

# the game folder's archives (EB v3 and the BIGF music bank) round trip; world.big is left out:
# extract shows the stream collections inside it as folders (the .psf beside its assets), so
# its extract is not the archive's loose entries
"$PSGFS_GEN" game "$WORK/game" >/dev/null
for a in "$WORK/game/data/content/createacharacter.big" "$WORK/game/data/audio/music.big"; do
	case $(magic "$a") in 42494746) fmt=bigf ;; *) fmt=eb ;; esac
	d=$WORK/gx.$RANDOM
	unpack "$a" "$d"
	entries "$a" > "$d.m1"
	"$T" pack --format $fmt "$d" "$d.big" >/dev/null && entries "$d.big" > "$d.m2"
	check "game ${a#"$WORK"/game/} ($fmt): same entries" cmp -s "$d.m1" "$d.m2"
done
# --like: every archive of the game folder (those holding stream collections too: without DIR,
# no extract needed) is reproduced byte for byte; those of loose entries also from their extract
for a in "$WORK"/game/data/*/*.big; do
	check "--like game ${a#"$WORK"/game/}: the same file" pack_q --like "$a" "$WORK/gl.big"
	check "--like game ${a#"$WORK"/game/}: byte for byte" cmp -s "$a" "$WORK/gl.big"
	# extract shows a stream collection (.psf/.xsf entry) as a folder: not its loose entries
	"$T" find --assets files "$a" >"$WORK/gl.find"
	grep -q '\.[px]sf	' "$WORK/gl.find" && continue
	d=$WORK/gl.$RANDOM
	unpack "$a" "$d"
	check "--like game ${a#"$WORK"/game/} of its extract: packs" pack_q --like "$a" "$d" "$WORK/gl.big"
	check "--like game ${a#"$WORK"/game/} of its extract: byte for byte" cmp -s "$a" "$WORK/gl.big"
done

# ---- --like ORIG.big: the original's header, tables, order and methods ----
be32() { od -An -tu4 --endian=big -j "$2" -N4 "$1" | tr -d ' '; }
# names_of FILE: the names and folders tables (offset and size from the header)
# (BIGF/BIG4: the count, the directory end and the directory with its offsets and sizes zeroed)
names_of() {
	case $(magic "$1") in
	4249474[67] | 42494734) python3 - "$1" <<-'PY'
		import struct, sys
		b = open(sys.argv[1], "rb").read()
		n, end = struct.unpack(">II", b[8:16])
		d, at = bytearray(b[8:end]), 8
		for _ in range(n):
		    d[at:at + 8] = bytes(8)
		    at = d.index(0, at + 8) + 1
		sys.stdout.buffer.write(bytes(d))
		PY
		;;
	*) dd if="$1" iflag=skip_bytes,count_bytes bs=64K skip="$(be32 "$1" 12)" \
		count="$(be32 "$1" 16)" status=none ;;
	esac
}
i=0
for v in game stored refpack chunkref chunkzip chunklzx wide bigf big4 sk8 x360 rpD1; do
	i=$((i + 1))
	o=$WORK/like-$v.big
	case $v in
	wide) "$PSGFS_GEN" big --seed 7 --wide --shift 11 --platform x360 "$o" ;;
	sk8) "$PSGFS_GEN" big --variant chunkzip --chunk-style sk8 --shift 0 "$o" ;;
	x360) "$PSGFS_GEN" big --platform x360 --variant chunklzx "$o" ;;
	rpD1) "$PSGFS_GEN" big --variant refpack --refpack-header D1 "$o" ;;
	*) "$PSGFS_GEN" big --variant "$v" --seed "$i" "$o" ;;
	esac
	unpack "$o" "$WORK/lx-$v"
	check "--like $v: packs" pack_q --like "$o" "$WORK/lx-$v" "$WORK/l-$v.big"
	check "--like $v: extract then pack gives the same file" cmp -s "$o" "$WORK/l-$v.big"
done
cp -r "$WORK/lx-game" "$WORK/lx-game-orig"
# one entry changed (the first in the data, so every later one moves), one grown at the end
for v in game chunkzip wide bigf big4 sk8; do
	d=$WORK/lx-$v
	first=$(find "$d" -type f -size +1k | sort | head -n 1)
	head -c 5000 /dev/urandom > "$first"
	last=$(find "$d" -type f -name '*.psa' | sort | tail -n 1)
	printf 'tail' >> "$last"
	check "--like $v, entries changed: packs" pack_q --like "$WORK/like-$v.big" "$d" "$WORK/c-$v.big"
	check "--like $v, entries changed: reads back as the folder" same_tree "$d" "$WORK/c-$v.big"
	names_of "$WORK/like-$v.big" > "$WORK/n1" || true
	names_of "$WORK/c-$v.big" > "$WORK/n2" || true
	check "--like $v, entries changed: same names and folders" cmp -s "$WORK/n1" "$WORK/n2"
	case $v in
	big*) check "--like $v, entries changed: same magic" [ "$(magic "$WORK/like-$v.big")" = \
		"$(magic "$WORK/c-$v.big")" ] ;;
	*) check "--like $v, entries changed: same flags and shift" [ \
		"$(od -An -tx1 -j8 -N3 "$WORK/like-$v.big")" = "$(od -An -tx1 -j8 -N3 "$WORK/c-$v.big")" ] ;;
	esac
done

# BIGF/BIG4 have no method field: a changed stored entry whose bytes start like a RefPack stream
# is written as RefPack (stored, every reader would decode it)
mkdir -p "$WORK/rpov/data/content/createacharacter"
printf '\x10\xfb\x00\x00\x05hello, not RefPack at all' > "$WORK/rpov/data/content/createacharacter/catalog.xml"
cp -r "$WORK/src" "$WORK/rpm" && cp -r "$WORK/rpov/." "$WORK/rpm/"
check "--like bigf, a stored file that looks like RefPack: packs" pack_q --like "$WORK/p-bigf-none.big" \
	--overlay "$WORK/rpov" "$WORK/rp.big"
check "--like bigf, a stored file that looks like RefPack: reads back as it" same_tree "$WORK/rpm" "$WORK/rp.big"

# ---- --overlay DIR2: its files replace DIR's (or ORIG's) at the same path, or are added ----
mkdir -p "$WORK/ov/data/content/createacharacter"
echo "new catalog" > "$WORK/ov/data/content/createacharacter/catalog.xml"
echo "added" > "$WORK/ov/added.txt"
cp -r "$WORK/src" "$WORK/merged" && cp -r "$WORK/ov/." "$WORK/merged/"
check "--overlay: packs" pack_q --overlay "$WORK/ov" "$WORK/src" "$WORK/o1.big"
check "--overlay: DIR's files with DIR2's over them" same_tree "$WORK/merged" "$WORK/o1.big"
check "--like without DIR: ORIG itself" pack_q --like "$WORK/like-game.big" "$WORK/o2.big"
check "--like without DIR: the same file" cmp -s "$WORK/like-game.big" "$WORK/o2.big"
rm "$WORK/ov/added.txt"
rm -rf "$WORK/merged" && cp -r "$WORK/lx-game-orig" "$WORK/merged" && cp -r "$WORK/ov/." "$WORK/merged/"
# the overlay's catalog is shorter: the entries after it (the empty one at ORIG's end) move
check "--like --overlay: packs" pack_q --like "$WORK/like-game.big" --overlay "$WORK/ov" "$WORK/o3.big"
check "--like --overlay: ORIG's entries with DIR2's over them" same_tree "$WORK/merged" "$WORK/o3.big"
names_of "$WORK/like-game.big" > "$WORK/n1" || true
names_of "$WORK/o3.big" > "$WORK/n2" || true
check "--like --overlay: same names and folders" cmp -s "$WORK/n1" "$WORK/n2"
check "--like --overlay: smaller than ORIG" [ "$(stat -c %s "$WORK/o3.big")" -lt \
	"$(stat -c %s "$WORK/like-game.big")" ]

# ---- refusals: one line naming the file, a distinct exit code, OUT untouched ----
printf 'keep me' > "$WORK/keep.big"
cp "$WORK/keep.big" "$WORK/keep.ref"
one_line_naming() { [ "$(wc -l < "$WORK/err")" = 1 ] && grep -qF -- "$1" "$WORK/err"; }
# refuse CODE WHAT DIR [VAR=VALUE|OPTION...]: pack DIR over keep.big fails with CODE and a
# line naming WHAT
refuse() {
	local code=$1 what=$2 dir=$3 rc=0
	cp "$WORK/keep.ref" "$WORK/keep.big"
	shift 3
	local envs=() opts=() a
	for a in "$@"; do
		case $a in PSGFS_*) envs+=("$a") ;; *) opts+=("$a") ;; esac
	done
	env "${envs[@]}" "$T" pack "${opts[@]}" "$dir" "$WORK/keep.big" > /dev/null 2> "$WORK/err" ||
		rc=$?
	check "refuse $what: exit $code (got $rc)" [ "$rc" = "$code" ]
	check "refuse $what: one line naming it" one_line_naming "$what"
	check "refuse $what: OUT untouched" cmp -s "$WORK/keep.big" "$WORK/keep.ref"
	check "refuse $what: no temporary file left" no_temp_left
}
mk() { rm -rf "$WORK/r" && mkdir -p "$WORK/r/sub" && echo data > "$WORK/r/sub/a.txt"; }

mk && ln -s /etc/passwd "$WORK/r/sub/out"
refuse 8 "sub/out" "$WORK/r"
mk && ln -s a.txt "$WORK/r/sub/in"
refuse 8 "sub/in" "$WORK/r"
mk && mkfifo "$WORK/r/sub/fifo"
refuse 8 "sub/fifo" "$WORK/r"
mk && echo x > "$WORK/r/sub/$(printf 'bad\001name')"
refuse 6 'sub/bad\x01name' "$WORK/r"
mk && echo x > "$WORK/r/sub/$(printf 'new\nline')"
refuse 6 'sub/new\x0aline' "$WORK/r"
mk && echo x > "$WORK/r/sub/back\\slash"
refuse 6 'sub/back\x5cslash' "$WORK/r"
mk && echo x > "$WORK/r/$(printf 'n%.0s' {1..253})"
refuse 6 "nnnn" "$WORK/r"
mk && echo 1 > "$WORK/r/f517928" && echo 2 > "$WORK/r/f810748"
refuse 7 "f810748" "$WORK/r"
mk && head -c 100000 /dev/urandom > "$WORK/r/sub/big.bin"
refuse 9 "sub/big.bin" "$WORK/r" PSGFS_PACK_TEST_CHANGE=sub/big.bin
mk
refuse 9 "sub/a.txt" "$WORK/r" PSGFS_PACK_TEST_CHANGE=sub/a.txt
# the read back: a byte of the data flipped after the write (test hook) fails the pack
mk && head -c 3000 /dev/urandom > "$WORK/r/sub/a.txt"
for f in eb bigf; do
	for c in none refpack; do
		refuse 11 "sub/a.txt" "$WORK/r" PSGFS_PACK_TEST_CORRUPT=100 --format $f --compress $c
	done
done
refuse 11 "sub/a.txt" "$WORK/r" PSGFS_PACK_TEST_CORRUPT=100 --compress chunked
# --like copies unchanged entries as stored and checks them as such: a flipped byte is caught
for v in stored refpack bigf; do
	rc=0
	PSGFS_PACK_TEST_CORRUPT=100 "$T" pack --like "$WORK/like-$v.big" "$WORK/keep.big" \
		2> "$WORK/err" >/dev/null || rc=$?
	check "--like $v, a copied entry's byte flipped: exit 11 (got $rc)" [ "$rc" = 11 ]
	check "--like $v, a copied entry's byte flipped: the line says so" in_file "copies" "$WORK/err"
	check "--like $v, a copied entry's byte flipped: no temporary file left" no_temp_left
done
refuse 3 "no-such-dir" "$WORK/no-such-dir"
# --like: DIR must hold exactly ORIG's paths; ORIG must be an EB v3 archive read clean
mk
refuse 13 "data/content" "$WORK/r" --like "$WORK/like-game.big"
cp -r "$WORK/lx-stored" "$WORK/r2" && echo extra > "$WORK/r2/extra.txt"
refuse 13 "extra.txt" "$WORK/r2" --like "$WORK/like-stored.big"
rm "$WORK/r2/extra.txt" "$WORK/r2/data/content/createacharacter/catalog.xml"
refuse 13 "catalog.xml" "$WORK/r2" --like "$WORK/like-stored.big"
mkdir -p "$WORK/ov2" && echo x > "$WORK/ov2/added.txt"
rc=0
"$T" pack --like "$WORK/like-game.big" --overlay "$WORK/ov2" "$WORK/keep.big" 2> "$WORK/err" >/dev/null ||
	rc=$?
check "--like --overlay adding a path: exit 13 (got $rc)" [ "$rc" = 13 ]
check "--like --overlay adding a path: one line naming it" one_line_naming added.txt
"$PSGFS_GEN" big --variant overlap "$WORK/overlap.big"
refuse 13 "overlap.big" "$WORK/src" --like "$WORK/overlap.big"
mk && mkdir "$WORK/r/sub/locked" && echo x > "$WORK/r/sub/locked/f" && chmod 000 "$WORK/r/sub/locked"
if [ "$(id -u)" != 0 ]; then refuse 3 "sub/locked" "$WORK/r"; fi
chmod 700 "$WORK/r/sub/locked"
mk
# OUT cannot be written: its folder is missing, it is a folder, its folder is read-only
rc=0
"$T" pack "$WORK/r" "$WORK/missing/out.big" 2> "$WORK/err" >/dev/null || rc=$?
check "OUT in a missing folder: exit 10 (got $rc)" [ "$rc" = 10 ]
check "OUT in a missing folder: one line naming it" one_line_naming missing/out.big
mkdir "$WORK/isdir.big" && echo x > "$WORK/isdir.big/x"
rc=0
"$T" pack "$WORK/r" "$WORK/isdir.big" 2> "$WORK/err" >/dev/null || rc=$?
check "OUT a folder: exit 10 (got $rc)" [ "$rc" = 10 ]
check "OUT a folder: folder untouched" [ -f "$WORK/isdir.big/x" ]
check "OUT a folder: no temporary file left" no_temp_left
if [ "$(id -u)" != 0 ]; then
	mkdir "$WORK/ro" && cp "$WORK/keep.ref" "$WORK/ro/keep.big" && chmod 555 "$WORK/ro"
	rc=0
	"$T" pack "$WORK/r" "$WORK/ro/keep.big" 2>/dev/null >/dev/null || rc=$?
	check "OUT in a read-only folder: exit 10 (got $rc)" [ "$rc" = 10 ]
	check "OUT in a read-only folder: OUT untouched" cmp -s "$WORK/ro/keep.big" "$WORK/keep.ref"
	chmod 755 "$WORK/ro"
fi
# usage
for bad in "--format zip" "--compress lzx" "--platform pc" "--min-size 1x" \
	"--format bigf --compress chunked" "--format bigf --like $WORK/like-game.big"; do
	rc=0
	# shellcheck disable=SC2086
	"$T" pack $bad "$WORK/r" "$WORK/u.big" 2>/dev/null || rc=$?
	check "pack $bad: exit 2" [ "$rc" = 2 ]
done
"$T" pack --help > "$WORK/help"
check "pack --help lists the exit codes" in_file '9 a file changed' "$WORK/help"
# OUT's folder is synced after the rename, so the rename survives a crash
if command -v strace >/dev/null; then
	# (LeakSanitizer cannot run under ptrace: off for this one run of an ASan build)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -o "$WORK/trace" \
		-e trace=rename,renameat,renameat2,fsync "$T" pack "$WORK/r" "$WORK/synced.big" >/dev/null
	check "OUT's folder synced after the rename" awk '/rename/ { r = 1 } r && /fsync\(/ { f = 1 }
		END { exit !f }' "$WORK/trace"
fi
# a successful pack over an existing OUT replaces it
"$T" pack "$WORK/r" "$WORK/keep.big" >/dev/null
check "a successful pack replaces OUT" [ "$(magic "$WORK/keep.big")" = 45420003 ]
finish
