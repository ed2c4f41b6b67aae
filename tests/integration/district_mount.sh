#!/usr/bin/env bash
# The district view (issue 26 items 2, 3, 5; docs/worlds.md, "The district view"): a district's
# Pres collection map is a directory in a loose folder, inside an EB archive, inside a DLC pack
# (an archive in an archive) and as a single-file mount, with the same files everywhere; the
# Sim and Tex maps stay files; every file reads exactly its st_size; lint.txt names each broken
# variant; hostile manifests list what they hold and never hang; psgfs-tool serves the same tree.
. "$(dirname "$0")/lib.sh"
: "${MKDISTRICT:?}" "${DIR_MANIFEST:?}"

D=data/content/world/stream/DIST_T
S=$WORK/src
mkdir -p "$S/$D" "$WORK/x360"
"$MKDISTRICT" "$S/$D" DIST_T
"$MKDISTRICT" --x360 "$WORK/x360" DIST_T
"$PSGFS_TOOL" pack "$S" "$WORK/worldDIST_T.big" >/dev/null
mkdir -p "$WORK/dlc/data/dlc"
cp "$WORK/worldDIST_T.big" "$WORK/dlc/data/dlc/"
"$PSGFS_TOOL" pack "$WORK/dlc" "$WORK/pack.big" >/dev/null

VIEW="collections.tsv collision.glb errors.txt info.txt lint.txt minimap.tsv props.tsv rails.glb rails.tsv scene.glb surfaces.tsv tiles "
VIEW1="collections.tsv errors.txt info.txt lint.txt minimap.tsv " # single file: no arenas
here=$(cd "$(dirname "$0")" && pwd)
node_dir=${PSGFS_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/psgfs/node}
GLBS=$WORK/glbs.txt
: >"$GLBS"

# ---- a loose folder ----
m=$WORK/m
mount_psgfs "$S" "$m"
P=$m/$D/DIST_T_Pres.psm
check "the Pres map is a directory" test -d "$P"
check "... listing its five files" test "$(ls "$P" | tr '\n' ' ')" = "$VIEW"
check "the Sim and Tex maps stay files" bash -c "[ -f '$m/$D/DIST_T_Sim.psm' ] && [ -f '$m/$D/DIST_T_Tex.psm' ]"
check "a clean district: 0 findings" test "$(cat "$P/lint.txt")" = "0 findings"
check "... and errors.txt is empty" test ! -s "$P/errors.txt"
check "collections.tsv: a header and one row per collection of every kind" test \
	"$(wc -l <"$P/collections.tsv")" = 7
check "... the header's first columns" bash -c \
	"head -1 '$P/collections.tsv' | grep -q \$'^kind\tname\tid\tparent_id\tdepth\tlod\tassets\tbytes\thull_min_x'"
check "... a tile's id, parent, depth, lod, assets and box" bash -c \
	"grep -q \$'^Pres\tcPres_50_50_high\t0xfb4c3af3cd410a21\t0x38b676beb9820c8a\t1\t0\t2\t21248\t0\t-10\t0\t100\t40\t100\t' '$P/collections.tsv'"
check "minimap.tsv: a header and one row per point" test "$(wc -l <"$P/minimap.tsv")" = 5
check "info.txt: platform, counts" bash -c \
	"grep -qx 'platform: ps3' '$P/info.txt' && grep -qx 'collections: 6' '$P/info.txt' &&
	 grep -qx 'models: 6' '$P/info.txt' && grep -qx 'unresolved: 0' '$P/info.txt'"
check "every file reads exactly its st_size" all_read_whole "$P"
check "psgfs-tool extract gives the same tree" same_as_tool "$S" "$m"
check "psgfs-tool cat of lint.txt" test "$("$PSGFS_TOOL" cat "$S" "$D/DIST_T_Pres.psm/lint.txt")" = "0 findings"
check "tiles/: one .glb per Pres collection" test \
	"$(ls "$P/tiles" | tr '\n' ' ')" = "cPres_150_50_high.glb cPres_50_50_high.glb cPres_Global.glb "
check "scene.glb: the arenas of the Global and both High tiles, one node each, textured" bash -c \
	"python3 '$here/glb_info.py' '$P/scene.glb' | grep -q 'images [1-9]' &&
	 [ \$(grep -ao 'cPres_[A-Za-z0-9_]*/0x[0-9a-f]*\.psg' '$P/scene.glb' | sort -u | wc -l) -ge 3 ]"
check "scene.glb: a texture several arenas show is embedded once, their materials share it" \
	python3 -c 'import json, struct, sys
d = open(sys.argv[1], "rb").read()
doc = json.loads(d[20:20 + struct.unpack("<I", d[12:16])[0]])
names = [i["name"] for i in doc["images"]]
used = [t["source"] for t in doc.get("textures", [])]
shared = len(doc["materials"]) > len(names)
sys.exit(0 if len(names) == len(set(names)) and shared and len(set(used)) <= len(names) else 1)' \
	"$P/scene.glb"
check "scene.glb: a tile's .glb is a part of it (its arenas' nodes)" bash -c \
	"for n in \$(grep -ao 'cPres_50_50_high/0x[0-9a-f]*\.psg' '$P/tiles/cPres_50_50_high.glb' | sort -u); do
	   grep -qaF \"\$n\" '$P/scene.glb' || exit 1; done"
check "props.tsv: a row per placed prop of the Sim stream, its template unresolved" bash -c \
	"[ \$(wc -l <'$P/props.tsv') = 5 ] && grep -q \$'^cSim_50_50_high/0x5eed000000000001.psg\t0\t0\tbench_1_0\t0x00000000d0000000\t.*\tunresolved\t50\t0\t40\t' '$P/props.tsv'"
check "rails.tsv: a row per rail segment in chain order" bash -c \
	"[ \$(wc -l <'$P/rails.tsv') = 5 ] && grep -q \$'\t1\t55\t1\t50\t55\t2\t55\t' '$P/rails.tsv'"
check "surfaces.tsv: triangles per surface id, split" bash -c \
	"[ \"\$(tail -n +2 '$P/surfaces.tsv')\" = \$'0x1180\t0\t3\t1\t4\n0x1181\t1\t3\t1\t4' ]"
check "collision.glb: the Sim stream's 8 triangles, a mesh per ClusteredMesh" bash -c \
	"python3 '$here/glb_info.py' '$P/collision.glb' | grep -q '^vertices 24 triangles 8 '"
check "rails.glb: the two rails' four segments as line primitives" bash -c \
	"python3 '$here/glb_info.py' '$P/rails.glb' | grep -q '^vertices 8 ' && grep -aq '\"mode\":1' '$P/rails.glb'"
for g in collision rails; do
	cp "$P/$g.glb" "$WORK/loose-$g.glb"
	echo "$WORK/loose-$g.glb" >>"$GLBS"
done
check "info.txt counts props, rails and collision" bash -c \
	"grep -qx 'props: 4' '$P/info.txt' && grep -qx 'rails: 2' '$P/info.txt' && grep -qx 'collision_triangles: 8' '$P/info.txt'"
cp "$P/scene.glb" "$WORK/scene.loose"
nodes_of() { grep -ao 'cPres_[A-Za-z0-9_]*/0x[0-9a-f]*\.psg' "$1" | sort -u; }
nodes_of "$P/scene.glb" >"$WORK/nodes.loose"
for g in "$P/scene.glb" "$P"/tiles/*.glb; do
	cp "$g" "$WORK/loose-$(basename "$g")"
	echo "$WORK/loose-$(basename "$g")" >>"$GLBS"
done
cp "$P/info.txt" "$WORK/info.loose"
cp "$P/collections.tsv" "$WORK/collections.loose"
unmount_psgfs "$m"

# ---- the scene holds no arena: at the smallest cache its arenas are evicted and fetched again
mount_psgfs "$S" "$m" -o cache_size=1M
check "cache_size=1M: the same scene.glb, read twice" bash -c \
	"cmp -s '$m/$D/DIST_T_Pres.psm/scene.glb' '$WORK/scene.loose' &&
	 cat '$m/$D/DIST_T_Pres.psm/tiles/'*.glb >/dev/null &&
	 cmp -s '$m/$D/DIST_T_Pres.psm/scene.glb' '$WORK/scene.loose'"
unmount_psgfs "$m"

# ---- Xbox 360 ----
mount_psgfs "$WORK/x360" "$m"
check "x360: DIST_T_Pres.xsm is the district, clean" bash -c \
	"[ \"\$(cat '$m/DIST_T_Pres.xsm/lint.txt')\" = '0 findings' ] && grep -qx 'platform: x360' '$m/DIST_T_Pres.xsm/info.txt'"
unmount_psgfs "$m"

# ---- a single-file mount of the map ----
mount_psgfs "$S/$D/DIST_T_Pres.psm" "$m"
check "single file: the map is the root, its siblings read beside it" bash -c \
	"[ \"\$(ls '$m' | tr '\n' ' ')\" = '$VIEW1' ] && [ \"\$(cat '$m/lint.txt')\" = '0 findings' ]"
unmount_psgfs "$m"
check "a Sim map alone is refused (exit 4)" bash -c \
	"timeout 30 '$PSGFS' '$S/$D/DIST_T_Sim.psm' '$m' 2>/dev/null; [ \$? = 4 ]"

# ---- inside an EB archive, and inside a pack inside a folder ----
mount_psgfs "$WORK/worldDIST_T.big" "$m"
A=$m/$D/DIST_T_Pres.psm
check "archive: the same files as the loose folder, plus the map's own bytes" test \
	"$(ls "$A" | tr '\n' ' ')" = "DIST_T_Pres.psm $VIEW"
check "archive: the same collections.tsv and info.txt" bash -c \
	"cmp -s '$A/collections.tsv' '$WORK/collections.loose' && cmp -s '$A/info.txt' '$WORK/info.loose'"
check "archive: 0 findings (collection files read through the archive)" test "$(cat "$A/lint.txt")" = "0 findings"
check "archive: every file reads exactly its st_size" all_read_whole "$A"
# textures resolve through the nested Tex stream as in the folder (docs/skate-objects.md,
# "Texture arenas in nested archives"): the same bytes
check "archive: scene.glb is the loose folder's, byte for byte" cmp -s "$A/scene.glb" "$WORK/scene.loose"
unmount_psgfs "$m"
mount_psgfs "$WORK/dlc" "$m"
N=$m/data/dlc/worldDIST_T.big/$D/DIST_T_Pres.psm
check "nested pack: the same collections.tsv and info.txt" bash -c \
	"cmp -s '$N/collections.tsv' '$WORK/collections.loose' && cmp -s '$N/info.txt' '$WORK/info.loose'"
check "nested pack: 0 findings" test "$(cat "$N/lint.txt")" = "0 findings"
check "nested pack: scene.glb is the loose folder's, byte for byte" cmp -s "$N/scene.glb" "$WORK/scene.loose"
unmount_psgfs "$m"
mount_psgfs "$WORK/pack.big" "$m"
N=$m/data/dlc/worldDIST_T.big/$D/DIST_T_Pres.psm
check "archive in an archive: 0 findings" test "$(cat "$N/lint.txt")" = "0 findings"
check "archive in an archive: scene.glb places the same arenas" diff -q <(nodes_of "$N/scene.glb") "$WORK/nodes.loose"
unmount_psgfs "$m"

# ---- broken districts: one lint line each (bits of tests/unit/district_fixture.h) ----
lint_has() { # BITS LINE
	local b=$WORK/broken$1
	mkdir -p "$b"
	"$MKDISTRICT" --broken "$1" "$b" DIST_B
	mount_psgfs "$b" "$m"
	local rc=0
	grep -qF -- "$2" "$m/DIST_B_Pres.psm/lint.txt" || rc=1
	# every file reads whole, but the tile of a collection whose file is missing (EIO)
	find "$m/DIST_B_Pres.psm" -type f ! -name cPres_150_50_high.glb >"$WORK/list.txt"
	[ -z "$(short_reads "$WORK/list.txt")" ] || rc=1
	if [ "$1" = 1 ]; then
		cat "$m/DIST_B_Pres.psm/tiles/cPres_150_50_high.glb" >/dev/null 2>&1 && rc=1
	fi
	cp "$m/DIST_B_Pres.psm/scene.glb" "$WORK/scene-broken$1.glb"
	echo "$WORK/scene-broken$1.glb" >>"$GLBS"
	unmount_psgfs "$m"
	return $rc
}
check "lint: a collection without its file" lint_has 1 \
	"Pres: collection cPres_150_50_high (0x8d55d1ece346508a) has no file cPres_150_50_high.psf"
check "lint: an ATOC asset in no collection" lint_has 2 "DIST_B_Pres.pst: asset 0x123456789abcdef0 is in no collection"
check "lint: a tile without bounds" lint_has 4 "has no bounds in DIST_B_Pres.pss"
check "lint: the Tex stub missing" lint_has 8 "Tex stream stub missing: DIST_B_Tex.pmm"
check "lint: stamps that disagree" lint_has 16 "stamp: cSim_50_50_high.psf has 0x000000005a5a0003, DIST_B_Sim.psm has 0x000000005a5a0002"
check "lint: the +0x1C word of the other kind" lint_has 32 \
	"Pres: cPres_150_50_high.psf: the word at +0x1C is 0x57000000 (0x58000000 for Pres)"
check "lint: a parent cycle" lint_has 64 "DIST_B_Sim.psm: collection 0 (cSim_150_50_high): in or leading into a parent cycle"
check "lint: a NaN bound" lint_has 128 "DIST_B_Pres.pss: cell 0 (0x"
check "lint: a CMAP that claims 1000 collections" lint_has 256 "DIST_B_Pres.psm: claims 1000 collections; the file holds 3"

# ---- two CMAP records naming one collection file: its arenas are placed once ----
b=$WORK/same
mkdir -p "$b"
"$MKDISTRICT" --broken 512 "$b" DIST_S
mount_psgfs "$b" "$m"
check "a collection file named twice is placed once in scene.glb" bash -c \
	"n=\$(grep -ao 'cPres_[A-Za-z0-9_]*/0x[0-9a-f]*\.psg' '$m/DIST_S_Pres.psm/scene.glb' | wc -l)
	 u=\$(grep -ao 'cPres_[A-Za-z0-9_]*/0x[0-9a-f]*\.psg' '$m/DIST_S_Pres.psm/scene.glb' | sort -u | wc -l)
	 [ \$n = \$u ] && [ \$u -ge 2 ]"
unmount_psgfs "$m"

# ---- psgfs-gen district: clean on both consoles, each --broken KIND one finding ----
for pf in ps3 x360; do
	g=$WORK/gen-$pf
	mkdir -p "$g"
	"$PSGFS_GEN" district --platform "$pf" "$g/DIST_Gen" >/dev/null
	mount_psgfs "$g" "$m"
	G=$(ls -d "$m"/DIST_Gen/DIST_Gen_Pres.?sm)
	check "psgfs-gen district ($pf): 0 findings, textured scene, props, rails, collision" bash -c \
		"[ \"\$(cat '$G/lint.txt')\" = '0 findings' ] && [ ! -s '$G/errors.txt' ] &&
		 python3 '$here/glb_info.py' '$G/scene.glb' | grep -q 'images [1-9]' &&
		 grep -q '^props: [1-9]' '$G/info.txt' && grep -q '^rails: [1-9]' '$G/info.txt' &&
		 grep -q '^collision_triangles: [1-9]' '$G/info.txt'"
	check "psgfs-gen district ($pf): every file reads whole" all_read_whole "$G"
	check "psgfs-gen district ($pf): every prop's model is its template in worlddmo.big" bash -c \
		"[ \$(tail -n +2 '$G/props.tsv' | wc -l) -ge 3 ] &&
		 ! tail -n +2 '$G/props.tsv' | cut -f9 | grep -v '^worlddmo.big/data/content/worlddmo/0x[0-9a-f]\{16\}\.\(psg\|rx2\)\$' &&
		 grep -qx 'props_unresolved: 0' '$G/info.txt'"
	check "psgfs-gen district ($pf): scene.glb places each prop at its props.tsv position" \
		python3 "$here/glb_props.py" "$G/scene.glb" "$G/props.tsv"
	for f in scene collision rails; do
		cp "$G/$f.glb" "$WORK/gen-$pf-$f.glb"
		echo "$WORK/gen-$pf-$f.glb" >>"$GLBS"
	done
	unmount_psgfs "$m"
done
if ! sanitized && command -v blender >/dev/null; then
	brc=0
	timeout 600 blender -b --factory-startup --python "$here/district_blender.py" -- \
		"$WORK/gen-ps3-scene.glb" >"$WORK/blender.log" 2>&1 || brc=$?
	grep -o 'DISTRICT BLENDER.*' "$WORK/blender.log" || tail -5 "$WORK/blender.log"
	check "Blender imports scene.glb: a node per arena, a mesh each, three models in place" \
		test $brc -eq 0
else
	echo "# Blender not run (sanitized build or not installed)"
fi
gen_lint() { # KIND PLATFORM LINE
	local g=$WORK/genb-$1
	mkdir -p "$g"
	"$PSGFS_GEN" district --platform "$2" --broken "$1" "$g/DIST_B" >/dev/null
	"$PSGFS_TOOL" cat "$g" "DIST_B/DIST_B_Pres.$3" | grep -qF -- "$4"
}
check "gen --broken cmap-orphan-id" gen_lint cmap-orphan-id ps3 psm/lint.txt "has no file cPres_"
check "gen --broken atoc-missing" gen_lint atoc-missing ps3 psm/lint.txt "is in no collection"
check "gen --broken sfil-extra" gen_lint sfil-extra ps3 psm/lint.txt "is not in DIST_B_Pres.pst"
check "gen --broken cspa-missing" gen_lint cspa-missing ps3 psm/lint.txt "has no bounds in DIST_B_Pres.pss"
check "gen --broken tex-guid-missing" gen_lint tex-guid-missing ps3 psm/lint.txt "is provided by nothing in the mount"
check "gen --broken tex-stub-missing (x360)" gen_lint tex-stub-missing x360 xsm/lint.txt "Tex stream stub missing: DIST_B_Tex.xsm"
check "gen --broken stamp-mismatch" gen_lint stamp-mismatch ps3 psm/lint.txt "stamp: "
check "gen --broken kind-field" gen_lint kind-field ps3 psm/lint.txt "the word at +0x1C is 0x57000000"
check "gen --broken parent-cycle" gen_lint parent-cycle ps3 psm/lint.txt "in or leading into a parent cycle"
check "gen --broken nan-matrix" gen_lint nan-matrix ps3 psm/lint.txt "its matrix is not finite"
check "gen --broken lying-counts" gen_lint lying-counts ps3 psm/lint.txt "claims 1000000 collections"

# ---- worlddmo.big lacking a template: its props unresolved, listed, not placed ----
g=$WORK/gen-lack
mkdir -p "$g"
"$PSGFS_GEN" district --platform ps3 "$g/DIST_L" >/dev/null
python3 - "$g/worlddmo.big" <<'PY'
import sys
p = sys.argv[1]
d = open(p, "rb").read()
old = b"0x7e3a5d1b00000101"
assert d.count(old) == 1
open(p, "wb").write(d.replace(old, b"0x7e3a5d1b000001ff"))
PY
mount_psgfs "$g" "$m"
L=$m/DIST_L/DIST_L_Pres.psm
check "a template missing from worlddmo.big: its props unresolved, each a lint line" bash -c \
	"n=\$(grep -c \$'\t0x7e3a5d1b00000101\t.*\tunresolved\t' '$L/props.tsv');
	 [ \$n -ge 1 ] && grep -qx \"props_unresolved: \$n\" '$L/info.txt' &&
	 [ \$(grep -c 'template 0x7e3a5d1b00000101 is unresolved: worlddmo.big has no such template' '$L/lint.txt') = \$n ]"
check "... the other props still placed in scene.glb" \
	python3 "$here/glb_props.py" "$L/scene.glb" "$L/props.tsv"
check "... every file reads whole" all_read_whole "$L"
cp "$L/scene.glb" "$WORK/gen-lack-scene.glb"
echo "$WORK/gen-lack-scene.glb" >>"$GLBS"
unmount_psgfs "$m"

# ---- hostile maps: what can be read is listed, the rest explains itself ----
h=$WORK/hostile
mkdir -p "$h"
cp "$S/$D"/* "$h/"
printf 'CMAP' >"$h/DIST_H_Pres.psm"                        # a header cut short
head -c 100000 /dev/urandom >"$h/DIST_R_Pres.psm"          # no CMAP magic
{ printf 'CMAP'; head -c 4000 /dev/zero; } >"$h/DIST_Z_Pres.psm" # 0 collections, siblings absent
mount_psgfs "$h" "$m"
check "a truncated map: a directory whose info.txt says why" bash -c \
	"grep -q 'header alone is 32' '$m/DIST_H_Pres.psm/info.txt'"
check "a map of random bytes: a directory whose info.txt says why" test -f "$m/DIST_R_Pres.psm/info.txt"
check "an empty map without siblings: findings for every missing file" bash -c \
	"grep -qx 'DIST_Z_Sim.psm is missing' '$m/DIST_Z_Pres.psm/lint.txt' &&
	 grep -qx 'Tex stream stub missing: DIST_Z_Tex.psm' '$m/DIST_Z_Pres.psm/lint.txt'"
check "every file of every district reads whole" all_read_whole "$m"
unmount_psgfs "$m"

# ---- glTF-Validator over every .glb of the view (plain build; scripts/deps test) ----
if ! sanitized && command -v node >/dev/null &&
	[ -f "$node_dir/node_modules/gltf-validator/package.json" ]; then
	vrc=0
	NODE_PATH=$node_dir/node_modules timeout 600 node "$here/gltf_validate.js" "$GLBS" \
		>"$WORK/validator.log" 2>&1 || vrc=$?
	grep -E '^(ERROR|WARNING|UNREADABLE|validated)' "$WORK/validator.log" | head -20 || true
	check "glTF-Validator: no errors in $(wc -l <"$GLBS") district .glb files" test $vrc -eq 0
else
	echo "# glTF-Validator not run (sanitized build or not installed)"
fi

finish
