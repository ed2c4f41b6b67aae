#!/usr/bin/env bash
# A district's textures resolve by GUID into its Tex stream wherever the district sits
# (issue 26; docs/skate-objects.md, "Texture arenas in nested archives"): its SFIL stream
# files are archives, and inside a .big they are archives in an archive. The same district
# (psgfs-gen district) is mounted loose in a folder, inside a plain EB archive, inside an EB
# archive inside another (a DLC pack holding a world .big), and as psgfs-gen game lays it out
# (data/content/worldDIST_Gen.big), the archive kinds also as mounts of their own. Every Pres
# model's material.txt (the texture's path from the mount's root taken out), its texture links
# and its exported .glb, and the district view's scene.glb, must be those of the loose mount,
# and every diffuse channel must resolve to an arena of cTex_Global.psf.
. "$(dirname "$0")/lib.sh"

L=$WORK/loose
mkdir -p "$L/world"
"$PSGFS_GEN" district --tiles 4 --seed 5 "$L/world/DIST_Gen" >/dev/null
rm -f "$L/world/worlddmo.big" # props are not this test's
P=$WORK/plain
mkdir -p "$P"
"$PSGFS_TOOL" pack --format eb --compress refpack "$L" "$P/worldDIST_Gen.big" >/dev/null
N=$WORK/nested
mkdir -p "$WORK/dlc/content" "$N"
cp "$P/worldDIST_Gen.big" "$WORK/dlc/content/"
"$PSGFS_TOOL" pack --format eb --compress none "$WORK/dlc" "$N/dlc.big" >/dev/null
"$PSGFS_GEN" game "$WORK/game" >/dev/null
rm -f "$WORK/game/data/content/worlddmo.big" # nor here: the props would be placed in scene.glb

# pres_models ROOT: the Pres models of the district at ROOT (their paths from ROOT), sorted.
pres_models() {
	(cd "$1" && for c in cPres_*.psf; do
		for m in "$c"/*.psg; do
			[ -d "$m/materials" ] && printf '%s\n' "$m"
		done
	done) | sort
}

# facts ROOT PREFIX OUT: per Pres model, each material.txt with " in PREFIX" made " in ",
# each texture link's target, and the hash of its export .glb.
facts() {
	local root=$1 prefix=$2 out=$3 m f
	: >"$out"
	for m in $(pres_models "$root"); do
		for f in "$root/$m"/materials/*/material.txt; do
			printf '== %s\n' "${f#"$root"/}"
			sed "s| in $prefix| in |g" "$f"
		done
		for f in "$root/$m"/materials/*/*; do
			[ -L "$f" ] && printf '%s -> %s\n' "${f#"$root"/}" "$(readlink "$f")"
		done
		printf '%s %s\n' "$m" "$(sha256sum <"$root/$m/export/$(basename "$m" .psg).glb" |
			cut -d' ' -f1)"
	done >>"$out"
	# The district view's whole scene embeds the same textures (docs/worlds.md).
	printf 'scene.glb %s\n' "$(sha256sum <"$root/DIST_Gen_Pres.psm/scene.glb" | cut -d' ' -f1)" >>"$out"
}

mount_psgfs "$L" "$WORK/m-loose"
facts "$WORK/m-loose/world/DIST_Gen" "" "$WORK/f-loose"
check "loose: Pres models found" [ "$(pres_models "$WORK/m-loose/world/DIST_Gen" | wc -l)" -ge 5 ]
check "loose: every diffuse channel resolves into the Tex stream" \
	bash -c "! grep -P '\tdiffuse\t' '$WORK/f-loose' | grep -v ' in world/DIST_Gen/cTex_Global.psf/0x'"
check "loose: the diffuse links lead into the Tex stream" \
	grep -q 'diffuse.png -> ../../../../cTex_Global.psf/0x[0-9a-f]*.psg/textures/' "$WORK/f-loose"
check "loose: the links resolve" bash -c "for f in \$(find '$WORK/m-loose/world/DIST_Gen' \
	-path '*cPres_*' -name diffuse.png); do [ -s \"\$f\" ] || exit 1; done"

# same NAME ROOT PREFIX: the district at ROOT shows what the loose mount shows.
same() {
	local name=$1 root=$2 prefix=$3
	facts "$root" "$prefix" "$WORK/f-$name"
	if cmp -s "$WORK/f-loose" "$WORK/f-$name"; then
		ok "$name: materials, texture links, .glb and scene.glb as in the loose folder"
	else
		not_ok "$name: materials, texture links, .glb and scene.glb as in the loose folder"
		{ diff "$WORK/f-loose" "$WORK/f-$name" || true; } | head -8 | sed "s/^/# /" >&2
	fi
}

D=world/DIST_Gen
mount_psgfs "$P" "$WORK/m-plain"
same "EB archive in a folder" "$WORK/m-plain/worldDIST_Gen.big/$D" "worldDIST_Gen.big/"
mount_psgfs "$P/worldDIST_Gen.big" "$WORK/m-plain-solo"
same "EB archive mounted alone" "$WORK/m-plain-solo/$D" ""
mount_psgfs "$N" "$WORK/m-nested"
same "EB archive in an EB archive" "$WORK/m-nested/dlc.big/content/worldDIST_Gen.big/$D" \
	"dlc.big/content/worldDIST_Gen.big/"
mount_psgfs "$N/dlc.big" "$WORK/m-nested-solo"
same "nested, the outer archive mounted alone" \
	"$WORK/m-nested-solo/content/worldDIST_Gen.big/$D" "content/worldDIST_Gen.big/"

# psgfs-gen game: another district, so its own loose twin (its files copied out of the .big).
GD=data/content/world/stream/DIST_Gen
mount_psgfs "$WORK/game" "$WORK/m-game"
mkdir -p "$WORK/gl/$GD"
for f in "$WORK/m-game/data/content/worldDIST_Gen.big/$GD"/*; do
	b=$(basename "$f") # a stream file is a directory holding its own bytes under its name
	if [ -d "$f" ]; then cp "$f/$b" "$WORK/gl/$GD/"; else cp "$f" "$WORK/gl/$GD/"; fi
done
mount_psgfs "$WORK/gl" "$WORK/m-gl"
facts "$WORK/m-gl/$GD" "" "$WORK/f-loose"
check "game's district extracted: every diffuse channel resolves into its Tex stream" \
	bash -c "grep -qP '\tdiffuse\t.* in $GD/cTex_Global.psf/0x' '$WORK/f-loose' &&
		! grep -P '\tdiffuse\t' '$WORK/f-loose' | grep -v ' in $GD/cTex_Global.psf/0x'"
# A fresh mount: listing cTex_Global.psf above fed its entries to the index of that one.
mount_psgfs "$WORK/game" "$WORK/m-game2"
same "psgfs-gen game" "$WORK/m-game2/data/content/worldDIST_Gen.big/$GD" \
	"data/content/worldDIST_Gen.big/"

finish
