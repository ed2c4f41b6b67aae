#!/usr/bin/env bash
# Texture mods under load and faults (issue 29 item 6; issue 30 items 5, 6, 7, 9, 13): saves
# and reads while assets are evicted (max_assets=1), a descriptor held across a save (old or
# EIO, never a mix), refused editor saves piling up, new names in textures/, OUTDIR removed and
# re-created while mounted, chmod/touch on a picture. Bounded: a few hundred saves, each a
# 25 KiB arena.
. "$(dirname "$0")/lib.sh"
: "${ERRNO_PROBE:?}"
STRESS=$(dirname "$0")/mods_stress.py
if ! command -v python3 >/dev/null; then
	echo "# skip: python3 is not installed (scripts/deps test)"
	exit 0
fi
st() { timeout 300 python3 "$STRESS" "$@"; }
# val KEY OUTPUT: the value of KEY=value in OUTPUT
val() { sed -n "s/^$1=//p" <<<"$2"; }

src=$WORK/src
out=$WORK/out
mkdir -p "$src" "$out"
for i in 0 1 2 3 4; do
	"$PSGFS_GEN" textures --seed $((i + 1)) "$src/a$i.psg" >/dev/null
done
src_sum=$(cat "$src"/*.psg | md5sum)

# ---- more arenas in use than max_assets: every valid save and read succeeds ----
m=$WORK/m
mount_psgfs "$src" "$m" -o mods="$out",max_assets=1
res=$(st saves "$m" 300)
echo "$res" | sed 's/^/# /'
check "300 saves at max_assets=1: none fails" test "$(val save_failures "$res" | cut -d' ' -f1)" = 0
check "... no read of a picture fails meanwhile" test "$(val read_failures "$res" | cut -d' ' -f1)" = 0
check "... each picture is the last one written" test "$(val wrong_pictures "$res")" = 0
check "... errors.txt of every arena is empty" bash -c "! cat '$m'/a*.psg/errors.txt | grep -q ."

# ---- a descriptor opened before a save: the old picture to its end, or EIO ----
res=$(st torn "$m" a0.psg)
echo "$res" | sed 's/^/# /'
for ext in dds png; do
	got=$(val "torn.$ext" "$res")
	check "a .$ext held open across a save reads old or EIO (${got%% *})" \
		bash -c "case '${got%% *}' in old | EIO) exit 0 ;; *) exit 1 ;; esac"
done
unmount_psgfs "$m"

# ---- refused editor saves leave nothing that blocks later saves ----
mount_psgfs "$src" "$m" -o mods="$out"
res=$(st refused "$m" a1.psg 300)
echo "$res" | sed 's/^/# /'
check "300 editor saves of garbage: each rename refused (EINVAL)" test "$(val refused "$res")" = EINVAL:300
check "300 temporaries written, closed and never renamed: all made" test "$(val abandoned "$res")" = OK:300
check "... then a valid save succeeds" test "$(val valid "$res")" = OK
check "... and a valid editor save (temporary + rename)" test "$(val valid_temp "$res")" = OK
check "... the refused temporaries are gone" bash -c "! ls -a '$m/a1.psg/textures' | grep -q goutputstream"
check "... errors.txt says which abandoned ones were discarded" grep -q "textures/.abandoned-0: a temporary nobody had open was discarded" "$m/a1.psg/errors.txt"

# ---- a new name in textures/ cannot add a texture: refused at create, with its line ----
T=$m/a2.psg/textures
pic=$(ls "$T" | grep '\.png$' | sed -n 1p)
check "a new .png name in textures/: EPERM at create" \
	test "$("$ERRNO_PROBE" open_creat "$T/new_texture.png")" = EPERM
check "... errors.txt says why" grep -q "textures/new_texture.png: refused: .*cannot add" "$m/a2.psg/errors.txt"
check "... and nothing of that name exists" test ! -e "$T/new_texture.png"

# ---- chmod and touch on a picture: refused, not a silent no-op ----
check "chmod of a picture to another mode: EPERM" test "$("$ERRNO_PROBE" chmod "$T/$pic")" = EPERM
check "... to the mode it has: OK" chmod 644 "$T/$pic"
check "touch of a picture: EPERM" test "$("$ERRNO_PROBE" utime "$T/$pic")" = EPERM
unmount_psgfs "$m"

# ---- OUTDIR removed while mounted, then re-created ----
o2=$WORK/o2
mkdir -p "$o2"
mount_psgfs "$src" "$m" -o mods="$o2"
T=$m/a3.psg/textures
dds=$(ls "$T" | grep '\.dds$' | sed -n 7p)
cp "$T/$dds" "$WORK/a3.dds"
rm -rf "$o2"
check "OUTDIR removed: a save fails (EIO)" bash -c "! cp '$WORK/a3.dds' '$T/$dds' 2>/dev/null"
check "... errors.txt says the mods folder is gone" grep -q "textures/$dds: not written: .*mods folder .* is gone" "$m/a3.psg/errors.txt"
mkdir -p "$o2"
check "OUTDIR re-created: a save succeeds" cp "$WORK/a3.dds" "$T/$dds"
check "... and writes the arena there" test -f "$o2/a3.psg"
unmount_psgfs "$m"

check "the sources are unchanged" test "$(cat "$src"/*.psg | md5sum)" = "$src_sum"
finish
