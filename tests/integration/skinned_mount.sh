#!/usr/bin/env bash
# A generated skinned arena mounted for real. Bones, hierarchy, palettes, vertex and
# triangle counts equal the generator's truth; skin weights sum to 1 per vertex; the exported
# .psk reads back through psgfs itself and loads in DarkPlaces; hostile variants report.
. "$(dirname "$0")/lib.sh"

psg=$WORK/skater.psg
"$PSGFS_GEN" skinned --seed 9 --bones 14 --meshes 5 --truth "$WORK/truth.tsv" \
	--hierarchy-out "$WORK/hier.tsv" "$psg"
m=$WORK/m
mount_psgfs "$psg" "$m" -o hierarchy="$WORK/hier.tsv"

check "skeleton/: bones.tsv names.txt inverse_bind.tsv bones/" \
	test "$(ls "$m/skeleton" | tr '\n' ' ')" = "bones bones.tsv inverse_bind.tsv names.txt "
check "names.txt equals the generator's bone names" \
	diff <(awk -F'\t' '$1=="bone"{print $3}' "$WORK/truth.tsv") "$m/skeleton/names.txt"
check "bones.tsv parents equal the hierarchy" \
	diff <(awk -F'\t' '$1=="bone"{print $2"\t"$4}' "$WORK/truth.tsv") \
	<(tail -n +2 "$m/skeleton/bones.tsv" | cut -f1,3)
check "bones.tsv columns" bash -c "head -1 '$m/skeleton/bones.tsv' | grep -q '^index	name	parent	tx	ty	tz	qx	qy	qz	qw$'"
check "inverse_bind.tsv: 16 matrix columns per bone" \
	test "$(tail -n +2 "$m/skeleton/inverse_bind.tsv" | awk -F'\t' '{print NF}' | sort -u)" = 18
check "info.txt says the hierarchy came from the file" grep -q 'hierarchy: from the hierarchy file' "$m/info.txt"
check "one bone file per bone" test "$(ls "$m/skeleton/bones" | wc -l)" -eq 14
check "five meshes" test "$(ls "$m/meshes" | tr '\n' ' ')" = "00 01 02 03 04 "
all=1
while IFS=$'\t' read -r kind idx name _ verts tris palette; do
	[ "$kind" = mesh ] || continue
	d=$m/meshes/$(printf '%02d' "$idx")
	[ "$(($(wc -l < "$d/vertices.tsv") - 1))" = "$verts" ] || { echo "mesh $idx vertices"; all=0; }
	[ "$(($(wc -l < "$d/triangles.tsv") - 1))" = "$tris" ] || { echo "mesh $idx triangles"; all=0; }
	[ "$(tail -n +2 "$d/palette.tsv" | cut -f2 | paste -sd,)" = "$palette" ] || { echo "mesh $idx palette"; all=0; }
	# every vertex's weights sum to 1 and name bones of the palette only
	awk -F'\t' -v pal="$palette" 'NR>1{s[$1]+=$4; split(pal,p,","); ok=0; for(i in p) if(p[i]==$2) ok=1; if(!ok) bad=1}
		END{for(v in s) if(s[v]<0.999||s[v]>1.001) bad=1; exit bad}' "$d/skin.tsv" || { echo "mesh $idx skin"; all=0; }
done < "$WORK/truth.tsv"
check "per mesh: vertex, triangle counts, palettes and skin match the truth" test "$all" = 1
check "skin.tsv columns" bash -c "head -1 '$m/meshes/00/skin.tsv' | grep -q '^vertex	bone	name	weight$'"
check "triangles.tsv columns" bash -c "head -1 '$m/meshes/00/triangles.tsv' | grep -q '^triangle	a	b	c	island$'"
check "palette.tsv columns" bash -c "head -1 '$m/meshes/00/palette.tsv' | grep -q '^slot	bone	name$'"
check "islands.tsv columns" bash -c "head -1 '$m/meshes/00/islands.tsv' | grep -q '^island	start	count	primitive$'"
check "no problems" test ! -s "$m/errors.txt"
check "st_size exact everywhere" all_read_whole "$m"

# The export reads back through psgfs with the same skeleton and one point per vertex.
psk=$WORK/export.psk
cp "$m/export/skater.psk" "$psk"
e=$WORK/e
mount_psgfs "$psk" "$e"
verts=$(awk -F'\t' '$1=="mesh"{s+=$5}END{print s}' "$WORK/truth.tsv")
tris=$(awk -F'\t' '$1=="mesh"{s+=$6}END{print s}' "$WORK/truth.tsv")
check "export: $verts points and wedges, $tris faces, 14 bones, 5 materials" bash -c \
	"grep -q '^points: $verts$' '$e/info.txt' && grep -q '^wedges: $verts$' '$e/info.txt' && grep -q '^faces: $tris$' '$e/info.txt' && grep -q '^bones: 14$' '$e/info.txt' && grep -q '^materials: 5$' '$e/info.txt'"
check "export: bone names as in the PSG" diff <(sed 's/ *$//' "$e/skeleton/names.txt" | sort) <(sort "$m/skeleton/names.txt")
check "export: no problems reading it back" test ! -s "$e/errors.txt"
check "export: weights per point sum to 1" awk -F'\t' 'NR>1{s[$1]+=$4}END{for(p in s) if(s[p]<0.999||s[p]>1.001) exit 1}' "$e/weights.tsv"

if [ -x /usr/games/darkplaces-server ]; then
	base=$WORK/dp
	mkdir -p "$base/id1/models"
	cp "$psk" "$base/id1/models/s.psk"
	timeout 60 /usr/games/darkplaces-server -basedir "$base" -nohome +modeldecompile models/s.psk +quit \
		> "$WORK/dp.log" 2>&1 || true
	check "DarkPlaces loads the exported .psk ($tris faces)" \
		grep -q "Wrote models/s_decompiled.obj (.* $tris faces" "$WORK/dp.log"
else
	echo "# skip DarkPlaces: darkplaces-server not installed"
fi

# Without a hierarchy every bone hangs from bone 0, and info.txt says so.
n=$WORK/n
mount_psgfs "$psg" "$n"
check "no hierarchy: every bone but 0 has parent 0" \
	test "$(tail -n +3 "$n/skeleton/bones.tsv" | cut -f3 | sort -u)" = 0
check "no hierarchy: info.txt says so" grep -q 'hierarchy: not in the PSG' "$n/info.txt"

# -o zup rotates the export; bytes differ, counts do not.
z=$WORK/z
mount_psgfs "$psg" "$z" -o zup
check "zup export differs from the Y-up one" bash -c "! cmp -s '$z/export/skater.psk' '$m/export/skater.psk'"
check "zup export has the same size" test "$(stat -c %s "$z/export/skater.psk")" = "$(stat -c %s "$m/export/skater.psk")"

# Big meshes switch to FACE3200 and .pskx.
big=$WORK/big.psg
"$PSGFS_GEN" skinned --seed 3 --meshes 2 --verts 40000 --islands 2 --tris 200 "$big"
b=$WORK/b
mount_psgfs "$big" "$b"
check "more than 65536 wedges: export/big.pskx" test -f "$b/export/big.pskx"
cp "$b/export/big.pskx" "$WORK/big.pskx"
check "pskx uses FACE3200" bash -c "'$PSGFS_TOOL' ls '$WORK/big.pskx' chunks | grep -q FACE3200"

# Skater encodings (S1x4 positions in 1/16384 model units, UB256 weights / 255) and
# the built-in skater rig as the hierarchy when bone names match it.
sk=$WORK/sk.psg
"$PSGFS_GEN" skinned --skater --rig-names --truth "$WORK/sk.truth" "$sk"
s=$WORK/s
mount_psgfs "$sk" "$s"
check "skater: info.txt names the position scale" \
	grep -qx 'positions: 4 meshes S1x4 as s16/16384 (bone units)' "$s/info.txt"
check "skater: descriptor.txt names it per mesh" grep -qx \
	'position encoding: S1x4 as s16/16384 (bone units)' "$s/meshes/00/descriptor.txt"
check "skater: vertices.tsv holds the generator's model-space positions (1e-4)" bash -c "
	for k in 0 1 2 3; do
		tail -n +2 '$s/meshes/0'\$k/vertices.tsv | cut -f1-4 | sed \"s/^/\$k\t/\"
	done > '$WORK/got.tsv'
	awk -F'\t' '\$1==\"position\"{split(\$5,p,\" \"); print \$2\"\t\"\$3\"\t\"p[1]\"\t\"p[2]\"\t\"p[3]}' \
		'$WORK/sk.truth' > '$WORK/want.tsv'
	[ \$(wc -l < '$WORK/want.tsv') = 240 ] &&
	paste '$WORK/got.tsv' '$WORK/want.tsv' | awk -F'\t' '
		function d(a, b) { return a > b ? a - b : b - a }
		\$1 != \$6 || \$2 != \$7 || d(\$3, \$8) > 1e-4 || d(\$4, \$9) > 1e-4 || d(\$5, \$10) > 1e-4 { bad = 1 }
		END { exit bad }'"
check "skater: skin.tsv weights (UB256 / 255) sum to 1 per vertex" bash -c "
	tail -n +2 '$s/meshes/00/skin.tsv' | awk -F'\t' '{w[\$1] += \$NF} END {
		for (v in w) if (w[v] < 0.999 || w[v] > 1.001) exit 1 }'"
check "skater: info.txt says the rig gave the hierarchy" \
	grep -qx 'hierarchy: built-in Skate skater rig: 10 of 12 bones matched' "$s/info.txt"
check "skater: bones.tsv parents equal the rig's (the generator's truth)" \
	diff <(awk -F'\t' '$1=="bone"{print $2"\t"$4}' "$WORK/sk.truth") \
	<(tail -n +2 "$s/skeleton/bones.tsv" | cut -f1,3)
check "skater: leftupcheek hangs from offset_leftupcheek, its nearest present rig ancestor" \
	grep -qP '^9\tleftupcheek\t6\t' "$s/skeleton/bones.tsv"
check "skater: each bone's file says where the hierarchy came from" \
	grep -q 'hierarchy: built-in Skate skater rig' "$s/skeleton/bones/009.leftupcheek.txt"
cp "$s/export/sk.psk" "$WORK/sk.psk"
check "skater: the .psk has one root (extra roots hang from bone 0)" test \
	"$("$PSGFS_TOOL" cat "$WORK/sk.psk" skeleton/bones.tsv | tail -n +2 | cut -f3 | sort -u | tr '\n' ' ')" = "0 6 "
flat=$WORK/flat.tsv
for i in $(seq 0 11); do printf '%d\t%d\n' "$i" $((i ? 0 : -1)); done > "$flat"
sf=$WORK/sf
mount_psgfs "$sk" "$sf" -o hierarchy="$flat"
check "skater: -o hierarchy still overrides the rig" \
	grep -q 'hierarchy: from the hierarchy file' "$sf/info.txt"
check "skater: leftupcheek then hangs from bone 0" grep -qP '^9\tleftupcheek\t0\t' "$sf/skeleton/bones.tsv"

# Hostile variants: problems in errors.txt, the mount stays up, raw objects readable.
for h in palette index stride bones; do
	f=$WORK/h-$h.psg
	"$PSGFS_GEN" skinned --seed 9 --hostile "$h" "$f"
	hm=$WORK/h-$h
	mount_psgfs "$f" "$hm"
	check "hostile $h: errors-full.txt lists the problem" test -s "$hm/errors-full.txt"
	check "hostile $h: every .bin reads" bash -c "cat '$hm'/objects/*.bin > /dev/null"
	check "hostile $h: every file reads or fails with EIO" bash -c \
		"for x in \$(find '$hm' -type f); do cat \$x > /dev/null 2> '$WORK/err' || grep -q 'Input/output error' '$WORK/err' || exit 1; done"
done
finish
