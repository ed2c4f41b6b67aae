#!/usr/bin/env bash
# Texture mods (-o mods=OUTDIR) through real mounts: editors' ways of saving (truncate and
# write, temporary and rename, pieces out of order, a patch, a descriptor closed early, two
# writers), ImageMagick's DDS and PNG files, refusals (garbage, truncated, wrong size), two
# textures of one arena, remounting on the same OUTDIR, Xbox 360 and PS3 twins written alike, a
# folder mount and the model whose companion changed, kill -9 during a commit, and memory while
# a 4096x4096 picture goes in. The source's checksum never changes.
. "$(dirname "$0")/lib.sh"
: "${MODS_EDITOR:=$(dirname "$0")/mods_editor.py}" "${ERRNO_PROBE:?}"
# ImageMagick makes the DDS and PNG files and compares pictures (scripts/deps test installs it).
for tool in convert compare python3; do
	if ! command -v "$tool" >/dev/null; then
		echo "# skip: $tool is not installed (scripts/deps test)"
		exit 0
	fi
done

ed() { timeout 120 python3 "$MODS_EDITOR" "$@"; }
sum() { md5sum "$@" | cut -d' ' -f1; }
# wait_for CMD...: the kernel drops its cached pages and attributes of what a commit changed
# a moment after the commit (a notification thread): poll up to 5 s.
wait_for() {
	for _ in $(seq 50); do
		"$@" 2>/dev/null && return 0
		sleep 0.1
	done
	"$@"
}
# tool_sum ARENA FILE: md5 of a file of the arena's tree as psgfs-tool renders it.
tool_sum() { "$PSGFS_TOOL" cat "$1" "$2" | md5sum | cut -d' ' -f1; }

src=$WORK/src
out=$WORK/out
mkdir -p "$src" "$out"
tex=$src/t.psg
"$PSGFS_GEN" textures "$tex" >/dev/null
src_sum=$(sum "$tex")

# ---- options ----
check "a missing mods folder is a usage error (exit 2)" bash -c \
	"'$PSGFS' '$tex' '$WORK/mx' -o mods='$WORK/nope' 2>/dev/null; [ \$? = 2 ]"
mkdir -p "$WORK/mx"
check "the source file's own folder as mods folder: exit 2 (the source would be replaced)" \
	bash -c "'$PSGFS' '$tex' '$WORK/mx' -o mods='$src' 2>'$WORK/e'; [ \$? = 2 ] && grep -q overlaps '$WORK/e'"

m=$WORK/m
mount_psgfs "$tex" "$m" -o mods="$out"
T=$m/textures
names=($(ls "$T" | sed -n 's/\.dds$//p'))
dxt1=${names[0]} # the generated arena's texture 0: DXT1 64x64, full chain
argb=${names[6]} # texture 6: A8R8G8B8 64x32, swizzled, full chain
cp "$T/$argb.dds" "$WORK/orig_argb.dds"

# ---- what is writable ----
check "textures/ and its pictures are owner-writable, as is the rest (whose writes fail)" bash -c \
	"[ \$(stat -c %a '$T/$dxt1.dds') = 644 ] && [ \$(stat -c %a '$T') = 755 ] &&
	 [ \$(stat -c %a '$m/info.txt') = 644 ] && [ \$(stat -c %a '$m/objects') = 755 ]"
for op in "open_w $m/info.txt" "open_trunc $m/header.txt" "mkdir $T/d" "unlink $T/$dxt1.dds" \
	"rename $T/$dxt1.dds $T/x.dds" "open_creat $m/objects/new.bin" "symlink $T/l x" \
	"link $T/$dxt1.dds $T/hard" "rmdir $m/objects" "truncate $T/$dxt1.png"; do
	set -- $op
	check "EROFS: $1 ${2#$m/}" test "$("$ERRNO_PROBE" "$@")" = EROFS
done

# ---- truncate and write ----
cp "$T/$dxt1.dds" "$WORK/dxt1.dds"
check "cp of a texture's own .dds back into it succeeds" cp "$WORK/dxt1.dds" "$T/$dxt1.dds"
check "... and OUTDIR/t.psg is the source, byte for byte" cmp -s "$out/t.psg" "$tex"
check "info.txt says the arena comes from OUTDIR" grep -q "^source: $out/t.psg" "$m/info.txt"
check "info.txt says what was written" grep -q "textures/$dxt1.dds: DDS DXT1 .*texel bytes replaced" "$m/info.txt"
check "the source is unchanged" test "$(sum "$tex")" = "$src_sum"

# ---- PNG: the negative of an uncompressed texture comes back exactly ----
convert "$T/$argb.png" -channel RGB -negate "$WORK/neg.png"
check "a PNG of the texture's size: the editor's close succeeds" test "$(ed trunc "$T/$argb.png" "$WORK/neg.png")" = OK
check "the served .png is the written picture, pixel for pixel" wait_for \
	bash -c "[ \$(compare -metric AE '$T/$argb.png' '$WORK/neg.png' null: 2>&1) = 0 ]"

# ---- DDS of another size, from ImageMagick ----
convert -size 128x64 gradient:red-blue -define dds:compression=dxt1 -define dds:mipmaps=3 "$WORK/im.dds"
check "an ImageMagick DXT1 128x64 with 4 levels into the 64x64 texture" test "$(ed trunc "$T/$dxt1.dds" "$WORK/im.dds")" = OK
check "... the texture is laid out again" grep -q "textures/$dxt1.dds: DDS DXT1 128x64, 4 mip levels: laid out again" "$m/info.txt"
# same_payload A B: what follows the 128-byte header is equal (ImageMagick writes its own
# header fields)
same_payload() { cmp -s <(tail -c +129 "$1") <(tail -c +129 "$2"); }
export -f same_payload
check "... its .dds holds the written texels" wait_for same_payload "$T/$dxt1.dds" "$WORK/im.dds"
check "... psgfs-tool reads OUTDIR/t.psg with no problem" bash -c \
	"[ -z \"\$('$PSGFS_TOOL' cat '$out/t.psg' errors.txt)\" ]"
check "... and agrees with the mount" test "$(tool_sum "$out/t.psg" textures/$dxt1.dds)" = "$(sum "$T/$dxt1.dds")"
convert -size 40x24 xc:green -define dds:compression=none "$WORK/rgb.dds"
check "a 24-bit RGB DDS (no psgfs format) is converted into the texture's format" bash -c \
	"[ \$(python3 '$MODS_EDITOR' trunc '$T/$dxt1.dds' '$WORK/rgb.dds') = OK ] && grep -q 'DXT1 40x24, 1 mip level (converted)' '$m/info.txt'"

# ---- editors' other ways ----
cp "$T/$argb.dds" "$WORK/argb.dds"
convert "$T/$argb.png" -flip "$WORK/flip.png"
check "temporary + rename (GIO): OK" test "$(ed temp "$T" "$argb.png" "$WORK/flip.png")" = OK
check "... the temporary is not listed and is gone" bash -c "! ls -a '$T' | grep -q goutputstream"
check "... the picture is the flipped one" wait_for \
	bash -c "[ \$(compare -metric AE '$T/$argb.png' '$WORK/flip.png' null: 2>&1) = 0 ]"
check "pieces written last first: OK" test "$(ed reverse "$T/$argb.dds" "$WORK/argb.dds")" = OK
check "... the .dds is back to what it was" wait_for cmp -s "$T/$argb.dds" "$WORK/argb.dds"
check "a descriptor closed before writing (cmd > file): OK" test "$(ed dup "$T/$argb.png" "$WORK/neg.png")" = OK
check "a writer reads back what it wrote" test "$(ed readback "$T/$argb.dds" "$WORK/argb.dds")" = OK
# a patch: 16 bytes of texels changed in place, the rest of the file as it was
head -c 144 "$WORK/argb.dds" | tail -c 16 | tr '\000-\377' '\377\000-\376' >"$WORK/patch"
check "a patch written into the texels without truncating: OK" test "$(ed patch "$T/$argb.dds" "$WORK/patch" 128)" = OK
check "... the file is the old one with the patch" wait_for bash -c \
	"cmp -s <(head -c 128 '$T/$argb.dds') <(head -c 128 '$WORK/argb.dds') &&
	 cmp -s <(tail -c +129 '$T/$argb.dds' | head -c 16) '$WORK/patch' &&
	 cmp -s <(tail -c +145 '$T/$argb.dds') <(tail -c +145 '$WORK/argb.dds')"

# ---- refusals: close fails, errors.txt says why, nothing changes ----
before=$(sum "$out/t.psg")
served=$(sum "$T/$argb.dds")
head -c 5000 /dev/urandom >"$WORK/garbage"
check "garbage: close fails with EINVAL" test "$(ed trunc "$T/$argb.dds" "$WORK/garbage")" = close:EINVAL
check "... errors.txt says why" grep -q "textures/$argb.dds: refused: not a DDS file" "$m/errors.txt"
head -c 1000 "$WORK/argb.dds" >"$WORK/short.dds"
check "a truncated DDS: EINVAL" test "$(ed trunc "$T/$argb.dds" "$WORK/short.dds")" = close:EINVAL
check "... errors.txt says truncated" grep -q "refused: truncated" "$m/errors.txt"
convert -size 50x50 xc:red "$WORK/small.png"
check "a PNG of another size: EINVAL" test "$(ed trunc "$T/$argb.png" "$WORK/small.png")" = close:EINVAL
check "... errors.txt says which size" grep -q "save it at 64x32" "$m/errors.txt"
check "a temporary of garbage renamed over a picture: the rename fails (EINVAL)" \
	test "$(ed temp "$T" "$argb.dds" "$WORK/garbage" .tmp-garbage)" = rename:EINVAL
check "... and it is discarded (it would never be a picture)" test ! -e "$T/.tmp-garbage"
check "a new name with a picture's extension is no temporary: EPERM at create" \
	test "$(ed temp "$T" "$argb.dds" "$WORK/garbage" new.dds)" = create:EPERM
check "... errors.txt says a texture cannot be added" grep -q "textures/new.dds: refused: .*cannot add one" "$m/errors.txt"
check "a new name that is no temporary's (it would be lost at unmount): EPERM at create" \
	test "$(ed temp "$T" "$argb.dds" "$WORK/garbage" notes.txt)" = create:EPERM
check "... errors.txt says it would be lost" grep -q "textures/notes.txt: refused: .*lost at unmount" "$m/errors.txt"
cp "$T/$argb.png" "$WORK/same.png"
check "a picture's name with a suffix is a temporary (Qt's T.png.XXXXXX): saved back, OK" \
	test "$(ed temp "$T" "$argb.png" "$WORK/same.png" "$argb.png.Ab12Cd")" = OK
check "after the refusals OUTDIR/t.psg is unchanged" test "$(sum "$out/t.psg")" = "$before"
check "... and the mount serves what it served" test "$(sum "$T/$argb.dds")" = "$served"

# ---- two writers; two textures ----
# A8R8G8B8 (-alpha on): a format psgfs stores, so the texels go in as they are
convert -size 64x32 xc:blue -alpha on -define dds:compression=none -define dds:mipmaps=0 "$WORK/blue.dds"
convert -size 64x32 xc:yellow -alpha on -define dds:compression=none -define dds:mipmaps=0 "$WORK/yellow.dds"
check "two writers, the first closes first: OK" test "$(ed two "$T/$argb.dds" "$WORK/blue.dds" "$WORK/yellow.dds" 1)" = OK
check "... the last to close wins (yellow)" wait_for same_payload "$T/$argb.dds" "$WORK/yellow.dds"
check "two writers, the second closes first: OK" test "$(ed two "$T/$argb.dds" "$WORK/blue.dds" "$WORK/yellow.dds" 2)" = OK
check "... the last to close wins (blue)" wait_for same_payload "$T/$argb.dds" "$WORK/blue.dds"
cp "$T/$argb.dds" "$WORK/final_argb.dds"
cp "$T/$dxt1.dds" "$WORK/final_dxt1.dds"
check "both textures written into the arena are in OUTDIR/t.psg" bash -c \
	"'$PSGFS_TOOL' cat '$out/t.psg' textures/$argb.dds | cmp -s - '$WORK/final_argb.dds' &&
	 '$PSGFS_TOOL' cat '$out/t.psg' textures/$dxt1.dds | cmp -s - '$WORK/final_dxt1.dds' &&
	 ! cmp -s '$WORK/final_dxt1.dds' '$WORK/dxt1.dds'"
check "the source is still unchanged" test "$(sum "$tex")" = "$src_sum"
unmount_psgfs "$m"

# ---- remount on the same OUTDIR ----
m2=$WORK/m2
mount_psgfs "$tex" "$m2" -o mods="$out"
check "a new mount serves the mods already in OUTDIR" cmp -s "$m2/textures/$argb.dds" "$WORK/final_argb.dds"
check "... and says where they come from" grep -q "^source: $out/t.psg" "$m2/info.txt"
unmount_psgfs "$m2"
check "without -o mods the source is served" bash -c \
	"'$PSGFS_TOOL' cat '$tex' textures/$argb.dds | cmp -s - '$WORK/orig_argb.dds'"

# ---- Xbox 360 and its PS3 twin: one DDS, equal pictures ----
"$PSGFS_GEN" textures --platform x360 "$src/x.rx2" >/dev/null
"$PSGFS_GEN" textures --platform ps3-twin "$src/tw.psg" >/dev/null
x_sum=$(sum "$src/x.rx2" "$src/tw.psg")
mkdir -p "$WORK/ox" "$WORK/op"
mx=$WORK/mx
mp=$WORK/mp
mount_psgfs "$src/x.rx2" "$mx" -o mods="$WORK/ox"
mount_psgfs "$src/tw.psg" "$mp" -o mods="$WORK/op"
tw=$(ls "$mp/textures" | sed -n 's/\.dds$//p' | sed -n 12p)
check "the twin texture exists in both ($tw)" test -f "$mx/textures/$tw.dds"
cp "$mx/textures/$tw.dds" "$WORK/x.dds"
check "the Xbox 360 texture's own .dds back: OUTDIR/x.rx2 is the source" bash -c \
	"cp '$WORK/x.dds' '$mx/textures/$tw.dds' && cmp -s '$WORK/ox/x.rx2' '$src/x.rx2'"
convert -size 96x48 gradient:white-black -define dds:compression=dxt5 -define dds:mipmaps=2 "$WORK/tw.dds"
check "one DDS into both twins" bash -c \
	"[ \$(python3 '$MODS_EDITOR' trunc '$mx/textures/$tw.dds' '$WORK/tw.dds') = OK ] && [ \$(python3 '$MODS_EDITOR' trunc '$mp/textures/$tw.dds' '$WORK/tw.dds') = OK ]"
check "... their .dds files are equal" wait_for cmp -s "$mx/textures/$tw.dds" "$mp/textures/$tw.dds"
check "... and their .png files" wait_for cmp -s "$mx/textures/$tw.png" "$mp/textures/$tw.png"
convert "$mp/textures/$tw.png" -negate "$WORK/twn.png"
check "one PNG into both twins, equal again" bash -c \
	"[ \$(python3 '$MODS_EDITOR' trunc '$mx/textures/$tw.png' '$WORK/twn.png') = OK ] && [ \$(python3 '$MODS_EDITOR' trunc '$mp/textures/$tw.png' '$WORK/twn.png') = OK ]"
check "... .dds equal" wait_for cmp -s "$mx/textures/$tw.dds" "$mp/textures/$tw.dds"
check "the twins' sources are unchanged" test "$(sum "$src/x.rx2" "$src/tw.psg")" = "$x_sum"
unmount_psgfs "$mx"
unmount_psgfs "$mp"

# ---- every texture's own .dds and .png saved back: the source, byte for byte ----
# save_back MNT NAME...: each picture of the textures read out and written back over itself
# (cp: open O_TRUNC, write, close = a commit). Prints the pictures that could not be read (a
# volume texture is listed, not converted: EIO), then "failed:" and those refused on write.
save_back() {
	local mnt=$1 f unread="" failed=""
	shift
	for f in "$@"; do
		if ! cat "$mnt/textures/$f" >"$WORK/sv" 2>/dev/null; then
			unread="$unread $f"
		elif ! cp "$WORK/sv" "$mnt/textures/$f" 2>/dev/null; then
			failed="$failed $f"
		fi
	done
	echo "${unread# } failed:$failed"
}
# half NAME...: this build's half of a texture's pictures (its .dds and .png, listed next to
# each other): textures 0, 2, 4... in the plain build, 1, 3, 5... in the ASan build. Each save
# back is a whole commit of one code path: every picture is saved back in one of the builds
# (tests/README.md).
half() {
	local i=0 odd=0 f
	sanitized && odd=1
	for f in "$@"; do
		[ $((i / 2 % 2)) = $odd ] && echo "$f"
		i=$((i + 1))
	done
}
# PS3: every format (NPOT, pitched, swizzled, cube maps), a cube map whose data holds one face
# (the tool-made environment map), cube maps of 1 to 5 faces, face 0 with some of its levels.
"$PSGFS_GEN" textures --partial --short-cube "$src/part.psg" >/dev/null
part_sum=$(sum "$src/part.psg")
mkdir -p "$WORK/opart"
mq=$WORK/mq
mount_psgfs "$src/part.psg" "$mq" -o mods="$WORK/opart"
vol=$(grep ' 3D texture ' "$mq/errors.txt" | grep -o 'object [0-9]*' | sed -n 1p)
check "the partial shapes are there (a one-face cube, a 5-face cube, a volume)" bash -c \
	"grep -q 'serving 1 face with 1 mip level' '$mq/errors.txt' &&
	 grep -q 'serving 5 faces' '$mq/errors.txt' && [ -n '$vol' ]"
pics=($(ls "$mq/textures"))
volname=$(awk '$2 == "A8R8G8B8" && $3 == "16x16" && $4 == 5 {print $1}' "$mq/info.txt" | tail -1)
mine=($(half "${pics[@]}"))
res=$(save_back "$mq" "${mine[@]}")
unread=$(printf '%s\n' "${mine[@]}" | { grep -x -e "$volname.dds" -e "$volname.png" || true; } | tr '\n' ' ')
check "PS3: ${#mine[@]} of ${#pics[@]} pictures (this build's half) saved back, none refused; only the volume texture's are unread" \
	test "$res" = "${unread% } failed:"
check "... OUTDIR/part.psg is the source, byte for byte" cmp "$WORK/opart/part.psg" "$src/part.psg"
check "... errors.txt refuses nothing" bash -c "! grep -q refused '$mq/errors.txt'"
check "... the source is unchanged" test "$(sum "$src/part.psg")" = "$part_sum"
unmount_psgfs "$mq"
# Xbox 360 (16 MB: a commit rewrites it all, so a sample): the cube maps (one with its base
# level in the packed mip tail) and every format at 100x60 with one level and a full chain
# (tiled, NPOT, packed mip tails).
mkdir -p "$WORK/oxs"
mount_psgfs "$src/x.rx2" "$mx" -o mods="$WORK/oxs"
xs=($(awk '$5 == "cube" || $3 == "100x60" {print $1 ".dds"; print $1 ".png"}' "$mx/info.txt"))
mine=($(half "${xs[@]}"))
res=$(save_back "$mx" "${mine[@]}")
check "Xbox 360: ${#mine[@]} of ${#xs[@]} pictures (cube maps, mip tails, every format; this build's half) saved back, none refused" \
	test "$res" = " failed:"
check "... OUTDIR/x.rx2 is the source, byte for byte" cmp "$WORK/oxs/x.rx2" "$src/x.rx2"
unmount_psgfs "$mx"

# ---- a folder mount: OUTDIR mirrors the asset's path; the model follows its companion ----
"$PSGFS_GEN" folder --assets 12 "$WORK/game" >/dev/null
game_sum=$(cd "$WORK/game" && find . -type f -print0 | sort -z | xargs -0 md5sum | md5sum)
mkdir -p "$WORK/og"
mf=$WORK/mf
mount_psgfs "$WORK/game" "$mf" -o mods="$WORK/og"
comp=$(cd "$WORK/game" && find . -name '*_Textures.psg' | sort | sed -n 1p)
comp=${comp#./}
model=${comp%_Textures.psg}.psg
check "the folder has a model with a companion ($model)" test -f "$WORK/game/$model"
link=$(cd "$mf/$model/materials" && ls -d */ | sed -n 1p)
png=diffuse.png # the .glb embeds each material's diffuse texture
check "the model's material links its diffuse texture ($link$png)" test -L "$mf/$model/materials/$link$png"
target=$(readlink -f "$mf/$model/materials/$link/$png")
glb=$(ls "$mf/$model/export/"*.glb)
glb_before=$(sum "$glb")
convert "$target" -negate "$WORK/fneg.png"
check "a PNG into the companion, through the material's link" test "$(ed trunc "$mf/$model/materials/$link/$png" "$WORK/fneg.png")" = OK
check "OUTDIR holds the companion at its path in the folder" test -f "$WORK/og/$comp"
check "the link leads to the new picture (PSNR > 25 dB: block compression)" wait_for bash -c \
	"compare -metric PSNR '$mf/$model/materials/$link/$png' '$WORK/fneg.png' null: 2>&1 | awk '{exit !(\$1 == \"inf\" || \$1 > 25)}'"
check "the model's .glb embeds the new texture (it changed)" wait_for \
	bash -c "[ \$(md5sum < '$glb' | cut -d' ' -f1) != $glb_before ]"
check "nothing else appeared in OUTDIR" test "$(cd "$WORK/og" && find . -type f | wc -l)" = 1
check "the game folder is unchanged" test "$(cd "$WORK/game" && find . -type f -print0 | sort -z | xargs -0 md5sum | md5sum)" = "$game_sum"
unmount_psgfs "$mf"

# ---- a single-file mount of the model starts from its companion's mod ----
# Single-file mounts write OUTDIR/<name>: the companion modded above, moved there, is what a
# later mount of the model with the same OUTDIR embeds.
mkdir -p "$WORK/os"
cp "$WORK/og/$comp" "$WORK/os/"
ms=$WORK/ms
mount_psgfs "$WORK/game/$model" "$ms"
glb_plain=$(sum "$ms/export/"*.glb)
unmount_psgfs "$ms"
mount_psgfs "$WORK/game/$model" "$ms" -o mods="$WORK/os"
check "the model's own mount says its companion's mod is served" grep -q "its mod in the mods folder" "$ms/info.txt"
check "... and its .glb embeds the modded texture" test "$(sum "$ms/export/"*.glb)" != "$glb_plain"
unmount_psgfs "$ms"

# ---- kill -9 while a commit runs: OUTDIR holds the old or the new arena, never a part ----
"$PSGFS_GEN" textures --real-shape "$src/r.psg" >/dev/null
r_sum=$(sum "$src/r.psg")
mkdir -p "$WORK/ok"
# a 1024x1024 DXT1 with its mips (what ImageMagick made of plasma:fractal, without its cost)
python3 "$(dirname "$0")/bigpic.py" dxt1 1024 1024 "$WORK/big.dds"
bad=0
for delay in 0.05 0.2 0.5; do
	mk=$WORK/mk$delay
	mkdir -p "$mk"
	timeout 30 "$PSGFS" -f "$src/r.psg" "$mk" -o mods="$WORK/ok" &
	pid=$!
	for _ in $(seq 100); do mountpoint -q "$mk" && break; sleep 0.05; done
	first=$(ls "$mk/textures" | sed -n 1p)
	(python3 "$MODS_EDITOR" trunc "$mk/textures/$first" "$WORK/big.dds" >/dev/null 2>&1 &)
	sleep "$delay"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	fusermount3 -u -z "$mk" 2>/dev/null || true
	if [ -e "$WORK/ok/r.psg" ] && ! "$PSGFS_TOOL" cat "$WORK/ok/r.psg" errors.txt >/dev/null 2>&1; then
		echo "# after kill -9 at $delay s: OUTDIR/r.psg does not open"
		bad=1
	fi
done
check "after kill -9: OUTDIR/r.psg is absent or a whole arena" test "$bad" = 0
mkdir -p "$WORK/ok/sub"
: >"$WORK/ok/sub/.r.psg.psgfs-tmp" # as a crash between naming and renaming would leave it
mk=$WORK/mk
mount_psgfs "$src/r.psg" "$mk" -o mods="$WORK/ok"
check "after a restart no temporary of ours is left in OUTDIR" \
	test -z "$(find "$WORK/ok" -name '*.psgfs-tmp')"
unmount_psgfs "$mk"
check "the source is unchanged after the kills" test "$(sum "$src/r.psg")" = "$r_sum"

# ---- memory: a 4096x4096 picture goes in ----
# (made by bigpic.py: ImageMagick spent 7 CPU-seconds making them; it still judges the result)
python3 "$(dirname "$0")/bigpic.py" dds 4096 4096 "$WORK/huge.dds"
python3 "$(dirname "$0")/bigpic.py" png 4096 4096 "$WORK/huge.png"
mh=$WORK/mh
mkdir -p "$WORK/oh" "$mh"
# not under timeout: the sampler reads the daemon's own /proc entry (the trap unmounts it)
"$PSGFS" -f "$tex" "$mh" -o mods="$WORK/oh" &
hpid=$!
for _ in $(seq 100); do mountpoint -q "$mh" && break; sleep 0.05; done
MOUNTS+=("$mh")
check "a 4096x4096 A8R8G8B8 DDS (64 MiB) into a texture: OK" test "$(ed trunc "$mh/textures/$argb.dds" "$WORK/huge.dds")" = OK
peak=0
(while kill -0 "$hpid" 2>/dev/null; do awk '/^RssAnon/ {print $2}' "/proc/$hpid/status"; sleep 0.02; done >"$WORK/rss" 2>/dev/null &)
check "a 4096x4096 PNG into it: OK" test "$(ed trunc "$mh/textures/$argb.png" "$WORK/huge.png")" = OK
peak=$(sort -n "$WORK/rss" | tail -1)
echo "# peak RssAnon while the 4096x4096 PNG went in: ${peak:-?} kB"
check "... the daemon's memory stayed below 32 MiB (the picture alone is 64 MiB)" test "${peak:-0}" -lt 32768
# The plain build has ImageMagick compare the served .png (64 MiB rendered, then decoded);
# the ASan build checks the cheaper equivalent, the served .dds's first level byte for byte
# against the picture's pixels (tests/README.md).
if sanitized; then
	check "... and the picture is served (level 0 of the .dds is its pixels)" wait_for \
		python3 "$(dirname "$0")/bigpic.py" png-is-dds 4096 4096 "$mh/textures/$argb.dds"
else
	check "... and the picture is served" wait_for bash -c \
		"[ \$(compare -metric AE '$mh/textures/$argb.png' '$WORK/huge.png' null: 2>&1) = 0 ]"
fi
fusermount3 -u "$mh"
wait "$hpid" 2>/dev/null || true
check "the source is unchanged at the end" test "$(sum "$tex")" = "$src_sum"
finish
