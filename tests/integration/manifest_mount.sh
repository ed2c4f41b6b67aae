#!/usr/bin/env bash
# The mount serves what psgfs-tool renders: the manifest of a real FUSE mount (dir_manifest:
# path, size, SHA-256 of every file read through the kernel, directories, links, EIO rows)
# equals `psgfs-tool manifest` of the same input, for a few of the golden inputs (a model
# with its companion, Xbox 360 textures, a PSK, a truncated PSA whose views fail, a folder).
# Together with the golden test (tests/golden, scripts/golden) the mount's bytes are pinned.
. "$(dirname "$0")/lib.sh"
: "${DIR_MANIFEST:?}"
golden=$(dirname "$0")/../../scripts/golden

for name in ps3-sky x360-textures psk psa-truncated folder; do
	mkdir "$WORK/$name"
	file=$("$golden" --gen "$name" "$WORK/$name")
	"$PSGFS_TOOL" manifest "$file" > "$WORK/$name.tool"
	mount_psgfs "$file" "$WORK/$name.mnt"
	"$DIR_MANIFEST" "$WORK/$name.mnt" > "$WORK/$name.mount" || true
	unmount_psgfs "$WORK/$name.mnt"
	echo "# $name: $(wc -l < "$WORK/$name.tool") entries, $(grep -c 'EIO$' "$WORK/$name.tool") EIO"
	check "$name: the mount's manifest is psgfs-tool's" \
		diff -u "$WORK/$name.tool" "$WORK/$name.mount"
done
finish
