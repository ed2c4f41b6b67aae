#!/usr/bin/env bash
# A generated texture arena mounted for real. Every texture has a .dds and a .png that
# ImageMagick decodes to the dimensions info.txt lists (cube maps: six frames); sizes exact.
. "$(dirname "$0")/lib.sh"

tex=$WORK/sky_Textures.psg
"$PSGFS_GEN" textures "$tex"
m=$WORK/m
mount_psgfs "$tex" "$m"

n=$(ls "$m/objects" | grep -c 'Texture\.bin$')
check "one .dds and one .png per Texture object ($n)" bash -c \
	"[ \$(ls '$m/textures' | grep -c '\.dds$') -eq $n ] && [ \$(ls '$m/textures' | grep -c '\.png$') -eq $n ]"
check "info.txt lists every texture" test "$(sed -n '/^textures:/,/^problems/p' "$m/info.txt" | grep -c '^  ')" -eq "$n"
check "names come from the TableOfContents" bash -c "ls '$m/textures' | grep -q '^0x[0-9a-f]\{16\}\.dds$'"
check "no problems" test ! -s "$m/errors.txt"
check "st_size exact for every texture file" all_read_whole "$m/textures"
check "DDS magic on every .dds" bash -c "for f in '$m'/textures/*.dds; do [ \"\$(head -c4 \"\$f\")\" = 'DDS ' ] || exit 1; done"
check "PNG signature on every .png" bash -c \
	"for f in '$m'/textures/*.png; do [ \"\$(head -c8 \"\$f\" | od -An -tx1 | tr -d ' \n')\" = 89504e470d0a1a0a ] || exit 1; done"

if command -v identify >/dev/null && [[ $(identify -version 2>/dev/null) == *ImageMagick* ]]; then
	bad=0
	while read -r name fmt dims mips kind; do
		for ext in dds png; do
			f=$m/textures/$name.$ext
			got=$(identify -format '%wx%h\n' "$f" 2>/dev/null | sed -n 1p)
			want=$dims
			# a cube map's picture holds its six faces side by side
			if [ "$ext" = png ] && [ "$kind" = cube ]; then
				want="$((${dims%x*} * 6))x${dims#*x}"
			fi
			frames=$(identify -format '%p\n' "$f" 2>/dev/null | wc -l)
			if [ "$got" != "$want" ]; then
				echo "$name.$ext ($fmt): ImageMagick says '$got', expected $want"
				bad=1
			fi
			if [ "$ext" = dds ] && [ "$kind" = cube ] && [ "$frames" -lt 6 ]; then
				echo "$name.dds: cube map with $frames frames"
				bad=1
			fi
		done
	done < <(sed -n '/^textures:/,/^problems/p' "$m/info.txt" | grep '^  ' | sed 's/^  //')
	check "ImageMagick decodes every .dds and .png to the listed dimensions" test "$bad" = 0
else
	echo "# skip ImageMagick checks: identify not installed"
fi

# A texture whose base resource is too small: EIO for its pictures, raw bytes still there.
broken=$WORK/broken.psg
cp "$tex" "$broken"
dict=$(od -An -tu4 --endian=big -j $((0x30)) -N4 "$broken" | tr -d ' ')
# row 0 is the first texture's base resource (texture arenas: [BaseRes, Texture] x k)
printf '\x00\x00\x00\x10' | dd of="$broken" bs=1 seek=$((dict + 8)) conv=notrunc status=none
bm=$WORK/b
mount_psgfs "$broken" "$bm"
first=$(ls "$bm/textures" | sed -n 1p)
check "short base resource: errors.txt names the texture" grep -qi 'texture' "$bm/errors.txt"
check "short base resource: its .dds/.png return EIO" bash -c \
	"! cat '$bm/textures/${first%.*}.dds' > /dev/null 2> '$WORK/e1' && grep -q 'Input/output error' '$WORK/e1'"
check "short base resource: raw objects still read" bash -c "cat '$bm'/objects/*.bin > /dev/null"

# The real tool-made shape: a DXT5 256x256 cube map whose base resource holds one face. What
# is whole is served (a 2D DDS of that face, its picture); errors.txt says what is missing.
short=$WORK/short.psg
"$PSGFS_GEN" textures --short-cube "$short"
sm=$WORK/s
mount_psgfs "$short" "$sm"
cube=$(grep 'DXT5 256x256 1 cube' "$sm/info.txt" | awk '{print $1}')
check "short cube: listed in info.txt" test -n "$cube"
check "short cube: errors.txt says one face of the cube is served" \
	grep -q "holds 65536 bytes.*needs 393216; serving 1 face with 1 mip level" "$sm/errors.txt"
check "short cube: the .dds is the one whole face (128 + 65536 bytes)" \
	test "$(stat -c %s "$sm/textures/$cube.dds")" = 65664
if command -v identify > /dev/null; then
	check "short cube: ImageMagick reads the .dds as one 256x256 image" \
		test "$(identify -format '%wx%h\n' "$sm/textures/$cube.dds" | tr '\n' ' ')" = "256x256 "
	check "short cube: and the .png as 256x256" \
		test "$(identify -format '%wx%h' "$sm/textures/$cube.png")" = 256x256
fi
# The benchmark shape: 19 DXT1/DXT5 textures up to 1024x1024 with full chains, one cube map.
real=$WORK/real.psg
"$PSGFS_GEN" textures --real-shape "$real"
rm=$WORK/r
mount_psgfs "$real" "$rm"
check "real shape: 38 files in textures/" test "$(ls "$rm/textures" | wc -l)" = 38
check "real shape: one cube map, the largest 1024x1024 with 11 levels" bash -c "
	[ \$(grep -c ' cube\$' '$rm/info.txt') = 1 ] && grep -q ' DXT1 1024x1024 11 2d\$' '$rm/info.txt'"
check "real shape: no problems" test ! -s "$rm/errors.txt"

finish
