#!/bin/bash
# The loose view (-o layout=loose, docs/archives.md "The loose view") through real mounts of a
# generated game folder: the listing is the loose files plus every archive's entries at the
# paths the game loads them from, with the archives hidden; every file's bytes are what
# `psgfs-tool extract` writes; where sources share a path the documented precedence holds
# (OUTDIR, then loose files, then archives in path order); -o mods=OUTDIR is layered, also
# with an arena a texture save through an ordinary mods mount wrote; mounting and stat-ing
# everything read the archives' tables only.
. "$(dirname "$0")/lib.sh"

G=$WORK/game
"$PSGFS_GEN" game "$G" --manifest "$WORK/man.tsv" >/dev/null
CAC=data/content/createacharacter
tex=$(awk -F'\t' -v c="data/content/createacharacter.big" \
	'$1 == c && $2 ~ /\/texture\/0x.*\.psg$/ {print $2; exit}' "$WORK/man.tsv")
check "the game has a texture arena in createacharacter.big ($tex)" test -n "$tex"
shared=$(awk -F'\t' -v c="data/content/createacharacter.big" \
	'$1 == c && $2 ~ /\.psk$/ {print $2; exit}' "$WORK/man.tsv")
check "... and a mesh ($shared)" test -n "$shared"

# ---- sources sharing paths ----
# A loose file at an entry's path; an archive sorting before createacharacter.big and one
# after it, each holding one of its paths and one of their own (psgfs-tool pack).
mkdir -p "$G/$CAC" "$WORK/aa/$CAC" "$WORK/zz/$(dirname "$shared")" "$WORK/aa/data/content/aa" \
	"$WORK/zz/data/zz"
printf 'loose over the archive\n' > "$G/$CAC/catalog.xml"
printf 'aa wins\n' > "$WORK/aa/$CAC/empty.dat"
printf 'aa own\n' > "$WORK/aa/data/content/aa/own.bin"
printf 'zz loses\n' > "$WORK/zz/$shared"
printf 'zz own\n' > "$WORK/zz/data/zz/own.bin"
check "a third-party archive packs (before createacharacter.big by path)" \
	"$PSGFS_TOOL" pack --compress none "$WORK/aa" "$G/data/aa.big"
check "... and one after it" "$PSGFS_TOOL" pack "$WORK/zz" "$G/data/content/zz.big"

# expected DIR: what the rule gives, built with the unpacking tools: the loose files, then
# each archive (by path) extracted, its nested archives back to their own bytes, copied
# without overwriting anything already there.
expected() {
	local out=$1 a x=$WORK/x
	mkdir -p "$out"
	tar -C "$G" --exclude='*.big' -cf - . | tar -C "$out" -xf -
	while read -r a; do
		rm -rf "$x"
		"$PSGFS_TOOL" extract "$G/$a" "$x" >/dev/null
		rm -f "$x/info.txt" "$x/errors.txt"
		find "$x" -depth -mindepth 1 -type d -exec sh -c \
			'b=${1##*/}; [ -f "$1/info.txt" ] && [ -f "$1/$b" ] &&
			 mv "$1/$b" "$1.own" && rm -rf "$1" && mv "$1.own" "$1"; :' _ {} \;
		cp -rn "$x/." "$out/"
	done < <(cd "$G" && find . -name '*.big' | sed 's|^\./||' | LC_ALL=C sort)
}
expected "$WORK/exp"
listing() { (cd "$1" && find . | LC_ALL=C sort); }

M=$WORK/m
mount_psgfs "$G" "$M" -o layout=loose 2>"$WORK/warn"
check "the listing is the loose files and the archives' entries ($(listing "$WORK/exp" | wc -l) paths)" \
	diff <(listing "$WORK/exp") <(listing "$M")
check "no archive is shown" test -z "$(find "$M" -name '*.big')"
check "the stream files the game reads stay files" test -f "$M/data/content/world/stream/DIST_Loose/cF0_Global.psf"
# Every file's bytes, one cmp each, and sizes as stat gives them before any read.
bad=0
while IFS= read -r -d '' f; do
	f=${f#./}
	[ "$(stat -c %s "$M/$f")" = "$(stat -c %s "$WORK/exp/$f")" ] || { echo "# size: $f"; bad=1; }
	cmp -s "$M/$f" "$WORK/exp/$f" || { echo "# bytes: $f"; bad=1; }
done < <(cd "$WORK/exp" && find . -type f -print0)
check "every file's st_size and bytes are extract's" test "$bad" = 0
check "every file reads exactly its st_size bytes (one reader for all)" all_read_whole "$M"
check "a loose file wins over the entry of its path" \
	grep -qx 'loose over the archive' "$M/$CAC/catalog.xml"
check "the first archive by path wins a shared path (aa.big)" grep -qx 'aa wins' "$M/$CAC/empty.dat"
check "... and a later one loses it (zz.big)" \
	cmp -s "$M/$shared" <("$PSGFS_TOOL" --assets files cat "$G/data/content/createacharacter.big" "$shared")
check "... each archive's own paths are there" \
	bash -c "grep -qx 'aa own' '$M/data/content/aa/own.bin' && grep -qx 'zz own' '$M/data/zz/own.bin'"
check "the lost path is named at mount" grep -q "zz.big: $shared not shown: taken by data/content/createacharacter.big" "$WORK/warn"
check "every file is a plain file (no asset directory)" \
	test -z "$(find "$M" -name '*.psg' -type d)"
check "the mount is read-only" bash -c "! touch '$M/$CAC/catalog.xml' 2>/dev/null"
ls1=$(cd "$M" && find . -printf '%i %p\n' | LC_ALL=C sort -k2)
unmount_psgfs "$M"
mount_psgfs "$G" "$M" -o layout=loose 2>/dev/null
check "inode numbers and listings are the same on a remount" \
	test "$ls1" = "$(cd "$M" && find . -printf '%i %p\n' | LC_ALL=C sort -k2)"
unmount_psgfs "$M"

# ---- refusals ----
check "layout=loose on a single file is a usage error (2)" bash -c \
	"'$PSGFS' -o layout=loose '$G/data/content/world.big' '$M' 2>/dev/null; [ \$? = 2 ]"
check "layout=loose on a missing folder cannot open it (3)" bash -c \
	"'$PSGFS' -o layout=loose '$WORK/none' '$M' 2>/dev/null; [ \$? = 3 ]"
check "an unknown layout is a usage error (2)" bash -c \
	"'$PSGFS' -o layout=flat '$G' '$M' 2>/dev/null; [ \$? = 2 ]"
check "layout=loose with assets=dirs is a usage error (2)" bash -c \
	"'$PSGFS' -o layout=loose,assets=dirs '$G' '$M' 2>/dev/null; [ \$? = 2 ]"

# ---- mounting reads the tables only: no entry is indexed or decoded, and every read of an
# archive ends within its header and tables, but for the first bytes of an entry that tell its
# unpacked size where the table does not (BIGF/BIG4: docs/archives.md), 16 at most ----
table_end() { # the end of an archive's tables: EB v3 names offset + size, BIGF/BIG4 header end
	local h
	h=$(od -An -tx1 -N20 "$1" | tr -d ' \n')
	case $h in
	4542*) echo $((16#${h:24:8} + 16#${h:32:8})) ;;
	*) echo $((16#${h:24:8})) ;;
	esac
}
most=0
for a in $(cd "$G" && find . -name '*.big'); do
	e=$(table_end "$G/$a")
	[ "$e" -gt "$most" ] && most=$e
done
T=$WORK/mt
mkdir -p "$T"
MOUNTS+=("$T")
ASAN_OPTIONS=detect_leaks=0 timeout 120 strace -f -qq -e trace=pread64 -o "$WORK/mount.strace" \
	"$PSGFS" -f -o layout=loose,stats="$WORK/stats.txt" "$G" "$T" 2>/dev/null &
sp=$!
for _ in $(seq 400); do mountpoint -q "$T" && break; sleep 0.05; done
find "$T" -ls >/dev/null
unmount_psgfs "$T"
wait "$sp" || true
far=$(awk -v most="$most" '/pread64\(/ {
		n = split($0, f, ", "); off = f[n]; sub(/\).*/, "", off)
		ret = $0; sub(/.*= /, "", ret)
		if (off + ret > most + 0 && ret + 0 > 16) { print off "+" ret; exit }
	}' "$WORK/mount.strace")
check "the archives' tables were read at mount ($(grep -c 'pread64(' "$WORK/mount.strace") reads)" \
	grep -q 'pread64(' "$WORK/mount.strace"
check "mount + stat of every file read the tables ($most bytes in at most) and entries' first bytes only: ${far:-no other read}" \
	test -z "$far"
check "... no entry was indexed or decoded, no file read" \
	awk '$1 ~ /^(arc_indexes|arc_pieces|raw_reads)$/ && $2 != 0 {bad = 1} END {exit bad}' "$WORK/stats.txt"

# ---- -o mods=OUTDIR: OUTDIR's files over any entry ----
O=$WORK/out
mkdir -p "$O/$CAC"
mkdir -p "$O/$(dirname "$shared")"
printf 'from OUTDIR\n' > "$O/$shared"
printf 'from OUTDIR too\n' > "$O/$CAC/catalog.xml"
printf 'new in OUTDIR\n' > "$O/$CAC/added.txt"
mount_psgfs "$G" "$M" -o layout=loose,mods="$O" 2>/dev/null
check "OUTDIR's file shows over the entry" grep -qx 'from OUTDIR' "$M/$shared"
check "... and over a loose file" grep -qx 'from OUTDIR too' "$M/$CAC/catalog.xml"
check "... and a new file of OUTDIR is added" grep -qx 'new in OUTDIR' "$M/$CAC/added.txt"
check "OUTDIR is not written (read-only mount)" bash -c "! touch '$M/$shared' 2>/dev/null"
unmount_psgfs "$M"

# ---- a texture saved through an ordinary mods mount, then the loose view serves the arena ----
O2=$WORK/out2
mkdir -p "$O2"
N=$WORK/n
mount_psgfs "$G" "$N" -o mods="$O2"
tdir=$N/data/content/createacharacter.big/$tex/textures
png=$(cd "$tdir" && ls *.png | sed -n 1p)
convert "$tdir/$png" -negate "$WORK/neg.png"
cp "$WORK/neg.png" "$tdir/$png"
for _ in $(seq 200); do [ -f "$O2/$tex" ] && break; sleep 0.05; done
check "the save wrote the game-ready arena to OUTDIR at the entry's path" test -f "$O2/$tex"
unmount_psgfs "$N"
mount_psgfs "$G" "$M" -o layout=loose,mods="$O2" 2>/dev/null
check "the loose view serves the new arena at the entry's path" cmp -s "$M/$tex" "$O2/$tex"
check "... which is not the archive's" bash -c "! cmp -s '$M/$tex' '$WORK/exp/$tex'"
unmount_psgfs "$M"

# ---- over the game folder itself: the emulator's own path shows the view (README's flow) ----
mount_psgfs "$G" "$G" -o layout=loose 2>/dev/null
check "mounted over its own folder: the same listing" diff <(listing "$WORK/exp") <(listing "$G")
check "... and the same bytes" diff -r "$WORK/exp" "$G"
unmount_psgfs "$G"
check "unmounted: the archives are back" test -f "$G/data/content/createacharacter.big"

echo "# $passes passed, $fails failed"
[ "$fails" = 0 ]
