#!/usr/bin/env bash
# A model's materials link into its companion texture arena. In a folder mount,
# materials/NN.name/ holds material.txt and relative links diffuse.dds|png ... that resolve to
# byte-identical files of <stem>_Textures.psg/textures/; a single-file mount names the
# companion it would use; missing, broken or wrong companions are listed, never fatal.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)

src=$WORK/src
mkdir -p "$src"
"$PSGFS_GEN" sky "$src/sky.psg"
"$PSGFS_GEN" textures "$src/sky_Textures.psg"

m=$WORK/m
mount_psgfs "$src" "$m"
mat=$m/sky.psg/materials/00.material
check "folder: materials/ lists the one material" test "$(ls "$m/sky.psg/materials")" = 00.material
check "folder: material.txt, and a .dds and .png link per resolved channel" test \
	"$(ls "$mat" | tr '\n' ' ')" = \
	"detail.dds detail.png diffuse.dds diffuse.png material.txt specular.dds specular.png "
check "folder: the diffuse link is relative, into the companion's textures/" test \
	"$(readlink "$mat/diffuse.png")" = "../../../sky_Textures.psg/textures/0x2c7f381800171902.png"
check "folder: links are symlinks (lstat)" test -L "$mat/specular.dds"
check "folder: st_size of a link is its target's length" test \
	"$(stat -c %s "$mat/diffuse.dds")" = "$(readlink "$mat/diffuse.dds" | tr -d '\n' | wc -c)"
check "folder: every link resolves to the byte-identical texture file" bash -c "
	for l in '$mat'/*.dds '$mat'/*.png; do
		t=\$(readlink \"\$l\"); cmp -s \"\$l\" '$m/sky_Textures.psg/textures/'\"\${t##*/}\" || exit 1
	done"
check "folder: diffuse is texture 2, specular texture 3 (GUIDs of the companion's TOC)" bash -c "
	readlink '$mat/diffuse.dds' | grep -q '0x2c7f381800171902.dds\$' &&
	readlink '$mat/specular.dds' | grep -q '0x2c7f381800171903.dds\$'"
check "folder: material.txt says the companion was found" \
	grep -qx "companion: sky_Textures.psg (found beside the model; links below)" "$mat/material.txt"
check "folder: the Name channel names the model's own TOC entry 0" \
	grep -qP '^0\tName\tguid\t-\t0x5D2A6B1C00170001\ttoc entry 0$' "$mat/material.txt"
check "folder: a stream-form channel shows its stream name and what its GUID names" grep -qP \
	'^2\tdiffuse\tstream\tsky_night_0x00c0ffee00450001\t0x2C7F381800171902\ttexture 0x2c7f381800171902$' \
	"$mat/material.txt"
check "folder: the material-name GUID is listed, not looked for elsewhere" \
	grep -qP '^1\tAttribulatorMaterialName\tguid\t-\t0x[0-9A-F]{16}\t- \(not in the companion\)$' \
	"$mat/material.txt"
check "folder: info.txt counts what resolved" grep -qx \
	"materials: 1; 3 of 4 GUID channels name a texture of sky_Textures.psg (linked)" \
	"$m/sky.psg/info.txt"
check "folder: st_size of material.txt exact" \
	test "$(stat -c %s "$mat/material.txt")" = "$(wc -c < "$mat/material.txt")"
check "folder: the companion itself has no materials/" test ! -e "$m/sky_Textures.psg/materials"
check "folder: find -L follows every link to a file" bash -c \
	"[ \$(find -L '$m/sky.psg/materials' -type f -name '*.png' | wc -l) = 3 ]"
check "folder: cp -L copies the texture bytes" bash -c \
	"cp -L '$mat/diffuse.png' '$WORK/d.png' && cmp -s '$WORK/d.png' '$mat/diffuse.png'"
unmount_psgfs "$m"

# The companion's case differs (game folders mix cases): found, linked by its real name.
up=$WORK/up
mkdir -p "$up"
cp "$src/sky.psg" "$up/sky.psg"
cp "$src/sky_Textures.psg" "$up/SKY_TEXTURES.PSG"
mount_psgfs "$up" "$m"
mat=$m/sky.psg/materials/00.material
check "case: the link uses the companion's real name" test \
	"$(readlink "$mat/diffuse.dds")" = "../../../SKY_TEXTURES.PSG/textures/0x2c7f381800171902.dds"
check "case: and resolves" cmp -s "$mat/diffuse.dds" \
	"$m/SKY_TEXTURES.PSG/textures/0x2c7f381800171902.dds"
unmount_psgfs "$m"

# No companion: material.txt and info.txt say so; no links; nothing else changes.
lone=$WORK/lone
mkdir -p "$lone"
cp "$src/sky.psg" "$lone/"
mount_psgfs "$lone" "$m"
mat=$m/sky.psg/materials/00.material
check "missing: only material.txt" test "$(ls "$mat")" = material.txt
check "missing: material.txt says not found" \
	grep -qx "companion: sky_Textures.psg (not found)" "$mat/material.txt"
check "missing: channels listed without a target" \
	grep -qP '^2\tdiffuse\tstream\tsky_night_0x00c0ffee00450001\t0x2C7F381800171902\t- \(no companion, nor in any texture arena of the mount\)$' \
	"$mat/material.txt"
check "missing: errors.txt stays empty" test ! -s "$m/sky.psg/errors.txt"
unmount_psgfs "$m"

# A companion that is not a texture arena (garbage, then a model): listed, the model mounts.
bad=$WORK/bad
mkdir -p "$bad"
cp "$src/sky.psg" "$bad/"
head -c 5000 /dev/urandom > "$bad/sky_Textures.psg"
mount_psgfs "$bad" "$m"
mat=$m/sky.psg/materials/00.material
check "garbage companion: material.txt says it cannot be opened" \
	grep -q "cannot be opened as a texture arena" "$mat/material.txt"
check "garbage companion: no links" test "$(ls "$mat")" = material.txt
check "garbage companion: the model's export still reads" \
	bash -c "cat '$m/sky.psg/export/sky.pskx' > /dev/null"
unmount_psgfs "$m"
cp "$src/sky.psg" "$bad/sky_Textures.psg"
mount_psgfs "$bad" "$m"
check "model as companion: not a texture arena" grep -q "cannot be opened as a texture arena" \
	"$m/sky.psg/materials/00.material/material.txt"
unmount_psgfs "$m"

# Single-file mounts name the companion beside the source and what it resolves; no links.
mount_psgfs "$src/sky.psg" "$m"
mat=$m/materials/00.material
check "single: materials/ exists" test -d "$mat"
check "single: only material.txt" test "$(ls "$mat")" = material.txt
check "single: the companion beside the source is named" grep -qx \
	"companion: sky_Textures.psg (found beside the source; links need a folder mount)" \
	"$mat/material.txt"
check "single: channels say which texture they name" \
	grep -qP '^2\tdiffuse\tstream\t[^\t]+\t0x2C7F381800171902\ttexture 0x2c7f381800171902$' \
	"$mat/material.txt"
unmount_psgfs "$m"
# A relative FILE: the daemon works from "/" once mounted, yet still finds the companion.
(cd "$src" && mount_psgfs sky.psg "$m")
check "single, relative path, daemonised: the companion is still found" grep -qx \
	"companion: sky_Textures.psg (found beside the source; links need a folder mount)" \
	"$m/materials/00.material/material.txt"
check "   ... and the .glb embeds its diffuse texture" bash -c \
	"cmp -s <('$PSGFS_TOOL' cat '$src/sky.psg' export/sky.glb) '$m/export/sky.glb'"
unmount_psgfs "$m"
mount_psgfs "$lone/sky.psg" "$m"
check "single, no companion: not found" \
	grep -qx "companion: sky_Textures.psg (not found)" "$m/materials/00.material/material.txt"
unmount_psgfs "$m"

# GUIDs the companion lacks resolve to per-texture arenas named 0x<GUID>.psg anywhere in the
# mount (also upper case, and <GUID>.psg as tools write them), checked against their TOC: the
# companion holds only specular; diffuse and detail live elsewhere; a decoy named after the
# detail GUID that holds another texture is passed over.
el=$WORK/elsewhere
mkdir -p "$el/models" "$el/a" "$el/tex/deep"
cp "$src/sky.psg" "$el/models/sky.psg"
"$PSGFS_GEN" textures --only 3 "$el/models/sky_Textures.psg"
"$PSGFS_GEN" textures --only 2 "$el/tex/0X2C7F381800171902.PSG"
"$PSGFS_GEN" textures --only 5 "$el/a/0x2c7f381800171904.psg"
"$PSGFS_GEN" textures --only 4 "$el/tex/deep/2C7F381800171904.psg"
mount_psgfs "$el" "$m"
mat=$m/models/sky.psg/materials/00.material
check "elsewhere: a link per resolved channel" test "$(ls "$mat" | tr '\n' ' ')" = \
	"detail.dds detail.png diffuse.dds diffuse.png material.txt specular.dds specular.png "
check "elsewhere: specular still links into the companion" test \
	"$(readlink "$mat/specular.dds")" = "../../../sky_Textures.psg/textures/0x2c7f381800171903.dds"
check "elsewhere: diffuse links to the 0x<GUID> arena in another folder" test \
	"$(readlink "$mat/diffuse.png")" = \
	"../../../../tex/0X2C7F381800171902.PSG/textures/0x2c7f381800171902.png"
check "elsewhere: detail skips the decoy, links to <GUID>.psg" test \
	"$(readlink "$mat/detail.dds")" = \
	"../../../../tex/deep/2C7F381800171904.psg/textures/0x2c7f381800171904.dds"
check "elsewhere: every link resolves to the byte-identical texture" bash -c "
	cmp -s '$mat/diffuse.png' '$m/tex/0X2C7F381800171902.PSG/textures/0x2c7f381800171902.png' &&
	cmp -s '$mat/detail.dds' '$m/tex/deep/2C7F381800171904.psg/textures/0x2c7f381800171904.dds' &&
	cmp -s '$mat/specular.png' '$m/models/sky_Textures.psg/textures/0x2c7f381800171903.png'"
check "elsewhere: material.txt names the arena a texture came from" grep -qP \
	'^2\tdiffuse\tstream\tsky_night_0x00c0ffee00450001\t0x2C7F381800171902\ttexture 0x2c7f381800171902 in tex/0X2C7F381800171902.PSG$' \
	"$mat/material.txt"
check "elsewhere: the material-name GUID is never looked for elsewhere" grep -qP \
	'^1\tAttribulatorMaterialName\tguid\t-\t0x[0-9A-F]{16}\t- \(not in the companion\)$' \
	"$mat/material.txt"
check "elsewhere: info.txt counts both" grep -qx \
	"materials: 1; 3 of 4 GUID channels name a texture: 1 of sky_Textures.psg (linked), 2 in 0x<GUID> arenas elsewhere in the mount (linked)" \
	"$m/models/sky.psg/info.txt"
check "elsewhere: the .glb embeds the diffuse texture from the 0x<GUID> arena" bash -c "
	test \"\$(python3 '$here/glb_info.py' '$m/models/sky.psg/export/sky.glb' | awk '{print \$8}')\" = 1 &&
	python3 '$here/glb_info.py' '$m/models/sky.psg/export/sky.glb' 0 '$WORK/else.png' >/dev/null &&
	cmp -s '$WORK/else.png' '$mat/diffuse.png'"
unmount_psgfs "$m"
# No companion at all: every texture GUID from the 0x<GUID> arenas.
rm "$el/models/sky_Textures.psg"
"$PSGFS_GEN" textures --only 3 "$el/tex/0x2c7f381800171903.rx2"
mount_psgfs "$el" "$m"
mat=$m/models/sky.psg/materials/00.material
check "elsewhere, no companion: .psg and .rx2 names both count" grep -qx \
	"materials: 1; 3 of 4 GUID channels name a texture: 0 of sky_Textures.psg (not found), 3 in 0x<GUID> arenas elsewhere in the mount (linked)" \
	"$m/models/sky.psg/info.txt"
check "elsewhere, no companion: links for all three" test "$(ls "$mat" | wc -l)" = 7
unmount_psgfs "$m"

# GUIDs that neither the companion nor a 0x<GUID> name provides are found in the
# TableOfContents of any texture arena of the mount, whatever its name (the real sky_model.psg
# beside sky_textures.psg): read lazily, header and TOC only, verified against the arena as the
# mount opens it. Several arenas holding a GUID: the first by path wins, the next three are named.
# Neighbours that are no texture arena (a model, garbage, 200 junk names) are passed over
# (lying TableOfContents and the scan's bounds: tests/unit/test_guid_index.c).
tn=$WORK/tocname
mkdir -p "$tn/x" "$tn/junk"
cp "$src/sky.psg" "$tn/sky_model.psg"
"$PSGFS_GEN" textures "$tn/sky_textures.psg"
for k in "" 2 3 4; do "$PSGFS_GEN" textures --only 2 "$tn/x/more$k.psg"; done
cp "$src/sky.psg" "$tn/junk/a_model.psg"
head -c 3000 /dev/urandom > "$tn/junk/b_garbage.psg"
for i in $(seq 200); do printf 'RW4junk%04d' "$i" > "$tn/junk/j$i.rx2"; done
mount_psgfs "$tn" "$m"
mat=$m/sky_model.psg/materials/00.material
check "toc: every texture channel links" test "$(ls "$mat" | tr '\n' ' ')" = \
	"detail.dds detail.png diffuse.dds diffuse.png material.txt specular.dds specular.png "
check "toc: diffuse links into sky_textures.psg (first by path), not x/more.psg" test \
	"$(readlink "$mat/diffuse.png")" = "../../../sky_textures.psg/textures/0x2c7f381800171902.png"
check "toc: the links resolve to the byte-identical textures" bash -c "
	cmp -s '$mat/diffuse.png' '$m/sky_textures.psg/textures/0x2c7f381800171902.png' &&
	cmp -s '$mat/specular.dds' '$m/sky_textures.psg/textures/0x2c7f381800171903.dds' &&
	cmp -s '$mat/detail.dds' '$m/sky_textures.psg/textures/0x2c7f381800171904.dds'"
check "toc: material.txt names the source arena and the others" grep -qP \
	'^2\tdiffuse\tstream\tsky_night_0x00c0ffee00450001\t0x2C7F381800171902\ttexture 0x2c7f381800171902 in sky_textures.psg \(by its TableOfContents; also in x/more\.psg, x/more2\.psg, x/more3\.psg and more\)$' \
	"$mat/material.txt"
check "toc: a GUID held once names no other" grep -qP \
	'\t0x2C7F381800171903\ttexture 0x2c7f381800171903 in sky_textures.psg \(by its TableOfContents\)$' \
	"$mat/material.txt"
check "toc: the material-name GUID is never looked for in the TOC index" grep -qP \
	'^1\tAttribulatorMaterialName\tguid\t-\t0x[0-9A-F]{16}\t- \(no companion\)$' \
	"$mat/material.txt"
check "toc: info.txt counts them" grep -qx \
	"materials: 1; 3 of 4 GUID channels name a texture: 0 of sky_model_Textures.psg (not found), 3 in the TableOfContents of other texture arenas of the mount (linked)" \
	"$m/sky_model.psg/info.txt"
check "toc: the .glb embeds the diffuse texture" bash -c "
	test \"\$(python3 '$here/glb_info.py' '$m/sky_model.psg/export/sky_model.glb' | awk '{print \$8}')\" = 1 &&
	python3 '$here/glb_info.py' '$m/sky_model.psg/export/sky_model.glb' 0 '$WORK/toc.png' >/dev/null &&
	cmp -s '$WORK/toc.png' '$mat/diffuse.png'"
unmount_psgfs "$m"

# The folder's snapshot rules hold for links by TableOfContents: an arena added to a folder
# after its first listing is not shown, so never linked (though the index reads the source);
# one deleted before its first opening cannot be served, so never linked either.
ch=$WORK/tocchange
mkdir -p "$ch"
cp "$src/sky.psg" "$ch/sky_model.psg"
mount_psgfs "$ch" "$m"
ls "$m" >/dev/null
"$PSGFS_GEN" textures "$ch/sky_textures.psg"
mat=$m/sky_model.psg/materials/00.material
check "toc, added after the listing: not linked" test "$(ls "$mat")" = material.txt
check "toc, added after the listing: material.txt says not found" grep -qP \
	'\t0x2C7F381800171902\t- \(no companion, nor in any texture arena of the mount\)$' \
	"$mat/material.txt"
unmount_psgfs "$m"
mount_psgfs "$ch" "$m"
ls "$m" >/dev/null
mv "$ch/sky_textures.psg" "$WORK/gone.psg"
check "toc, deleted before its first opening: not linked" test "$(ls "$mat")" = material.txt
unmount_psgfs "$m"

# The offline tool shows the same materials.
check "tool: cat material.txt matches the mount's" bash -c \
	"'$PSGFS_TOOL' cat '$src/sky.psg' materials/00.material/material.txt | grep -q 'texture 0x2c7f381800171903'"

finish
