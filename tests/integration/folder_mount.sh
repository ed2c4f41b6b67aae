#!/usr/bin/env bash
# Folder mounts (psgfs DIR MNT) of a generated asset folder (psgfs-gen folder: nested models with
# companions, texture arenas, PSK, PSA, and junk). The mount mirrors the folders; every file
# recognised by its content is a directory holding exactly the tree a single-file mount shows;
# other files pass through with their bytes; links stay links with their targets; FIFOs,
# sockets and devices are left out; damaged assets say why. Mounting reads nothing below DIR;
# inode numbers are unique over the mount and the same after a remount; psgfs-tool shows the
# same tree (ls, find, cat, extract, walk). Also the generator's determinism and options.
. "$(dirname "$0")/lib.sh"

SRC=$WORK/src
MAN=$WORK/manifest.tsv
J=data/content/junk

# ---- the generator ----
timeout 120 "$PSGFS_GEN" folder --seed 7 --assets 60 --manifest "$MAN" "$SRC"
# sig DIR: every entry's path, type, size and link target, and the bytes of readable files.
sig() {
	(cd "$1" && find . -printf '%p %y %s %l\n' | sort &&
		find . -type f -readable -print0 | sort -z | xargs -0 md5sum)
}
timeout 120 "$PSGFS_GEN" folder --seed 7 --assets 60 "$WORK/again"
timeout 120 "$PSGFS_GEN" folder --seed 8 --assets 60 "$WORK/other"
sig "$SRC" >"$WORK/sig.src"
sig "$WORK/again" >"$WORK/sig.again"
sig "$WORK/other" >"$WORK/sig.other"
check "gen: the same seed writes the same tree, byte for byte" cmp -s "$WORK/sig.src" "$WORK/sig.again"
check "gen: another seed writes another tree" bash -c "! cmp -s '$WORK/sig.src' '$WORK/sig.other'"
rm -rf "$WORK/again" "$WORK/other"
gen_exit() { # CODE ARGS...: psgfs-gen exits CODE with one line on stderr
	local code=$1 st=0
	shift
	timeout 20 "$PSGFS_GEN" "$@" 2>"$WORK/gen.err" >/dev/null || st=$?
	echo "# psgfs-gen $* -> $st: $(head -1 "$WORK/gen.err")"
	[ "$st" = "$code" ] && [ "$(wc -l <"$WORK/gen.err")" = 1 ]
}
check "gen: --wide above --assets is a usage error" gen_exit 2 folder --assets 10 --wide 11 "$WORK/g1"
check "gen: --assets 0 is a usage error" gen_exit 2 folder --assets 0 "$WORK/g2"
check "gen: --manifest does not apply to sky" gen_exit 2 sky --manifest "$WORK/m" "$WORK/g3"
check "gen: an existing OUTDIR is refused" gen_exit 1 folder "$SRC"
check "gen: nothing written by the refusals" bash -c "! ls -d '$WORK'/g[123] 2>/dev/null"
mkdir -p "$WORK/mp0"
MOUNTS+=("$WORK/mp0")
max_refused() { # VALUE WORDS: psgfs and psgfs-tool both exit 2 with WORDS; nothing mounted
	local st=0 st2=0
	timeout 20 "$PSGFS" "$SRC" "$WORK/mp0" -o "max_assets=$1" 2>"$WORK/max.err" || st=$?
	timeout 20 "$PSGFS_TOOL" --max-assets "$1" ls "$SRC" >/dev/null 2>>"$WORK/max.err" || st2=$?
	echo "# max_assets=$1: psgfs $st, psgfs-tool $st2: $(head -1 "$WORK/max.err")"
	[ "$st" = 2 ] && [ "$st2" = 2 ] && ! mountpoint -q "$WORK/mp0" &&
		[ "$(grep -c -- "$2" "$WORK/max.err")" = 2 ]
}
check "max_assets=0 is refused by psgfs and psgfs-tool, with the range" max_refused 0 'allowed: 1 to 65536'
check "max_assets=65537 too" max_refused 65537 'allowed: 1 to 65536'
check "max_assets=-1 too" max_refused -1 "max.assets '-1'"
check "max_assets=x too" max_refused x "max.assets 'x'"
check "max_assets=1K too: a count takes no size suffix" max_refused 1K "max.assets '1K': not a count"
check "psgfs-tool --max-assets 1 lists the folder" bash -c "'$PSGFS_TOOL' --max-assets 1 ls '$SRC' | grep -q readme.txt"
n_assets=$(awk -F'\t' '$3 == "asset"' "$MAN" | wc -l)
check "gen: the manifest lists 60 assets and the junk's ($n_assets)" test "$n_assets" -ge 68
for k in model companion textures psk psa rx2 disguised hardlink unreadable truncated \
	empty not-arena plain link fifo socket; do
	check "gen: the manifest has a $k" grep -qP "\t$k\t" "$MAN"
done

# More junk than the generator makes: a device (root only), and an arena one of whose views
# cannot be decoded (a RenderOptiMeshData whose dictionary size says 8 bytes).
[ "$(id -u)" = 0 ] && mknod "$SRC/$J/null.psg" c 1 3
"$PSGFS_GEN" sky "$SRC/$J/bad_view.psg"
ds=$((16#$(od -An -tx1 -j $((0x30)) -N4 "$SRC/$J/bad_view.psg" | tr -d ' \n')))
oi=$("$PSGFS_TOOL" ls "$SRC/$J/bad_view.psg" objects |
	sed -n 's/.*\t0*\([0-9][0-9]*\)\.RenderOptiMeshData\.bin$/\1/p' | sed -n 1p)
printf '\x00\x00\x00\x08' | dd of="$SRC/$J/bad_view.psg" bs=1 seek=$((ds + 24 * oi + 8)) conv=notrunc status=none

# ---- mounting reads the folder itself and nothing below it (strace of the daemon) ----
# below_reads LOG: reads below DIR in an strace log: listings (getdents64), and opens relative
# to a descriptor or by a path under DIR.
below_reads() {
	grep -cE "getdents64\(|openat\([0-9]+, |openat\(AT_FDCWD, \"$SRC/" "$1" || true
}
traced() { # LOG CMD...: mount under strace, run CMD on the mount, unmount
	local log=$1 m=$WORK/mtrace
	shift
	mkdir -p "$m"
	MOUNTS+=("$m")
	# (LeakSanitizer cannot run under ptrace: off for these two runs of an ASan build.)
	ASAN_OPTIONS=detect_leaks=0 timeout 60 strace -f -qq -e trace=openat,getdents64,pread64,read \
		-o "$log" "$PSGFS" -f "$SRC" "$m" &
	local sp=$!
	for _ in $(seq 200); do mountpoint -q "$m" && break; sleep 0.05; done
	"$@" "$m" >/dev/null
	unmount_psgfs "$m"
	wait "$sp" || true
}
traced "$WORK/mount.strace" stat
check "mount + stat of the root: the daemon opened DIR itself" \
	grep -q "openat(AT_FDCWD, \"$SRC\"" "$WORK/mount.strace"
check "mount + stat of the root: no listing, no open below DIR ($(below_reads "$WORK/mount.strace"))" \
	test "$(below_reads "$WORK/mount.strace")" = 0
traced "$WORK/ls.strace" ls
check "   ... while listing the root does read below it ($(below_reads "$WORK/ls.strace"))" \
	test "$(below_reads "$WORK/ls.strace")" -gt 0
# The junk folder: the file without an extension is sniffed (at most 32 bytes); files named
# .psg/.psk/... or .txt are classified by name and not read at all.
lsjunk() { ls -l "$1/$J"; }
traced "$WORK/junk.strace" lsjunk
sniffs=$(grep -oE 'pread64\([0-9]+, .*, ([0-9]+), 0\) = [0-9]+' "$WORK/junk.strace" |
	sed -E 's/.*, ([0-9]+), 0\) = .*/\1/' || true)
check "   ... and sniffs only files whose name does not decide, each with a read of at most 32 bytes ($(echo $sniffs))" \
	test "$(wc -w <<<"$sniffs")" = 1 -a "$(echo $sniffs)" = 32
# ---- the mount ----
# start_fg DIR MNT [opts]: psgfs -f in the background under timeout; sets DPID.
start_fg() {
	local dir=$1 mnt=$2 tp
	shift 2
	mkdir -p "$mnt"
	timeout 300 "$PSGFS" "$dir" "$mnt" -f "$@" &
	tp=$!
	MOUNTS+=("$mnt")
	for _ in $(seq 200); do mountpoint -q "$mnt" && break; sleep 0.05; done
	DPID=$(pgrep -P "$tp")
	mountpoint -q "$mnt" && [ -n "$DPID" ]
}
# stat_now NAME: the daemon's counter NAME, written on SIGUSR1.
stat_now() {
	rm -f "$WORK/stats.txt"
	kill -USR1 "$DPID"
	for _ in $(seq 200); do
		grep -q '^raw_bytes ' "$WORK/stats.txt" 2>/dev/null && break
		sleep 0.02
	done
	awk -v k="$1" '$1 == k {print $2}' "$WORK/stats.txt"
}
first() { awk -F'\t' -v k="$1" '$2 == k {print $1; exit}' "$MAN"; }
M=$WORK/m
start_fg "$SRC" "$M" -o stats="$WORK/stats.txt"
model=$(first model)
ls -l "$M/$(dirname "$model")" >/dev/null
check "ls -l of a folder of assets opens none of them (sniffed only: $(stat_now asset_opens) opened)" \
	test "$(stat_now asset_opens)" = 0
cat "$M/$model/header.txt" >/dev/null
check "   ... reading a file inside one opens that one" test "$(stat_now asset_opens)" = 1
cat "$M/$model/info.txt" >/dev/null
check "   ... its info.txt opens the companion too (the materials line): 2 opened" \
	test "$(stat_now asset_opens)" = 2

# Folders: each source folder lists the same names, less FIFOs, sockets and devices.
mirror_bad=0
while IFS= read -r -d '' d; do
	rel=${d#"$SRC"}
	want=$(find "$d" -mindepth 1 -maxdepth 1 \( -type f -o -type d -o -type l \) -printf '%f\n' | sort)
	got=$(ls -A "$M$rel" | sort)
	[ "$want" = "$got" ] || { echo "# $rel/: $(diff <(echo "$want") <(echo "$got") | head -3)"; mirror_bad=$((mirror_bad + 1)); }
done < <(find "$SRC" -type d -print0)
check "every source folder lists the same names, less FIFOs/sockets/devices ($(find "$SRC" -type d | wc -l) folders)" \
	test "$mirror_bad" = 0

# Every entry of the manifest shows as the manifest says (the unreadable file: root reads it).
shown_bad=0
while IFS=$'\t' read -r p kind shown; do
	[ "$p" = path ] && continue
	[ "$kind" = unreadable ] && [ "$(id -u)" = 0 ] && shown=asset
	ok=1
	case $shown in
	dir) [ -d "$M/$p" ] && [ ! -L "$M/$p" ] || ok=0 ;;
	asset) [ -d "$M/$p" ] && [ -f "$M/$p/info.txt" ] && [ -f "$M/$p/errors.txt" ] &&
		! grep -q '^status: cannot mount' "$M/$p/info.txt" || ok=0 ;;
	broken) [ -d "$M/$p" ] && grep -q '^status: cannot mount: ' "$M/$p/info.txt" &&
		[ -s "$M/$p/errors.txt" ] || ok=0 ;;
	file) [ -f "$M/$p" ] && [ ! -L "$M/$p" ] && cmp -s "$SRC/$p" "$M/$p" || ok=0 ;;
	link) [ -L "$M/$p" ] && [ "$(readlink "$M/$p")" = "$(readlink "$SRC/$p")" ] || ok=0 ;;
	absent) [ ! -e "$M/$p" ] && [ ! -L "$M/$p" ] || ok=0 ;;
	esac
	[ "$ok" = 1 ] || { echo "# $p ($kind): not shown as $shown"; shown_bad=$((shown_bad + 1)); }
done <"$MAN"
check "every entry shows as its manifest row says ($(($(wc -l <"$MAN") - 1)) entries)" test "$shown_bad" = 0
check "a device is left out" bash -c "[ \$(id -u) != 0 ] || ! ls -A '$M/$J' | grep -qx null.psg"
check "content decides: an arena without extension is a directory" test -d "$M/$J/model_without_extension/objects"
check "the name decides: text named .psg and .psk are broken assets that say why" bash -c \
	"grep -qx 'status: cannot mount: not a PSG arena, PSK or PSA file (unknown magic)' '$M/$J/notes.psg/info.txt' &&
	 grep -q 'unknown magic' '$M/$J/fake.psk/info.txt'"
check "   ... an empty .psg, too small for any magic, is a file" test -f "$M/$J/empty.psg"
check "an uppercase extension is recognised (SHOUTY.PSG, MESH.PSKX)" \
	test -d "$M/$J/SHOUTY.PSG/objects" -a -d "$M/$J/MESH.PSKX/chunks"
check "the truncated arena says why" grep -qx 'status: cannot mount: PSG arena: truncated' "$M/$J/truncated.psg/info.txt"
check "   ... in errors.txt too" grep -q 'truncated' "$M/$J/truncated.psg/errors.txt"
check "links are links: a loop, a self-loop, a dangling one read back their targets" bash -c \
	"[ \$(readlink '$M/$J/loop_a') = loop_b ] && [ \$(readlink '$M/$J/self.psg') = self.psg ] && [ \$(readlink '$M/$J/dangling.psg') = gone.psg ]"
check "a link out of the folder keeps its absolute target" test "$(readlink "$M/$J/outside")" = /etc/hostname
check "a link to a sibling asset resolves (by the kernel) inside the mount" test -d "$M/$J/sibling.psg/objects"
check "a link to a folder resolves inside the mount" test -d "$M/$J/up/model/cas_db"
check "following the self-loop fails with ELOOP, not EIO" bash -c \
	"! out=\$(cat '$M/$J/self.psg' 2>&1) && grep -q 'Too many levels' <<< \"\$out\""
check "a hard link is a second asset with its own inode number" bash -c \
	"[ \$(stat -c %i '$M/$J/hardlink.psg') != \$(stat -c %i '$M/$J/SHOUTY.PSG') ] && cmp -s '$M/$J/hardlink.psg/header.txt' '$M/$J/SHOUTY.PSG/header.txt'"
check "the arena with a broken view mounts; the view fails with EIO" bash -c \
	"[ -d '$M/$J/bad_view.psg/objects' ] && ! cat '$M/$J/bad_view.psg/objects/'*.RenderOptiMeshData.txt >/dev/null 2>&1"

# Each asset: exactly the tree of a single-file mount (psgfs-tool find), names, sizes, links.
tree_of() { # DIR: the psgfs-tool find format of a mounted directory
	(cd "$1" && find . -mindepth 1 \( -type d -printf '%P/\n' \) -o \( -type l -printf '%P -> %l\n' \) \
		-o \( -type f -printf '%P\t%s\n' \) 2>/dev/null) | sort
}
# A model's materials differ by design: the folder mount adds links into the companion (or, for
# a model without one, into texture arenas of other names found by their TableOfContents: then
# its .glb embeds those textures too), and material.txt and info.txt's "materials:" line say how
# the companion was found. Sizes of those files and the links are left out here;
# same_but_materials checks the rest byte for byte (the .glb too, unless told "noglb").
no_materials() {
	sed -E '/^materials\/.* -> /d; s/^((materials\/.*\/)?(material|info)\.txt)\t.*/\1/; s/^(export\/[^\t]*\.glb)\t.*/\1/'
}
same_but_materials() { # SINGLE FOLDER [noglb]: identical but for the materials links and lines
	diff -r -x material.txt -x info.txt -x materials ${3:+-x '*.glb'} "$1" "$2" >/dev/null &&
		diff <(grep -v '^materials:' "$1/info.txt") <(grep -v '^materials:' "$2/info.txt") &&
		diff <(cd "$1" && find . -name material.txt | sort) <(cd "$2" && find . -name material.txt | sort)
}
# The mount is listed once (tree_of of the whole mount); an asset's tree is its lines under
# "p/", the prefix cut (sorted bytewise, lines of one prefix stay in order): a find and a sort
# per asset listed the same entries again.
tree_of "$M" >"$WORK/tree.mount" || true # (find fails on the views of bad_view.psg: left out)
subtree() { # P: the lines of $WORK/tree.mount under P/, relative to P
	awk -v p="$1/" 'index($0, p) == 1 && length($0) > length(p) { print substr($0, length(p) + 1) }' \
		"$WORK/tree.mount"
}
# Split between the builds (tests/README.md): psgfs-tool find of 3 assets in 4 (manifest order)
# in the plain build, of the 4th under ASan+UBSan; every asset in one of the two.
tree_bad=0
n_tree=0
k_tree=0
while IFS=$'\t' read -r p kind shown; do
	[ "$shown" = asset ] || { [ "$kind" = unreadable ] && [ "$(id -u)" = 0 ]; } || continue
	k_tree=$((k_tree + 1))
	if sanitized; then [ $((k_tree % 4)) = 0 ] || continue; else [ $((k_tree % 4)) != 0 ] || continue; fi
	n_tree=$((n_tree + 1))
	if ! cmp -s <(timeout 60 "$PSGFS_TOOL" find "$SRC/$p" | no_materials | sort) \
		<(subtree "$p" | no_materials); then
		echo "# $p: the mounted tree differs from psgfs-tool find of the file"
		tree_bad=$((tree_bad + 1))
	fi
done <"$MAN"
check "every asset is the tree of its single-file mount ($n_tree of $k_tree assets here, the rest in the $(sanitized && echo plain || echo ASan+UBSan) build)" \
	test "$tree_bad" = 0 -a "$n_tree" -gt 0
for k in model companion textures psk psa rx2 disguised; do
	p=$(first "$k")
	ex=$WORK/extract.$k
	"$PSGFS_TOOL" extract "$SRC/$p" "$ex" >/dev/null 2>&1 || true
	# disguised: a model alone in junk/, linked in the folder by TableOfContents only
	check "every byte of a $k ($p) is the single-file tree's" same_but_materials "$ex" "$M/$p" \
		$([ "$k" = disguised ] && echo noglb)
done
check "   ... the model's material links resolve inside the mount to its companion's textures" \
	bash -c "n=0; for l in '$M/$model'/materials/*/*.png '$M/$model'/materials/*/*.dds; do
		[ -L \"\$l\" ] && [ -f \"\$l\" ] || exit 1; n=\$((n + 1)); done; [ \$n -gt 0 ]"
if [ "$(id -u)" = 0 ]; then
	m1=$WORK/m.single
	mount_psgfs "$SRC/$(first model)" "$m1"
	check "the same model mounted alone: identical trees byte for byte, but for the material links and lines" \
		same_but_materials "$m1" "$M/$(first model)"
	unmount_psgfs "$m1"
fi

# ---- psgfs-tool on the folder ----
check "tool find of the folder lists what the mount shows" \
	cmp -s <(timeout 120 "$PSGFS_TOOL" find "$SRC" 2>/dev/null | sort) "$WORK/tree.mount"
# (bad_view.psg's broken views fail in both; they are compared by the walk below.)
# Plain build only (tests/README.md): the extract renders every byte of the folder once more in
# the tool and diff reads every byte of the mount again, the same code paths as the find above
# and the walk below, which the ASan+UBSan build runs whole.
if ! sanitized; then
	check "tool extract of the folder equals the mount, links included (diff --no-dereference)" bash -c \
		"timeout 120 '$PSGFS_TOOL' extract '$SRC' '$WORK/ex' >/dev/null 2>&1; diff -r --no-dereference -x bad_view.psg '$WORK/ex' '$M'"
	check "   ... and its links have the source's targets" bash -c \
		"[ \$(readlink '$WORK/ex/$J/outside') = /etc/hostname ] && [ \$(readlink '$WORK/ex/$J/up') = ../createacharacter ]"
fi
check "tool cat of a pass-through file" cmp -s <("$PSGFS_TOOL" cat "$SRC" readme.txt) "$SRC/readme.txt"
check "tool cat of a file inside an asset" cmp -s <("$PSGFS_TOOL" cat "$SRC" "$(first model)/header.txt") \
	"$M/$(first model)/header.txt"
check "tool ls of the junk folder: types as the mount shows them" bash -c \
	"'$PSGFS_TOOL' ls '$SRC' '$J' | awk -F'\t' '\$4 == \"loop_a\" && \$1 == \"l\" {l=1} \$4 == \"empty.psg\" && \$1 == \"f\" {f=1} \$4 == \"SHOUTY.PSG\" && \$1 == \"d\" {d=1} END {exit !(l && f && d)}'"
check "tool ls inode numbers are the mount's" bash -c \
	"[ \$('$PSGFS_TOOL' ls '$SRC' '$J' | awk -F'\t' '\$4 == \"SHOUTY.PSG\" {print \$3}') = \$(stat -c %i '$M/$J/SHOUTY.PSG') ]"
walk_st=0
timeout 120 "$PSGFS_TOOL" walk "$SRC" >"$WORK/walk.out" 2>"$WORK/walk.err" || walk_st=$?
check "tool walk renders everything; what fails is bad_view.psg's ($(grep -c . "$WORK/walk.err") lines)" \
	bash -c "[ $walk_st = 1 ] && grep -q 'RenderOptiMeshData.txt' '$WORK/walk.err' && ! grep -v '^psgfs-tool: $J/bad_view.psg/' '$WORK/walk.err'"

# ---- inode numbers: unique over the whole mount, identical after a remount ----
# (The views of bad_view.psg that fail at stat are left out of both lists alike.)
inos() { (cd "$1" && find . -printf '%i %p\n' 2>/dev/null | sort -k2) || true; }
inos "$M" >"$WORK/inos.1"
n=$(wc -l <"$WORK/inos.1")
check "inode numbers are unique over the mount ($n paths)" \
	test "$(cut -d' ' -f1 "$WORK/inos.1" | sort -u | wc -l)" = "$n"
unmount_psgfs "$M"
wait "$DPID" 2>/dev/null || true
mount_psgfs "$SRC" "$M"
inos "$M" >"$WORK/inos.2"
check "inode numbers are the same after a remount" cmp -s "$WORK/inos.1" "$WORK/inos.2"
unmount_psgfs "$M"

# ---- -o sniff_all: the content decides for every file ----
mount_psgfs "$SRC" "$M" -o sniff_all
check "-o sniff_all: text named .psg and .psk, and an empty .psg, are files with their bytes" bash -c \
	"cmp -s '$SRC/$J/notes.psg' '$M/$J/notes.psg' && cmp -s '$SRC/$J/fake.psk' '$M/$J/fake.psk' && test -f '$M/$J/empty.psg'"
check "   ... assets and the arena without extension are still directories" \
	test -d "$M/$J/SHOUTY.PSG/objects" -a -d "$M/$J/model_without_extension/objects"
check "   ... psgfs-tool --sniff-all find lists what the mount shows" \
	cmp -s <(timeout 120 "$PSGFS_TOOL" --sniff-all find "$SRC" 2>/dev/null | sort) <(tree_of "$M")
unmount_psgfs "$M"

# ---- real-shaped assets (psgfs-gen folder --real-shape): links and memory ----
# Skater models whose materials name their companion's textures, companions of real-sized DXT
# textures, per-texture 0x<GUID> arenas. grep -r over every names.txt (every asset opened and
# listed, every material's links resolved) keeps the daemon's RssAnon within the cache budget
# plus a fixed margin (bench/run row 7 does the same over 4,000 assets at the default budget).
RS=$WORK/real
timeout 300 "$PSGFS_GEN" folder --seed 5 --assets 200 --real-shape "$RS" >/dev/null
rsm=$WORK/realm
mount_psgfs "$RS" "$rsm" -o cache_size=4M
pid=$(pgrep -n -f "psgfs $RS")
peak_rss "$pid" "$WORK/real.rss"
sampler=$!
m1=$(cd "$rsm" && find data/content/createacharacter/model/cas_db -name '*_Textures.psg' | sort | sed -n 1p)
m1=${m1%_Textures.psg}.psg
check "real shape: a model's diffuse channel names a texture of its companion" \
	grep -q '^1	diffuse	stream	diffuse	0x2C7F381800171900	texture 0x2c7f381800171900$' \
	"$rsm/$m1/materials/00.skin_mat_0/material.txt"
check "real shape: ... which its material folder links" test -s "$rsm/$m1/materials/00.skin_mat_0/diffuse.dds"
check "real shape: per-texture arenas are named after their GUID" bash -c \
	"ls '$RS'/data/content/createacharacter/texture/*/g000 | grep -qx '0x2c7f3818001[0-9a-f]*\.psg'"
n_names=$(timeout 300 grep -r --include=names.txt -c . "$rsm" | grep -c /cas_db/)
n_models=$(cd "$RS" && find . -name '*_Textures.psg' | wc -l)
check "real shape: every model's skeleton/names.txt reads ($n_names of $n_models)" \
	test "$n_names" = "$n_models" -a "$n_models" -gt 50
sleep 0.2
peak=$(cat "$WORK/real.rss" 2>/dev/null || echo 0)
echo "# real-shaped folder of 200 assets, every names.txt read: peak RssAnon $peak kB at cache_size=4M"
if [ "$ASAN" = 1 ]; then echo "# ASan build: RssAnon reported, not bounded"; else
	check "real shape: peak RssAnon within 4 MiB + 16 MiB ($peak kB)" test "$peak" -le $(((4 + 16) * 1024))
fi
unmount_psgfs "$rsm"
wait "$sampler" 2>/dev/null || true

# ---- a file the daemon may not read: a directory anyone may enter, saying why ----
# The daemon runs as root without the capabilities that bypass file permissions, so the file
# of mode 000 is unreadable to it; readers are root and nobody (allow_other).
locked=$J/locked.psg
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$WORK"
	mu=$WORK/mu
	mkdir -p "$mu"
	MOUNTS+=("$mu")
	setpriv --inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search \
		timeout 30 "$PSGFS" -o allow_other "$SRC" "$mu"
	for _ in $(seq 100); do mountpoint -q "$mu" && break; sleep 0.05; done
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	check "unreadable file: a directory with mode 755" test "$(stat -c %a "$mu/$locked")" = 755
	check "unreadable file: info.txt says why, to root" \
		grep -qx 'status: cannot mount: cannot open: Permission denied' "$mu/$locked/info.txt"
	check "unreadable file: info.txt and errors.txt say why, to nobody" bash -c \
		"$(declare -f nobody); nobody cat '$mu/$locked/info.txt' | grep -q 'Permission denied' && nobody cat '$mu/$locked/errors.txt' | grep -q 'Permission denied'"
	check "unreadable file: the rest of the mount reads as before" \
		cmp -s "$mu/$J/SHOUTY.PSG/header.txt" <("$PSGFS_TOOL" cat "$SRC/$J/SHOUTY.PSG" header.txt)
	unmount_psgfs "$mu"
else
	echo "# skipped the unreadable-file mount: needs root and setpriv"
fi
finish
