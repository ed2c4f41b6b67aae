#!/usr/bin/env bash
# Xbox 360 texture arenas (.rx2) mounted for real next to their PS3 twins (the same source
# images): every twin's .dds and .png are the same bytes on both platforms, the pictures
# decode, DXN textures come out as ATI2 DDS files and RG pictures, and st_size is exact.
. "$(dirname "$0")/lib.sh"

x=$WORK/tex.rx2
p=$WORK/tex.psg
timeout 120 "$PSGFS_GEN" textures --platform x360 "$x"
timeout 120 "$PSGFS_GEN" textures --platform ps3-twin "$p"
mx=$WORK/mx
mp=$WORK/mp
mount_psgfs "$x" "$mx"
mount_psgfs "$p" "$mp"

check "the .rx2 mounts with a textures/ folder" test -d "$mx/textures"
check "info.txt names the platform" grep -q "^platform: xb2" "$mx/info.txt"
check "no problems" test ! -s "$mx/errors.txt"

twins_equal() {
	local n=0 f
	for f in "$mp"/textures/*; do
		cmp -s "$f" "$mx/textures/$(basename "$f")" || { echo "# differs: $(basename "$f")"; return 1; }
		n=$((n + 1))
	done
	echo "# $n twin files byte-identical"
	[ "$n" -gt 200 ]
}
check "every PS3 twin's .dds and .png equal the Xbox 360 ones" twins_equal

sizes_exact() {
	local f
	for f in "$mx"/textures/*; do
		[ "$(stat -c %s "$f")" = "$(wc -c < "$f")" ] || { echo "# $f"; return 1; }
	done
}
check "st_size exact for every texture file" sizes_exact

dxn=$(comm -23 <(ls "$mx/textures") <(ls "$mp/textures") | grep '\.dds$' | head -1)
check "DXN textures are listed (no PS3 twin)" test -n "$dxn"
check "a DXN .dds carries the ATI2 FourCC" bash -c \
	"[ \"\$(dd if='$mx/textures/$dxn' bs=1 skip=84 count=4 status=none)\" = ATI2 ]"
if command -v identify > /dev/null; then
	pngs_decode() {
		local f bad=0
		for f in "$mx"/textures/*.png; do
			identify "$f" > /dev/null 2>&1 || { echo "# $f"; bad=1; }
		done
		[ "$bad" = 0 ]
	}
	check "ImageMagick decodes every .png" pngs_decode
fi
finish
