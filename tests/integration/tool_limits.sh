#!/usr/bin/env bash
# psgfs-tool on inputs whose depth and size are theirs to choose (issue 30 items 1 and 2):
# a 1.5 KB BIGF whose one path is 700 folders deep and a deep folder (its paths past
# PATH_MAX) walk, list and extract on a 256 KiB stack, and mount; an extract writes holes as
# holes (three 1 TiB sparse files in a second) and refuses, with exit 7 and the file named,
# what does not fit in the space left.
. "$(dirname "$0")/lib.sh"

STACK_KB=256 # the tool once overflowed 8 MiB on these; every walk now keeps its stack on the heap

# ---- depth ----
# A BIGF of one entry a/a/.../a/f.txt, 700 folders deep (docs/archives.md: "BIGF", the archive
# size little-endian, then count and directory size big-endian, records {u32 offset, u32 size,
# name NUL}, the data 16-aligned after the packers' "L231" footer room).
python3 - "$WORK/deep.big" <<'EOF'
import struct, sys
name = ("a/" * 700 + "f.txt").encode()
data = b"at the bottom\n"
dir_end = 16 + 8 + len(name) + 1
at = (dir_end + 8 + 15) & ~15
p = bytearray(at + len(data))
p[0:4] = b"BIGF"
struct.pack_into("<I", p, 4, len(p))
struct.pack_into(">II", p, 8, 1, dir_end)
struct.pack_into(">II", p, 16, at, len(data))
p[24:24 + len(name)] = name
p[at:] = data
open(sys.argv[1], "wb").write(p)
EOF
# 300 folders of 20-byte names: 6,300-byte paths, each made relative to its parent. (Deeper
# costs time, not coverage: the folder layer opens a folder from the top, so a walk is
# quadratic in the depth, ~10 s at 1,000; the old recursion overflowed 256 KiB in 20 levels.)
python3 - "$WORK/deepdir" <<'EOF'
import os, sys
os.mkdir(sys.argv[1])
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for i in range(300):
    n = "deep-folder-%08d" % i
    os.mkdir(n, dir_fd=fd)
    sub = os.open(n, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = sub
w = os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
os.write(w, b"at the bottom\n")
os.close(w)
EOF
leaf_sha=$(printf 'at the bottom\n' | sha256sum | cut -d' ' -f1)

# tool_small_stack OUT COMMAND ARGS...: psgfs-tool on a small stack, its output in OUT.
tool_small_stack() {
	local out=$1
	shift
	(ulimit -s "$STACK_KB" && timeout 120 "$PSGFS_TOOL" "$@") >"$out" 2>"$out.err"
}

# find_lists OUT FILE LEVELS: find lists at least LEVELS folders and the leaf.
find_lists() {
	tool_small_stack "$1" find "$2" && [ "$(grep -c '/$' "$1")" -ge "$3" ] &&
		grep -Eq $'/(f|leaf)\.txt\t14$' "$1"
}

# walk_reads OUT FILE: walk reads every file.
walk_reads() {
	tool_small_stack "$1" walk "$2" && grep -qx 'failed 0' "$1"
}

# same_tree FILE DIR: DIR (an extract) holds the folders and files psgfs-tool finds in FILE
# (an archive extracts as its loose files: --assets files), each of its size; find(1) walks
# DIR relative to each folder, so no path has to fit PATH_MAX.
same_tree() {
	tool_small_stack "$WORK/tree.want" --assets files find "$1" &&
		sort "$WORK/tree.want" >"$WORK/tree.want.sorted" &&
		find "$2" -mindepth 1 \( -type d -printf '%P/\n' \) -o \( -type f -printf '%P\t%s\n' \) |
		sort >"$WORK/tree.got" && cmp -s "$WORK/tree.want.sorted" "$WORK/tree.got"
}

# leaf_reads DIR: the leaf read back (through a mount, or an extract), each folder entered by
# name.
leaf_reads() {
	[ "$(timeout 120 find "$1" \( -name f.txt -o -name leaf.txt \) -execdir cat {} +)" = \
		"at the bottom" ]
}

for src in deep.big deepdir; do
	in=$WORK/$src
	levels=$([ "$src" = deep.big ] && echo 700 || echo 300)
	check "$src: find on a $STACK_KB KiB stack lists all $levels folders and the leaf" \
		find_lists "$WORK/$src.find" "$in" "$levels"
	check "$src: walk on a $STACK_KB KiB stack reads every file" walk_reads "$WORK/$src.walk" "$in"
	tool_small_stack "$WORK/$src.man" manifest "$in" || true
	check "$src: manifest on a $STACK_KB KiB stack has the leaf with its bytes" \
		grep -Eq $'/(f|leaf)\\.txt\t14\t'"$leaf_sha"'$' "$WORK/$src.man"
	check "$src: extract on a $STACK_KB KiB stack succeeds" \
		tool_small_stack "$WORK/$src.exout" extract "$in" "$WORK/$src.out"
	check "$src: the extract holds the whole tree, paths past PATH_MAX included" \
		same_tree "$in" "$WORK/$src.out"
	check "$src: the extract's leaf holds its bytes" leaf_reads "$WORK/$src.out"
	# The daemon serves the same depth on the same small stack (its threads take it too).
	m=$WORK/mnt.$src
	mkdir -p "$m"
	(ulimit -s "$STACK_KB" && mount_psgfs "$in" "$m")
	MOUNTS+=("$m")
	check "$src: mounted, find walks all $levels folders" \
		[ "$(timeout 120 find "$m" -type d | wc -l)" -gt "$levels" ]
	check "$src: mounted, the leaf reads back" leaf_reads "$m"
	unmount_psgfs "$m"
done

# ---- space ----
# Everything is written to a 1 MiB tmpfs of our own (a private mount namespace, gone with it),
# so an extract that writes zeros fails in a moment instead of filling the disk.
# Three 1 TiB sparse files (one with 4 bytes at 512 GiB, one with 4 KiB of data at its start)
# and a small one: the extract is holes, not 3 TiB of zeros, and quick.
sp=$WORK/sparse
mkdir "$sp"
truncate -s 1T "$sp/a.bin" "$sp/b.bin" "$sp/c.bin"
printf 'data' | dd of="$sp/b.bin" bs=1 seek=$((1 << 39)) conv=notrunc status=none
head -c 4096 /dev/urandom | dd of="$sp/c.bin" conv=notrunc status=none
printf 'small\n' >"$sp/small.txt"
# Not enough space: 3 MiB of data between two small files.
full=$WORK/full
mkdir "$full"
printf 'first\n' >"$full/a.txt"
head -c $((3 << 20)) /dev/urandom >"$full/big.dat"
printf 'last\n' >"$full/z.txt"
# Folders alone, three deep: more than the inodes left too.
mkdir -p "$WORK/dirs/d1/d2/d3"
cat >"$WORK/space.sh" <<'EOF'
set -u
small=$1 full=$2 sp=$3 tool=$4 dirs=$5
mount -t tmpfs -o size=1m tmpfs "$small" || exit 90
out=$small/sparse
timeout 30 "$tool" extract "$sp" "$out" 2>"$small.err0"
echo "sparse $?"
stat -c 'size %s' "$out"/*.bin | sort -u
stat -c %b "$out"/*.bin | awk '{ s += $1 } END { print "blocks " s + 0 }'
cmp -s <(dd if="$out/b.bin" bs=1 skip=$((1 << 39)) count=4 status=none) <(printf data) &&
	echo "b.bin data"
cmp -s <(head -c 8192 "$out/c.bin") <(head -c 8192 "$sp/c.bin") && echo "c.bin data"
cmp -s "$out/small.txt" "$sp/small.txt" && echo "small.txt data"
rm -rf "$out"
"$tool" extract "$full" "$small/out" 2>"$small.err1"
echo "refused $?"
[ -e "$small/out" ] && echo "left out" || echo "nothing written"
"$tool" --no-space-check extract "$full" "$small/out2" 2>"$small.err2"
echo "forced $?"
umount "$small" && mount -t tmpfs -o size=1m,nr_inodes=3 tmpfs "$small" || exit 91
"$tool" extract "$sp" "$small/out" 2>"$small.err3"
echo "inodes $?"
"$tool" extract "$dirs" "$small/out" 2>"$small.err5"
echo "folders $?"
[ -e "$small/out" ] && echo "folders left out" || echo "folders nothing written"
umount "$small" && mount -t tmpfs -o size=1m,nr_inodes=2 tmpfs "$small" || exit 92
"$tool" extract "$sp" "$small/out" 2>"$small.err4"
echo "no inodes $?"
EOF
if [ "$(id -u)" = 0 ]; then ns=(unshare -m --propagation private); else ns=(unshare -rm --propagation private); fi
mkdir "$WORK/small"
"${ns[@]}" bash "$WORK/space.sh" "$WORK/small" "$full" "$sp" "$PSGFS_TOOL" "$WORK/dirs" >"$WORK/space.out" 2>&1 || true
said() { grep -qx "$1" "$WORK/space.out"; }
if said 'sparse [0-9]*'; then
	check "sparse: three 1 TiB sparse files extract into 1 MiB within 30 s" said 'sparse 0'
	check "sparse: the copies keep their 1 TiB size" said 'size 1099511627776'
	check "sparse: the copies are holes ($(grep '^blocks' "$WORK/space.out") of 512 bytes)" \
		said 'blocks [0-9]\{1,3\}'
	check "sparse: the data among the holes is copied" said 'b.bin data'
	check "sparse: the data at the start is copied" said 'c.bin data'
	check "sparse: the small file too" said 'small.txt data'
	err1=$(cat "$WORK/small.err1")
	check "no space: an extract larger than the space left is refused with exit 7" said 'refused 7'
	check "no space: in one line naming the file that does not fit ($err1)" \
		bash -c '[ "$(wc -l <"$0")" = 1 ] && grep -q "^psgfs-tool: big.dat: no space" "$0" &&
			grep -q -- "--no-space-check" "$0"' "$WORK/small.err1"
	check "no space: refused before anything is written" said 'nothing written'
	check "no space: --no-space-check writes until the disk is full, then exit 7 naming the file" \
		bash -c 'grep -qx "forced 7" "$0" && grep -q "^psgfs-tool: big.dat: no space left" "$1"' \
		"$WORK/space.out" "$WORK/small.err2"
	# 3 inodes: the tmpfs root and out/ take 2, a.bin the last; b.bin is one too many.
	check "no space: more files than inodes left is refused too, naming the file ($(cat "$WORK/small.err3"))" \
		bash -c 'grep -qx "inodes 7" "$0" && grep -q "^psgfs-tool: b.bin: no space for it" "$1"' \
		"$WORK/space.out" "$WORK/small.err3"
	# The same 3 inodes: d1 takes the last, d1/d2 is one too many; no file at all.
	check "no space: a tree of folders alone is measured too, naming the folder ($(cat "$WORK/small.err5"))" \
		bash -c 'grep -qx "folders 7" "$0" && grep -qx "folders nothing written" "$0" &&
			grep -q "^psgfs-tool: d1/d2: no space for it" "$1"' \
		"$WORK/space.out" "$WORK/small.err5"
	# 2 inodes: the tmpfs root and out/ take both, none is left: a.bin is already too many.
	check "no space: with no inode left at all the first file is refused ($(cat "$WORK/small.err4"))" \
		bash -c 'grep -qx "no inodes 7" "$0" && grep -q "^psgfs-tool: a.bin: no space for it" "$1"' \
		"$WORK/space.out" "$WORK/small.err4"
else
	not_ok "space: could not make a small tmpfs in a mount namespace: $(cat "$WORK/space.out")"
fi

finish
