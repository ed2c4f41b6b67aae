#!/usr/bin/env bash
# Permissions, owner and group follow the source file: files readable where the source is
# (never executable), directories searchable where readable, and the owner may write, as in a
# read-only image of an ordinary tree (writes fail with EROFS all the same); -o umask= takes bits
# away; with allow_other a private source stays private (the kernel checks the bits:
# default_permissions).
. "$(dirname "$0")/lib.sh"

chmod 0711 "$WORK" # other users reach the mount points; the mounts decide the rest
src=$WORK/sky.psg
"$PSGFS_GEN" sky "$src"
chown 1234:5678 "$src"

mode_of() { stat -c %a "$1"; }
owner_of() { stat -c %u:%g "$1"; }

chmod 0640 "$src"
m=$WORK/m1
mount_psgfs "$src" "$m"
check "0640 source: files are 0640" test "$(mode_of "$m/info.txt")" = 640
check "0640 source: raw objects are 0640 too" test "$(mode_of "$m/objects/0000.VersionData.bin")" = 640
check "0640 source: directories are 0750" test "$(mode_of "$m/objects")" = 750
check "0640 source: the root is 0750" test "$(mode_of "$m")" = 750
check "owner and group are the source's" test "$(owner_of "$m/info.txt")" = 1234:5678
check "owner and group on directories too" test "$(owner_of "$m/meshes")" = 1234:5678
check "a copy out of the mount is writable by its owner after cp -r (root)" bash -c \
	"cp -r '$m/skeleton' '$WORK/copy' && rm -rf '$WORK/copy'"
unmount_psgfs "$m"

chmod 0644 "$src"
m=$WORK/m2
mount_psgfs "$src" "$m" -o umask=027
check "-o umask=027 on a 0644 source: files 0640" test "$(mode_of "$m/info.txt")" = 640
check "-o umask=027: directories 0750" test "$(mode_of "$m/objects")" = 750
unmount_psgfs "$m"

if command -v setpriv > /dev/null; then
	chmod 0600 "$src"
	m=$WORK/m3
	mount_psgfs "$src" "$m" -o allow_other
	check "allow_other, 0600 source: files are 0600" test "$(mode_of "$m/info.txt")" = 600
	check "allow_other, 0600 source: another user cannot list the root" bash -c \
		"! setpriv --reuid=65534 --regid=65534 --clear-groups ls '$m' > /dev/null 2>&1"
	check "allow_other, 0600 source: another user cannot read a file" bash -c \
		"! setpriv --reuid=65534 --regid=65534 --clear-groups cat '$m/info.txt' > /dev/null 2>&1"
	unmount_psgfs "$m"
	chmod 0644 "$src"
	m=$WORK/m4
	mount_psgfs "$src" "$m" -o allow_other
	check "allow_other, 0644 source: another user reads every file" bash -c \
		"setpriv --reuid=65534 --regid=65534 --clear-groups find '$m' -type f -exec cat {} + > /dev/null"
	unmount_psgfs "$m"
else
	echo "# setpriv missing: other-user checks skipped"
fi
# Folder mounts: a folder keeps the source folder's own r and x bits (issue 21 item 2): one
# readable but not searchable stays unsearchable, one searchable but not readable stays so; the
# owner may write, as everywhere.
# Files shown as directories (assets) keep the asset rule: r on the file gives r and x.
fsrc=$WORK/fsrc
mkdir -p "$fsrc/rx" "$fsrc/r_only" "$fsrc/x_only" "$fsrc/x711"
for d in rx r_only x_only x711; do cp "$src" "$fsrc/$d/a.psg" && echo secret > "$fsrc/$d/notes.txt"; done
chmod 0644 "$fsrc"/*/a.psg "$fsrc"/*/notes.txt
chmod 0755 "$fsrc/rx"
chmod 0744 "$fsrc/r_only"
chmod 0311 "$fsrc/x_only"
chmod 0711 "$fsrc/x711"
chmod 0755 "$fsrc"
m=$WORK/m6
mount_psgfs "$fsrc" "$m" -o allow_other
check "folder 0755: 0755" test "$(mode_of "$m/rx")" = 755
check "folder 0744 (readable, not searchable): 0744, not 0755" test "$(mode_of "$m/r_only")" = 744
check "folder 0311 (searchable, not readable): 0311" test "$(mode_of "$m/x_only")" = 311
check "folder 0711: 0711" test "$(mode_of "$m/x711")" = 711
check "the mounted folder itself: 0755" test "$(mode_of "$m")" = 755
check "an asset in a folder: r on the file gives r and x (0644 -> 0755)" \
	test "$(mode_of "$m/rx/a.psg")" = 755
if command -v setpriv > /dev/null; then
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	check "another user cannot read a file below a 0744 folder" bash -c \
		"$(declare -f nobody); ! nobody cat '$m/r_only/notes.txt' > /dev/null 2>&1"
	check "   ... as on the source" bash -c \
		"$(declare -f nobody); ! nobody cat '$fsrc/r_only/notes.txt' > /dev/null 2>&1"
	check "   ... while a 0755 folder's file reads" bash -c \
		"$(declare -f nobody); nobody cat '$m/rx/notes.txt' > /dev/null"
	check "another user reaches a file below a 0311 folder, as on the source" bash -c \
		"$(declare -f nobody); nobody cat '$m/x_only/notes.txt' > /dev/null && nobody cat '$fsrc/x_only/notes.txt' > /dev/null"
	check "   ... but cannot list the folder" bash -c \
		"$(declare -f nobody); ! nobody ls '$m/x_only' > /dev/null 2>&1"
fi
unmount_psgfs "$m"
# Copies out of the mount (issue 29 item 7): the bits are a read-only image of an ordinary
# tree's (the owner may write), so another user's cp -r of a mount gives a tree that user can
# remove without chmod, for every container: a single file, a folder with subfolders, assets
# and an archive, and an archive on its own. Every write into the mount still fails with EROFS.
if command -v setpriv > /dev/null; then
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	csrc=$WORK/csrc
	mkdir -p "$csrc/sub/deeper"
	cp "$src" "$csrc/sky.psg"
	echo hello > "$csrc/sub/notes.txt"
	"$PSGFS_GEN" psk --seed 3 "$csrc/sub/deeper/board.psk"
	"$MKARC" "$csrc/game.big" data/model sky.psg "$src" data notes.txt "$csrc/sub/notes.txt"
	chmod -R u=rwX,go=rX "$csrc"
	out=$WORK/out
	mkdir -m 0777 "$out"
	# copy_and_remove MNT: nobody copies the whole mount, then removes the copy.
	copy_and_remove() {
		nobody sh -c "umask 022 && cp -r '$1' '$out/copy' && rm -rf '$out/copy'" 2>&1 | head -3
		[ ! -e "$out/copy" ] || { rm -rf "$out/copy"; return 1; }
	}
	# writes_refused MNT FILE DIR: every write as nobody (who owns nothing here) and as the
	# source's owner (root) gets EROFS.
	# With texture mods (writes=daemon) the mount is not read-only: the daemon answers EROFS, and
	# access(W_OK) only reads the bits.
	writes_refused() {
		local m=$1 f=$1/$2 d=$1/$3 bad=0 op got who acc="access_w $1/$2"
		[ "${4:-}" = daemon ] && acc="open_w $f"
		for who in nobody ""; do
			for op in "open_w $f" "open_rw $f" "open_trunc $f" "open_creat $d/new.txt" \
				"$acc" "truncate $f" "mkdir $d/newdir" "rmdir $d" \
				"unlink $f" "rename $f $m/renamed" "rename $d $m/renamed" \
				"symlink $d/link x" "link $f $d/hard" "mknod $d/fifo" "chmod $f" \
				"chmod $d" "utime $f" "utime $d" "setxattr $f" "removexattr $f"; do
				# shellcheck disable=SC2086
				got=$($who timeout 10 "$ERRNO_PROBE" $op)
				[ "$got" = EROFS ] || { echo "# ${who:-root} $op: $got"; bad=1; }
			done
		done
		return $bad
	}
	m=$WORK/c1
	mount_psgfs "$src" "$m" -o allow_other
	check "single file: files 0644 and directories 0755 from a 0644 source" test \
		"$(mode_of "$m/info.txt") $(mode_of "$m/skeleton") $(mode_of "$m")" = "644 755 755"
	check "single file: another user's cp -r of the mount can be removed by that user" \
		copy_and_remove "$m"
	check "single file: every write still fails with EROFS" writes_refused "$m" info.txt skeleton
	unmount_psgfs "$m"
	m=$WORK/c2
	mount_psgfs "$csrc" "$m" -o allow_other
	check "folder: folders, assets, archives 0755, files 0644" test "$(mode_of "$m/sub") \
$(mode_of "$m/sky.psg") $(mode_of "$m/game.big") $(mode_of "$m/game.big/data") \
$(mode_of "$m/sub/notes.txt") $(mode_of "$m/game.big/data/notes.txt") \
$(mode_of "$m/game.big/info.txt")" = "755 755 755 755 644 644 644"
	check "folder: another user's cp -r of the mount can be removed by that user" \
		copy_and_remove "$m"
	check "folder: every write still fails with EROFS" writes_refused "$m" sub/notes.txt sub
	check "   ... in an archive too" writes_refused "$m" game.big/data/notes.txt game.big/data
	check "   ... and in an asset" writes_refused "$m" sky.psg/info.txt sky.psg/skeleton
	unmount_psgfs "$m"
	m=$WORK/c3
	mount_psgfs "$csrc/game.big" "$m" -o allow_other
	check "archive: another user's cp -r of the mount can be removed by that user" \
		copy_and_remove "$m"
	check "archive: every write still fails with EROFS" writes_refused "$m" data/notes.txt data
	unmount_psgfs "$m"
	# Texture mods, the source owned by that user: only pictures take writes; everything else
	# the owner may now try reaches the daemon, which says EROFS (the kernel said EACCES).
	"$PSGFS_GEN" textures "$WORK/tex.psg" > /dev/null
	chown 65534:65534 "$WORK/tex.psg"
	mkdir "$WORK/mods_out"
	m=$WORK/c4
	mount_psgfs "$WORK/tex.psg" "$m" -o allow_other,mods="$WORK/mods_out"
	pics=("$m"/textures/*.dds)
	check "mods: pictures, textures/ and the rest 0644 and 0755" test "$(mode_of "$m/info.txt") \
$(mode_of "$m/objects") $(mode_of "$m/textures") $(mode_of "${pics[0]}")" = "644 755 755 644"
	check "mods: the owner's writes outside textures/ fail with EROFS" \
		writes_refused "$m" info.txt objects daemon
	check "mods: another user's cp -r of the mount can be removed by that user" \
		copy_and_remove "$m"
	unmount_psgfs "$m"
fi
check "writes still fail with EROFS" bash -c \
	"mount_dir=$WORK/m5; mkdir -p \$mount_dir; '$PSGFS' '$src' \$mount_dir && trap 'fusermount3 -u \$mount_dir' EXIT; ! touch \$mount_dir/x 2> '$WORK/touch.err'; grep -q 'Read-only file system' '$WORK/touch.err'"
finish
