#!/usr/bin/env bash
# Permissions, owner and group follow the source file: files readable where the source is
# (never executable), directories searchable where readable; -o umask= takes bits away; with
# allow_other a private source stays private (the kernel checks the bits: default_permissions).
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
check "0640 source: files are 0440" test "$(mode_of "$m/info.txt")" = 440
check "0640 source: raw objects are 0440 too" test "$(mode_of "$m/objects/0000.VersionData.bin")" = 440
check "0640 source: directories are 0550" test "$(mode_of "$m/objects")" = 550
check "0640 source: the root is 0550" test "$(mode_of "$m")" = 550
check "owner and group are the source's" test "$(owner_of "$m/info.txt")" = 1234:5678
check "owner and group on directories too" test "$(owner_of "$m/meshes")" = 1234:5678
check "a copy out of the mount is writable by its owner after cp -r (root)" bash -c \
	"cp -r '$m/skeleton' '$WORK/copy' && rm -rf '$WORK/copy'"
unmount_psgfs "$m"

chmod 0644 "$src"
m=$WORK/m2
mount_psgfs "$src" "$m" -o umask=027
check "-o umask=027 on a 0644 source: files 0440" test "$(mode_of "$m/info.txt")" = 440
check "-o umask=027: directories 0550" test "$(mode_of "$m/objects")" = 550
unmount_psgfs "$m"

if command -v setpriv > /dev/null; then
	chmod 0600 "$src"
	m=$WORK/m3
	mount_psgfs "$src" "$m" -o allow_other
	check "allow_other, 0600 source: files are 0400" test "$(mode_of "$m/info.txt")" = 400
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
# readable but not searchable stays unsearchable, one searchable but not readable stays so.
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
check "folder 0755: 0555" test "$(mode_of "$m/rx")" = 555
check "folder 0744 (readable, not searchable): 0544, not 0555" test "$(mode_of "$m/r_only")" = 544
check "folder 0311 (searchable, not readable): 0111" test "$(mode_of "$m/x_only")" = 111
check "folder 0711: 0511" test "$(mode_of "$m/x711")" = 511
check "the mounted folder itself: 0555" test "$(mode_of "$m")" = 555
check "an asset in a folder: r on the file gives r and x (0644 -> 0555)" \
	test "$(mode_of "$m/rx/a.psg")" = 555
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
check "writes still fail with EROFS" bash -c \
	"mount_dir=$WORK/m5; mkdir -p \$mount_dir; '$PSGFS' '$src' \$mount_dir && trap 'fusermount3 -u \$mount_dir' EXIT; ! touch \$mount_dir/x 2> '$WORK/touch.err'; grep -q 'Read-only file system' '$WORK/touch.err'"
finish
