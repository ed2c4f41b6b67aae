#!/usr/bin/env bash
# The mount serves what psgfs-tool renders: the manifest of a real FUSE mount (dir_manifest:
# path, size, SHA-256 of every file read through the kernel, directories, links, EIO rows)
# equals `psgfs-tool manifest` of the same input, for a few of the golden inputs (a model
# with its companion, Xbox 360 textures, a PSK, a truncated PSA whose views fail, a folder).
# Together with the golden test (tests/golden, scripts/golden) the mount's bytes are pinned.
. "$(dirname "$0")/lib.sh"
: "${DIR_MANIFEST:?}"
golden=$(dirname "$0")/../../scripts/golden

# x360-textures is 61 MB of views, rendered and hashed (SHA-256) by the tool and again through
# the mount: under ASan+UBSan that was 9.5 of this test's 11.3 CPU-seconds. Its bytes are the
# same in both builds, so the plain build compares them; the ASan build's x360_mount reads every
# file of the same generated arena through the daemon (tests/README.md).
names="ps3-sky x360-textures psk psa-truncated folder"
sanitized && names="ps3-sky psk psa-truncated folder"
for name in $names; do
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
