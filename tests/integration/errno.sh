#!/usr/bin/env bash
# The errno of each operation on a mounted tree (like fuse-archive's tests): ENOENT, ENOTDIR,
# EISDIR, EROFS for every kind of write, and EIO for a decoded view that cannot be decoded
# (its raw .bin stays readable).
. "$(dirname "$0")/lib.sh"
: "${ERRNO_PROBE:?}"

# is ERRNO OP PATH [PATH2]: the operation's outcome is ERRNO ("OK" for success).
is() {
	local want=$1 got
	shift
	got=$(timeout 10 "$ERRNO_PROBE" "$@")
	[ "$got" = "$want" ] || { echo "# $*: got $got, want $want"; return 1; }
}

sky=$WORK/sky.psg
"$PSGFS_GEN" sky "$sky"
m=$WORK/m
mount_psgfs "$sky" "$m"
f=$m/info.txt
d=$m/objects
obj=$m/objects/0004.VertexBuffer.bin

check "baseline: stat, open, read of a file are OK" bash -c \
	"[ \$('$ERRNO_PROBE' stat '$f') = OK ] && [ \$('$ERRNO_PROBE' read '$f') = OK ] && [ \$('$ERRNO_PROBE' readdir '$d') = OK ]"

# ENOENT
check "ENOENT: stat of a missing name" is ENOENT stat "$m/nope"
check "ENOENT: stat of a missing name, twice (negative entry cached)" is ENOENT stat "$m/nope"
check "ENOENT: lstat of a missing name in a subdirectory" is ENOENT lstat "$d/9999.Nothing.bin"
check "ENOENT: open of a missing file" is ENOENT open_r "$m/missing.txt"
check "ENOENT: opendir of a missing directory" is ENOENT readdir "$m/nodir"
check "ENOENT: a missing name under a missing directory" is ENOENT stat "$m/nodir/x"

# ENOTDIR
check "ENOTDIR: stat of info.txt/x" is ENOTDIR stat "$f/x"
check "ENOTDIR: open of info.txt/x" is ENOTDIR open_r "$f/x"
check "ENOTDIR: open O_DIRECTORY of a file" is ENOTDIR open_dir "$f"
check "ENOTDIR: opendir of a file" is ENOTDIR readdir "$obj"

# EISDIR
check "EISDIR: read of a directory" is EISDIR read "$d"
check "EISDIR: read of the root" is EISDIR read "$m"
check "EISDIR: open O_WRONLY of a directory" is EISDIR open_w "$d"

# EROFS: every write, on files, directories and new names
check "EROFS: open O_WRONLY" is EROFS open_w "$f"
check "EROFS: open O_RDWR" is EROFS open_rw "$f"
check "EROFS: open O_RDWR of a raw object" is EROFS open_rw "$obj"
check "EROFS: open O_CREAT of a new name" is EROFS open_creat "$m/new.txt"
check "EROFS: open O_CREAT of an existing file" is EROFS open_creat "$f"
check "EROFS: open O_TRUNC" is EROFS open_trunc "$f"
check "EROFS: access(W_OK)" is EROFS access_w "$f"
check "EROFS: truncate" is EROFS truncate "$f"
check "EROFS: mkdir" is EROFS mkdir "$m/newdir"
check "EROFS: mkdir in a subdirectory" is EROFS mkdir "$d/newdir"
check "EROFS: rmdir" is EROFS rmdir "$d"
check "EROFS: unlink" is EROFS unlink "$f"
check "EROFS: rename" is EROFS rename "$f" "$m/renamed.txt"
check "EROFS: rename of a directory" is EROFS rename "$d" "$m/objs"
check "EROFS: symlink" is EROFS symlink "$m/link" info.txt
check "EROFS: link" is EROFS link "$f" "$m/hard.txt"
check "EROFS: mknod (FIFO)" is EROFS mknod "$m/fifo"
check "EROFS: chmod" is EROFS chmod "$f"
check "EROFS: chmod of a directory" is EROFS chmod "$d"
check "EROFS: chown" is EROFS chown "$f"
check "EROFS: utime (touch)" is EROFS utime "$f"
check "EROFS: setxattr" is EROFS setxattr "$f"
check "EROFS: removexattr" is EROFS removexattr "$f"
check "the tree is unchanged after all that" same_as_tool "$sky" "$m"

# EIO: a RenderOptiMeshData whose dictionary size says 8 bytes (the header needs 0x60). The
# size field of entry i is at dictStart + 24*i + 8; dictStart is the big-endian u32 at 0x30.
broken=$WORK/broken.psg
cp "$sky" "$broken"
ds=$((16#$(od -An -tx1 -j $((0x30)) -N4 "$sky" | tr -d ' \n')))
i=$(ls "$m/objects" | sed -n 's/^0*\([0-9][0-9]*\)\.RenderOptiMeshData\.bin$/\1/p' | sed -n 1p)
check "the sky has a RenderOptiMeshData (index ${i:-none})" test -n "$i"
printf '\x00\x00\x00\x08' | dd of="$broken" bs=1 seek=$((ds + 24 * i + 8)) conv=notrunc status=none
b=$WORK/b
mount_psgfs "$broken" "$b"
name=$(printf '%04d.RenderOptiMeshData' "$i")
check "EIO: stat of the broken view" is EIO stat "$b/objects/$name.txt"
check "EIO: read of the broken view" is EIO read "$b/objects/$name.txt"
check "EIO: again (the failure is remembered, not re-decoded into something else)" \
	is EIO read "$b/objects/$name.txt"
check "EIO: the mesh built on it" is EIO read "$b/meshes/00/vertices.tsv"
check "the raw .bin stays readable with the new size (8)" \
	test "$(stat -c %s "$b/objects/$name.bin")" = 8
check "the raw .bin is the first 8 bytes of the original object" \
	cmp -s "$b/objects/$name.bin" <(head -c 8 "$m/objects/$name.bin")
check "errors.txt names the object" grep -q "object $i (RenderOptiMeshData)" "$b/errors.txt"
check "the listing still shows the broken view" bash -c "ls '$b/objects' | grep -qx '$name.txt'"
check "other views of the broken arena read fine" is OK read "$b/objects/0004.VertexBuffer.txt"
finish
