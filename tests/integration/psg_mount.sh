#!/usr/bin/env bash
# Generated arenas mounted for real (normal, shuffled dictionary, textures, several
# hundred objects). Every objects/*.bin must hash to what the generator recorded it wrote.
. "$(dirname "$0")/lib.sh"

# verify_objects MNT RECORD: every recorded row has exactly one objects/NNNN.*.bin with the
# recorded FNV-1a 64 hash (all files hashed in one psgfs-gen call).
verify_objects() {
	local m=$1 rec=$2
	(cd "$m/objects" && "$PSGFS_GEN" hash *.bin) |
		awk '{split($2, p, "."); print (p[1] + 0) "\t" $1}' | sort -n > "$WORK/got.tsv"
	tail -n +2 "$rec" | awk -F'\t' '{print $1 "\t" $5}' | sort -n > "$WORK/want.tsv"
	local n
	n=$(wc -l < "$WORK/want.tsv")
	echo "# $n objects verified"
	[ "$n" -gt 0 ] && diff "$WORK/want.tsv" "$WORK/got.tsv" > /dev/null
}

sky=$WORK/sky.psg
"$PSGFS_GEN" sky --record "$WORK/sky.rec" "$sky"
m=$WORK/sky
mount_psgfs "$sky" "$m"
check "sky: root layout" test "$(ls "$m" | tr '\n' ' ')" = \
	"dictionary.tsv errors-full.txt errors.txt export header.txt info.txt materials meshes objects sections skeleton toc.tsv "
check "sky: sections/ has types, subreferences, external arenas" \
	test "$(ls "$m/sections" | tr '\n' ' ')" = "external_arenas.tsv subreferences.tsv types.tsv "
check "sky: 12 raw objects" test "$(ls "$m/objects" | grep -c '\.bin$')" -eq 12
check "sky: every object matches the generator's record" verify_objects "$m" "$WORK/sky.rec"
check "sky: dictionary.tsv columns" bash -c "head -1 '$m/dictionary.tsv' | grep -q '^index	type_id	type_name	type_index	offset	size	align'"
check "sky: dictionary.tsv has 12 rows" test "$(wc -l < "$m/dictionary.tsv")" -eq 13
tail -n +2 "$m/dictionary.tsv" | while IFS=$'\t' read -r idx _ _ _ off size _; do
	printf '%s\t%d\t%d\n' "$idx" "$off" "$size"
done > "$WORK/dict.dec"
check "sky: dictionary offsets and sizes are the recorded ones" \
	diff <(tail -n +2 "$WORK/sky.rec" | cut -f1,3,4) "$WORK/dict.dec"
check "sky: header.txt names fields and regions" bash -c \
	"grep -q '^dict_start: ' '$m/header.txt' && grep -q 'region_base\[5\] GRAPHICS_LOCAL' '$m/header.txt'"
check "sky: decoded views for known types" bash -c "ls '$m/objects' | grep -q '0010.RenderModelData.txt' && ls '$m/objects' | grep -q '0007.RenderOptiMeshData.txt'"
check "sky: references shown as -> NNNN.TypeName" grep -q -- '-> 0003.BaseResource' "$m/objects/0004.VertexBuffer.txt"
check "sky: toc.tsv has a header and a row" test "$(wc -l < "$m/toc.tsv")" -ge 2
check "sky: no problems" test ! -s "$m/errors.txt"
check "sky: st_size exact everywhere" all_read_whole "$m"
check "sky: same tree as psgfs-tool" same_as_tool "$sky" "$m"

shuf=$WORK/shuffled.psg
"$PSGFS_GEN" sky --shuffle-dict 99 --record "$WORK/shuf.rec" "$shuf"
s=$WORK/shuf
mount_psgfs "$shuf" "$s"
check "shuffled: dictionary order differs from the plain sky" \
	bash -c "! cmp -s <(cut -f2 '$WORK/sky.rec') <(cut -f2 '$WORK/shuf.rec')"
check "shuffled: every object matches the record" verify_objects "$s" "$WORK/shuf.rec"
check "shuffled: same decoded mesh as the plain sky" bash -c \
	"cmp -s '$m/meshes/00/vertices.tsv' '$s/meshes/00/vertices.tsv' && cmp -s '$m/meshes/00/triangles.tsv' '$s/meshes/00/triangles.tsv'"
check "shuffled: same bones" cmp -s "$m/skeleton/bones.tsv" "$s/skeleton/bones.tsv"
check "shuffled: no problems" test ! -s "$s/errors.txt"

tex=$WORK/tex.psg
"$PSGFS_GEN" textures --record "$WORK/tex.rec" "$tex"
t=$WORK/tex
mount_psgfs "$tex" "$t"
check "textures: every object matches the record" verify_objects "$t" "$WORK/tex.rec"
check "textures: textures/ lists a .dds and a .png per texture" bash -c \
	"[ \$(ls '$t/textures' | grep -c '\.dds$') -eq \$(ls '$t/textures' | grep -c '\.png$') ] && [ \$(ls '$t/textures' | grep -c '\.dds$') -eq \$(ls '$t/objects' | grep -c 'Texture.bin$') ]"

big=$WORK/big.psg
"$PSGFS_GEN" sized --size 3M --seed 4 --record "$WORK/big.rec" "$big"
b=$WORK/big
mount_psgfs "$big" "$b"
nobj=$(($(wc -l < "$WORK/big.rec") - 1))
check "sized: several hundred objects ($nobj)" test "$nobj" -ge 300
check "sized: every object matches the record" verify_objects "$b" "$WORK/big.rec"
check "sized: every file reads back its st_size" all_read_whole "$b"
# info.txt says what the .pskx holds: the sky has no normals, colours or second UV set, so its
# .pskx is the .psk's bytes and info.txt says so; a skinned model's adds its normals.
"$PSGFS_GEN" skinned --seed 3 "$WORK/sk.psg"
check "pskx: the sky's info.txt says the .pskx is the .psk's bytes, and it is" bash -c "
	'$PSGFS_TOOL' cat '$sky' info.txt | grep -q '; .pskx: the same bytes as the .psk (' &&
	cmp -s <('$PSGFS_TOOL' cat '$sky' export/sky.psk) <('$PSGFS_TOOL' cat '$sky' export/sky.pskx)"
check "pskx: a model with normals says what the .pskx adds, and it differs" bash -c "
	'$PSGFS_TOOL' cat '$WORK/sk.psg' info.txt | grep -q '; .pskx: the .psk.s chunks + normals (VTXNORMS)' &&
	! cmp -s <('$PSGFS_TOOL' cat '$WORK/sk.psg' export/sk.psk) <('$PSGFS_TOOL' cat '$WORK/sk.psg' export/sk.pskx)"

# A truncated arena lists only objects whose bytes exist: everything listed stats (ls -l and
# find -printf print no error), errors.txt says which bytes are missing.
cut=$WORK/cut.psg
cp "$sky" "$cut"
truncate -s -2000 "$cut"
mc=$WORK/mcut
mount_psgfs "$cut" "$mc"
check "truncated: the object whose bytes are gone has no .bin" test ! -e "$mc/objects/0005.BaseResource.bin"
check "truncated: its view is still there" test -s "$mc/objects/0005.BaseResource.txt"
check "truncated: ls -l of objects/ prints no error" bash -c "ls -l '$mc/objects' > /dev/null 2> '$WORK/ls.err' && ! test -s '$WORK/ls.err'"
check "truncated: find -printf %s over objects/ prints no error" bash -c \
	"find '$mc/objects' -printf '%s\n' > /dev/null 2> '$WORK/find.err' && ! test -s '$WORK/find.err'"
check "truncated: errors.txt says which bytes are missing" grep -q "^object 5 (BaseResource): bytes .* past end of file" "$mc/errors.txt"
unmount_psgfs "$mc"
cp "$tex" "$cut"
truncate -s -20000 "$cut"
mount_psgfs "$cut" "$mc"
check "truncated textures: ls -l of textures/ prints no error" bash -c \
	"ls -l '$mc/textures' > /dev/null 2> '$WORK/ls.err' && ! test -s '$WORK/ls.err' && test -n \"\$(ls '$mc/textures')\""
check "truncated textures: the whole mount stats (find -printf)" bash -c \
	"find '$mc' -printf '%s\n' > /dev/null 2> '$WORK/find.err' && ! test -s '$WORK/find.err'"
check "truncated textures: info.txt says how many are not listed" \
	grep -qx "textures: (15 more not listed: their texels are past the end of the file, see errors.txt)" "$mc/info.txt"
unmount_psgfs "$mc"

finish
