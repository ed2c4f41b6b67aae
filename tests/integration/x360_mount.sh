#!/usr/bin/env bash
# Xbox 360 arenas (.rx2) mounted for real next to their PS3 twins. Textures (the same source
# images): every twin's .dds and .png are the same bytes on both platforms, the pictures
# decode, DXN textures come out as ATI2 DDS files and RG pictures, and st_size is exact.
# Models (the same generator seed): skeleton/, meshes/ and export/ exist and hold the PS3
# twin's bytes where the values are the same (exports, skeleton, palettes, skin, triangles,
# and vertices where no component was padded), descriptors name the Xbox 360 formats, the
# truth's counts hold, re-quantised and hostile variants mount and report.
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

# Every PS3 file has an Xbox 360 file of the same name, size and SHA-256 (one manifest each).
twins_equal() {
	local n
	"$DIR_MANIFEST" "$mp/textures" > "$WORK/twins.ps3" && "$DIR_MANIFEST" "$mx/textures" > "$WORK/twins.x360" ||
		return 1
	! grep -q 'EIO$' "$WORK/twins.ps3" || { echo "# a PS3 texture file does not read"; return 1; }
	comm -23 "$WORK/twins.ps3" "$WORK/twins.x360" | sed 's/^/# differs: /' | grep . && return 1
	n=$(wc -l < "$WORK/twins.ps3")
	echo "# $n twin files byte-identical"
	[ "$n" -gt 200 ]
}
check "every PS3 twin's .dds and .png equal the Xbox 360 ones" twins_equal

# info.txt names formats in one vocabulary: a twin's texture line is the same on both platforms
# (DXT5, not the Xenos DXT4_5, for byte-identical .dds output).
check "info.txt: every PS3 twin's texture line equals the Xbox 360 one" bash -c "
	p=\$(grep -E '^  0x' '$mp/info.txt' | sort); [ \$(echo \"\$p\" | wc -l) -gt 100 ] &&
	[ -z \"\$(comm -23 <(echo \"\$p\") <(grep -E '^  0x' '$mx/info.txt' | sort))\" ] &&
	! grep -q DXT4_5 '$mx/info.txt'"

# (twins_equal's manifest of the Xbox 360 folder read every file: EIO where one did not read
# exactly st_size bytes, as all_read_whole would say on reading them all again)
read_whole_x360() {
	[ -s "$WORK/twins.x360" ] &&
		! awk -F'\t' '$3 == "EIO" { print "# not read whole: " $1; bad = 1 } END { exit !bad }' \
			"$WORK/twins.x360" >&2
}
check "st_size exact for every texture file" read_whole_x360

dxn=$(comm -23 <(ls "$mx/textures") <(ls "$mp/textures") | grep '\.dds$' | sed -n 1p)
check "DXN textures are listed (no PS3 twin)" test -n "$dxn"
check "a DXN .dds carries the ATI2 FourCC" bash -c \
	"[ \"\$(dd if='$mx/textures/$dxn' bs=1 skip=84 count=4 status=none)\" = ATI2 ]"
if command -v identify > /dev/null; then
	# 64 files to an identify (one each cost more than the mount): it fails when any of them
	# does not decode, and says which.
	# The pictures are the same bytes in both builds (the golden manifests): every one in the
	# plain build, every 4th in the ASan build (tests/README.md).
	pngs_decode() {
		local step=1
		sanitized && step=4
		printf '%s\0' "$mx"/textures/*.png | awk -v RS='\0' -v ORS='\0' -v s=$step 'NR % s == 1 % s' |
			xargs -0 -n 64 identify 2>&1 >/dev/null | sed 's/^/# /'
		[ "${PIPESTATUS[2]}" = 0 ]
	}
	if sanitized; then
		check "ImageMagick decodes every 4th .png (every one in the plain build)" pngs_decode
	else
		check "ImageMagick decodes every .png" pngs_decode
	fi
fi

# ---- models ----

# twin STEM KIND ARGS...: the PS3 arena $WORK/p-STEM/STEM.psg and its Xbox 360 twin
# $WORK/x-STEM/STEM.rx2 (the same stem, so export/ names match), mounted at $mp-STEM, $mx-STEM.
twin() {
	local stem=$1 kind=$2
	shift 2
	mkdir -p "$WORK/p-$stem" "$WORK/x-$stem"
	timeout 120 "$PSGFS_GEN" "$kind" "$@" "$WORK/p-$stem/$stem.psg"
	timeout 120 "$PSGFS_GEN" "$kind" --platform x360 "$@" "$WORK/x-$stem/$stem.rx2"
	mount_psgfs "$WORK/p-$stem/$stem.psg" "$mp-$stem"
	mount_psgfs "$WORK/x-$stem/$stem.rx2" "$mx-$stem"
}

# same STEM PATH...: each file (relative to the mounts) is the same bytes on both platforms.
same() {
	local stem=$1 f n=0
	shift
	for f in "$@"; do
		cmp -s "$mp-$stem/$f" "$mx-$stem/$f" || { echo "# differs: $f"; return 1; }
		n=$((n + 1))
	done
	echo "# $n files byte-identical"
}

# The files whose bytes do not depend on the platform's formats.
model_files() {
	local m=$1
	(cd "$m" && find export skeleton -type f && ls meshes/*/skin.tsv meshes/*/triangles.tsv \
		meshes/*/palette.tsv) | sort
}

twin sky sky
check "sky: the .rx2 shows skeleton/, meshes/ and export/" \
	test "$(ls "$mx-sky" | grep -E '^(skeleton|meshes|export)$' | tr '\n' ' ')" = "export meshes skeleton "
check "sky: no problems" test ! -s "$mx-sky/errors.txt"
check "sky: info.txt names the platform and the position encoding" bash -c \
	"grep -q '^platform: xb2' '$mx-sky/info.txt' && grep -qx 'positions: 1 mesh FLOAT3 as f32' '$mx-sky/info.txt'"
check "sky: exports, skeleton, palette, skin, triangles and vertices equal the PS3 twin's" \
	same sky $(model_files "$mp-sky") meshes/00/vertices.tsv
check "sky: descriptor.txt names the Xbox 360 formats" bash -c \
	"grep -q '^0	XYZ	FLOAT3	3	0	16	0	PERVERTEX	yes	FLOAT3 as f32	POSITION 0$' '$mx-sky/meshes/00/descriptor.txt' &&
	 grep -q '^1	TEX0	SHORT2N	2	12	16	0	PERVERTEX	yes' '$mx-sky/meshes/00/descriptor.txt'"
check "sky: islands.tsv: primitive 4 (triangle list) and the base vertex" bash -c \
	"head -2 '$mx-sky/meshes/00/islands.tsv' | tr '\n' '|' | grep -qx 'island	start	count	primitive	base_vertex|0	0	285	4	0|'"
check "sky: the VertexDescriptor object view shows the Xbox 360 fields" \
	grep -q '^m_d3dVertexDeclaration: ' "$mx-sky/objects/0008.VertexDescriptor.txt"
check "sky: the VertexBuffer view names its base resource (the row before)" \
	grep -qx 'base resource (the row before): 0003.BaseResource (3680 bytes)' "$mx-sky/objects/0004.VertexBuffer.txt"

twin skater skinned --seed 9 --skater --rig-names --bones 30 --truth "$WORK/sk.truth"
check "skater: no problems" test ! -s "$mx-skater/errors.txt"
check "skater: info.txt names the bone-unit positions" \
	grep -qx 'positions: 4 meshes SHORT4N as s16/16384 (bone units)' "$mx-skater/info.txt"
check "skater: the rig gives the hierarchy as on PS3" bash -c \
	"diff <(grep '^hierarchy:' '$mp-skater/info.txt') <(grep '^hierarchy:' '$mx-skater/info.txt')"
check "skater: exports, skeleton, palettes, skin, triangles and vertices equal the PS3 twin's" \
	same skater $(model_files "$mp-skater") $(cd "$mp-skater" && ls meshes/*/vertices.tsv)
check "skater: vertex and triangle counts equal the truth" bash -c "
	awk -F'\t' '\$1==\"mesh\"{print \$2, \$5, \$6}' '$WORK/sk.truth' | while read -r i v t; do
		d='$mx-skater'/meshes/\$(printf '%02d' \$i)
		[ \$((\$(wc -l < \$d/vertices.tsv) - 1)) = \$v ] && [ \$((\$(wc -l < \$d/triangles.tsv) - 1)) = \$t ] || exit 1
	done"

# Every PS3 preset (u16 and u32 indices): exports and skin equal; vertices.tsv differs only
# where Xbox 360 stores a padded fourth component (FLOAT16_4 positions, SHORT4N normals).
twin all skinned --seed 4 --meshes 4
check "presets: exports, skeleton, palettes, skin and triangles equal the PS3 twin's" \
	same all $(model_files "$mp-all")
check "presets: vertices of meshes 0 and 2 equal the PS3 twin's" \
	same all meshes/00/vertices.tsv meshes/02/vertices.tsv
check "presets: mesh 1 has the same values plus a w column" bash -c \
	"diff <(cut -f1-4,5-7,8- '$mp-all/meshes/01/vertices.tsv') <(cut -f1-4,6-8,10- '$mx-all/meshes/01/vertices.tsv')"
check "presets: st_size exact everywhere" all_read_whole "$mx-all"

# The formats PS3 lacks (DEC3N, DHEN3N, USHORT2N, USHORT4N, SHORT4 indices): the same skeleton,
# palettes and triangles; the descriptors name them.
alt=$WORK/alt.rx2
timeout 120 "$PSGFS_GEN" skinned --seed 4 --meshes 4 --platform x360-alt "$alt"
ma=$WORK/ma
mount_psgfs "$alt" "$ma"
check "alt: no problems" test ! -s "$ma/errors.txt"
check "alt: descriptors name DEC3N, DHEN3N, USHORT2N, USHORT4N and SHORT4" bash -c \
	"cat '$ma'/meshes/*/descriptor.txt | grep -o -w -E 'DEC3N|DHEN3N|USHORT2N|USHORT4N|SHORT4' | sort -u | tr '\n' ' ' | grep -qx 'DEC3N DHEN3N SHORT4 USHORT2N USHORT4N '"
check "alt: skeleton and triangles equal the PS3 twin's" bash -c \
	"diff -r '$mp-all/skeleton' '$ma/skeleton' && for k in 00 01 02 03; do cmp -s '$mp-all/meshes/'\$k/triangles.tsv '$ma/meshes/'\$k/triangles.tsv || exit 1; done"

for h in palette index stride bones; do
	f=$WORK/xh-$h.rx2
	timeout 120 "$PSGFS_GEN" skinned --seed 9 --platform x360 --hostile "$h" "$f"
	hm=$WORK/xh-$h
	mount_psgfs "$f" "$hm"
	check "hostile $h: errors-full.txt lists the problem" test -s "$hm/errors-full.txt"
	check "hostile $h: every file reads or fails with EIO" all_files_read_or_eio "$hm"
done
finish
