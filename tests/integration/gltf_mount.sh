#!/usr/bin/env bash
# The glTF exports (docs/gltf.md) read through real mounts and checked by third parties: the
# Khronos glTF-Validator reports no error for any .glb of generated PSKs of many shapes,
# generated PSAs with and without scale keys, generated PSG models (every vertex format, 1 and
# 200 bones, the skater rig, u32 indices, many meshes, hostile variants, a textured model with
# its companion arena), the hostile PSK/PSA set that still mounts and the corpus; Blender's own importer builds each model with the file's triangles, bones,
# weighted vertices and shape keys, and each PSA's animations as actions. Both tools come from
# scripts/deps test; without either the test is skipped.
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
node_dir=${PSGFS_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/psgfs/node}
have_validator=0
have_blender=0
command -v node >/dev/null && [ -f "$node_dir/node_modules/gltf-validator/package.json" ] &&
	have_validator=1
command -v blender >/dev/null && have_blender=1
if [ $have_validator = 0 ] && [ $have_blender = 0 ]; then
	echo "# SKIP: neither gltf-validator ($node_dir) nor blender is installed (scripts/deps test)"
	exit 77
fi
[ $have_validator = 1 ] || echo "# gltf-validator not installed in $node_dir: validation skipped"
[ $have_blender = 1 ] || echo "# blender not installed: import checks skipped"

# ---- generated models, one folder mount ----
gen=$WORK/gen
mkdir -p "$gen"
"$PSGFS_GEN" psk --seed 1 --bones 1 --points 40 "$gen/one_bone.psk"
"$PSGFS_GEN" psk --seed 2 --bones 200 --points 400 --materials 5 --normals "$gen/bones200.psk"
"$PSGFS_GEN" psk --seed 3 --bones 20 --points 50000 --normals --colors "$gen/wide.psk"
"$PSGFS_GEN" psk --seed 4 --bones 30 --big --uv-sets 2 "$gen/big.pskx"
"$PSGFS_GEN" psk --seed 5 --bones 10 --points 300 --morphs 20 --normals "$gen/morphs.psk"
"$PSGFS_GEN" psk --seed 6 --bones 12 --points 60 --sockets 8 "$gen/sockets.psk"
"$PSGFS_GEN" psk --seed 7 --bones 3 --points 60 --uv-sets 8 --colors --normals "$gen/uvs.psk"
"$PSGFS_GEN" psk --seed 8 --bones 20 --points 80 --hostile-names --morphs 7 --sockets 7 \
	--materials 9 "$gen/names.psk"
"$PSGFS_GEN" psk --seed 9 --bones 0 --points 60 --normals "$gen/static.psk"
"$PSGFS_GEN" psa --seed 1 --bones 6 --sequences 3 --frames 9 "$gen/plain.psa"
"$PSGFS_GEN" psa --seed 2 --bones 40 --sequences 4 --frames 50 --scale-keys "$gen/scaled.psa"
"$PSGFS_GEN" psa --seed 3 --bones 5 --sequences 3 --frames 7 --hostile-names --scale-keys \
	"$gen/names.psa"
g=$WORK/g
mount_psgfs "$gen" "$g"
find "$g" -name '*.glb' | sort > "$WORK/generated.txt"
# One export per PSK; per PSA one for all sequences and one per sequence.
check "every generated file has its .glb exports" test "$(wc -l < "$WORK/generated.txt")" -eq $((9 + 4 + 5 + 4))
check "the >65535-vertex mesh indexes with u32" \
	bash -c "head -c 100000 '$g/wide.psk/export/wide.glb' | grep -aq '\"componentType\":5125,\"count\":225000'"

# ---- hostile: the generated mutant set of a PSK and a PSA, mounted as one folder ----
base=$WORK/base
mkdir -p "$base" "$WORK/hostile"
"$PSGFS_GEN" psk --seed 11 --bones 7 --points 50 --materials 2 --normals --colors --uv-sets 2 \
	--morphs 2 --sockets 2 "$base/mesh.psk"
"$PSGFS_GEN" psa --seed 12 --bones 6 --sequences 3 --frames 9 --scale-keys "$base/anim.psa"
n_psk=$("$MUTANTS" "$base/mesh.psk" "$WORK/hostile")
mkdir -p "$WORK/hostile-psa"
n_psa=$("$MUTANTS" "$base/anim.psa" "$WORK/hostile-psa")
for f in "$WORK/hostile-psa"/*; do mv "$f" "$WORK/hostile/a${f##*/m}"; done
echo "# hostile set: $n_psk PSK and $n_psa PSA mutants"
h=$WORK/h
mount_psgfs "$WORK/hostile" "$h"
find "$h" -name '*.glb' | sort > "$WORK/hostile.txt"
check "hostile files that mount have their .glb exports" test "$(wc -l < "$WORK/hostile.txt")" -gt 1000
# Every export reads exactly st_size bytes, or fails with EIO and errors-full.txt says why.
unreadable=0
short_reads "$WORK/hostile.txt" > "$WORK/hostile.short"
while IFS= read -r f; do
	asset=${f%%/export/*}
	asset=${asset%%/sequences/*}
	grep -q '^glb:' "$asset/errors-full.txt" "$asset/errors.txt" 2>/dev/null ||
		{ echo "# unreadable and unexplained: $f"; unreadable=$((unreadable + 1)); }
done < "$WORK/hostile.short"
echo "# $(wc -l < "$WORK/hostile.short") hostile exports fail to read, each explained"
check "every hostile .glb reads whole (or its failure is in the errors)" test $unreadable -eq 0

# ---- the corpus ----
corpus=$PSGFS_SHARED/corpus/psk
: > "$WORK/corpus.txt"
if [ -d "$corpus" ]; then
	c=$WORK/c
	mount_psgfs "$corpus" "$c"
	find "$c" -name '*.glb' | sort > "$WORK/corpus.txt"
	check "corpus: an export for each of the 5 PSKs and 2 PSAs" \
		test "$(grep -c '/export/' "$WORK/corpus.txt")" -eq 7
else
	echo "# corpus $corpus absent: corpus files skipped"
fi

# ---- PSG models, with a companion texture arena: one folder mount, one single-file mount ----
psg=$WORK/psg
mkdir -p "$psg/sky"
"$PSGFS_GEN" sky "$psg/sky/sky.psg"
"$PSGFS_GEN" textures "$psg/sky/sky_Textures.psg"
"$PSGFS_GEN" skinned --seed 3 --meshes 5 "$psg/formats.psg"
"$PSGFS_GEN" skinned --seed 5 --bones 200 --meshes 2 "$psg/bones200.psg"
"$PSGFS_GEN" skinned --skater --rig-names "$psg/skater.psg"
"$PSGFS_GEN" skinned --seed 7 --meshes 1 --verts 70000 --islands 2 --tris 100 "$psg/wide.psg"
"$PSGFS_GEN" sized --size 1M "$psg/sized.psg"
for h in palette index stride bones; do
	"$PSGFS_GEN" skinned --seed 9 --hostile $h "$psg/h_$h.psg"
done
p=$WORK/p
mount_psgfs "$psg" "$p"
find "$p" -name '*.glb' | sort > "$WORK/psg.txt"
check "PSG: every model has export/<stem>.glb" test "$(wc -l < "$WORK/psg.txt")" -eq 10
same=1
while IFS= read -r f; do
	d=${f%/export/*}
	stem=${f##*/}
	stem=${stem%.glb}
	cp "$d/export/$stem.pskx" "$WORK/x.pskx"
	want=$("$PSGFS_TOOL" cat "$WORK/x.pskx" info.txt |
		awk '$1 == "wedges:" {v = $2} $1 == "faces:" {t = $2} $1 == "bones:" {b = $2}
		     END {print "vertices " v " triangles " t " joints " b}')
	got=$(python3 "$here/glb_info.py" "$f" | cut -d' ' -f1-6)
	[ "$got" = "$want" ] || { echo "# $f: $got; the .pskx: $want"; same=0; }
done < "$WORK/psg.txt"
check "PSG: each .glb has the .pskx's vertices, triangles and bones" test $same = 1
sky_glb=$p/sky/sky.psg/export/sky.glb
diffuse=$(readlink "$p/sky/sky.psg/materials/00.material/diffuse.png")
check "PSG: sky.glb embeds one picture, the diffuse texture" \
	test "$(python3 "$here/glb_info.py" "$sky_glb" | awk '{print $8}')" = 1
python3 "$here/glb_info.py" "$sky_glb" 0 "$WORK/embedded.png" > /dev/null
check "PSG: the embedded picture is the companion's textures/<diffuse>.png, byte for byte" \
	cmp -s "$WORK/embedded.png" "$p/sky/sky.psg/materials/00.material/$diffuse"
grep '/h_[^/]*/export/' "$WORK/psg.txt" > "$WORK/psg-hostile.txt"
check "PSG: the hostile models' .glb read whole" \
	test "$(wc -l < "$WORK/psg-hostile.txt")" = 4 -a -z "$(short_reads "$WORK/psg-hostile.txt")"
s1=$WORK/s1
mount_psgfs "$psg/sky/sky.psg" "$s1"
check "PSG: a single-file mount finds the companion beside it: the same .glb" \
	cmp -s "$s1/export/sky.glb" "$sky_glb"
unmount_psgfs "$s1"
cat "$WORK/psg.txt" >> "$WORK/generated.txt"

cat "$WORK/generated.txt" "$WORK/corpus.txt" "$WORK/hostile.txt" > "$WORK/all.txt"
# The third-party checks look at bytes, which are the same in both builds: they run in the
# plain build. Under ASan+UBSan every export is rendered and read whole instead (tests/README.md).
if sanitized; then
	echo "# sanitized build: glTF-Validator and Blender run in the plain build"
	have_validator=0 have_blender=0
	grep -vxFf "$WORK/hostile.short" "$WORK/all.txt" > "$WORK/all-whole.txt" || true
	check "every export but the explained hostile ones reads whole ($(wc -l < "$WORK/all-whole.txt"))" \
		test -z "$(short_reads "$WORK/all-whole.txt")"
fi
if [ $have_validator = 1 ]; then
	vrc=0
	NODE_PATH=$node_dir/node_modules timeout 600 node "$here/gltf_validate.js" "$WORK/all.txt" \
		> "$WORK/validator.log" 2>&1 || vrc=$?
	grep -E '^(ERROR|WARNING|UNREADABLE|info|validated)' "$WORK/validator.log" | head -100 || true
	check "glTF-Validator: no errors in $(wc -l < "$WORK/all.txt") files" test $vrc -eq 0
fi

if [ $have_blender = 1 ]; then
	# Every generated and corpus model, and a sample of the hostile ones (Blender is slow).
	{ cat "$WORK/generated.txt" "$WORK/corpus.txt"; awk 'NR % 25 == 1' "$WORK/hostile.txt"; } \
		> "$WORK/blender.txt"
	brc=0
	timeout 900 blender -b --factory-startup --python "$here/gltf_blender.py" -- \
		"$WORK/blender.txt" > "$WORK/blender.log" 2>&1 || brc=$?
	grep -oE 'BLENDER (FAILED|MISMATCH|skipped).*' "$WORK/blender.log" | head -40 || true
	grep '^BLENDER imported' "$WORK/blender.log" || tail -20 "$WORK/blender.log"
	check "Blender imports $(wc -l < "$WORK/blender.txt") exports with the files' counts" test $brc -eq 0
fi
finish
