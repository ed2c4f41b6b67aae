#!/usr/bin/env bash
# Mods into archives (issue 27 item 3, README "Back into the game"): a picture saved with
# -o mods=OUTDIR into an entry of an archive writes the arena at OUTDIR/<entry path>;
# `psgfs-tool pack --like ARCHIVE --overlay OUTDIR` then gives the game-ready archive, whose
# texture is the new one and whose every other entry is the original's, byte for byte. Both for
# a single-archive mount and for a folder mount holding archives (OUTDIR then also holds a loose
# arena's mod, which --skip-added leaves out).
. "$(dirname "$0")/lib.sh"

T=$PSGFS_TOOL
G=$WORK/game
"$PSGFS_GEN" game "$G" >/dev/null
CAC=$G/data/content/createacharacter.big
entries() { "$T" manifest --assets files "$1" | grep -v -e '^info\.txt	' -e '^errors\.txt	'; }
entries "$CAC" >"$WORK/orig.m"
# flip PICTURE OUT: the DDS with every texel byte changed (same format, size and mips)
flip() {
	python3 - "$1" "$2" <<-'PY'
	import sys
	b = bytearray(open(sys.argv[1], "rb").read())
	for i in range(128, len(b)):
	    b[i] ^= 0x5A
	open(sys.argv[2], "wb").write(bytes(b))
	PY
}
# check_packed NAME NEW ENTRY DDS_IN_ENTRY SAVED: NEW serves SAVED at the entry's picture, and
# every entry but ENTRY is the original's
check_packed() {
	local name=$1 new=$2 entry=$3 pic=$4 saved=$5 m=$WORK/chk.$RANDOM
	entries "$new" >"$WORK/new.m"
	check "$name: every other entry byte for byte" cmp -s <(grep -v -F "$entry	" "$WORK/orig.m") \
		<(grep -v -F "$entry	" "$WORK/new.m")
	check "$name: the modded entry changed" bash -c "! cmp -s <(grep -F '$entry	' '$WORK/orig.m') \
		<(grep -F '$entry	' '$WORK/new.m')"
	check "$name: same entry count" [ "$(wc -l <"$WORK/orig.m")" = "$(wc -l <"$WORK/new.m")" ]
	if mount_psgfs "$new" "$m"; then
		check "$name: the new archive serves the saved picture" cmp -s "$m/$entry/textures/$pic" "$saved"
		unmount_psgfs "$m"
	else
		not_ok "$name: mount the new archive"
	fi
}

# ---- a single-archive mount ----
od1=$WORK/od1
mkdir -p "$od1"
mount_psgfs "$CAC" "$WORK/m1" -o "mods=$od1"
tex=$(cd "$WORK/m1" && find . -path '*_Textures.psg/textures/*.dds' | sort | sed -n 1p)
tex=${tex#./}
entry=${tex%/textures/*}
pic=${tex##*/}
cp "$WORK/m1/$tex" "$WORK/a.dds"
flip "$WORK/a.dds" "$WORK/b.dds"
check "single: the picture saved" cp "$WORK/b.dds" "$WORK/m1/$tex"
check "single: the mount serves it" cmp -s "$WORK/m1/$tex" "$WORK/b.dds"
unmount_psgfs "$WORK/m1"
check "single: OUTDIR holds the arena at the entry's path" test -f "$od1/$entry"
check "single: pack --like --overlay OUTDIR" "$T" pack --like "$CAC" --overlay "$od1" "$WORK/new1.big"
check_packed single "$WORK/new1.big" "$entry" "$pic" "$WORK/b.dds"
check "single: the original archive untouched" cmp -s <(entries "$CAC") "$WORK/orig.m"
# in place: OUT may be ORIG itself (read through its descriptor, replaced by the rename)
cp "$CAC" "$WORK/inplace.big"
check "single: pack --like X --overlay OUTDIR X, in place" "$T" pack --like "$WORK/inplace.big" \
	--overlay "$od1" "$WORK/inplace.big"
check "single: in place gives the same archive" cmp -s "$WORK/inplace.big" "$WORK/new1.big"

# ---- a folder mount holding archives; a loose arena modded too ----
od2=$WORK/od2
mkdir -p "$od2"
mount_psgfs "$G" "$WORK/m2" -o "mods=$od2"
arc=$WORK/m2/data/content/createacharacter.big
check "folder: the picture saved into the archive's entry" cp "$WORK/b.dds" "$arc/$tex"
loose=$(cd "$WORK/m2" && find data/content/loose -path '*.psg/textures/*.dds' | sort | sed -n 1p)
if [ -n "$loose" ]; then
	flip "$WORK/m2/$loose" "$WORK/c.dds"
	check "folder: a loose arena's picture saved" cp "$WORK/c.dds" "$WORK/m2/$loose"
fi
unmount_psgfs "$WORK/m2"
check "folder: OUTDIR holds the arena at the entry's path" test -f "$od2/$entry"
rc=0
"$T" pack --like "$CAC" --overlay "$od2" "$WORK/new2.big" 2>"$WORK/err" >/dev/null || rc=$?
if [ -n "$loose" ]; then
	check "folder: the loose mod is refused without --skip-added (exit 13, got $rc)" [ "$rc" = 13 ]
fi
check "folder: pack --like --overlay OUTDIR --skip-added" "$T" pack --like "$CAC" --overlay "$od2" \
	--skip-added "$WORK/new2.big"
check_packed folder "$WORK/new2.big" "$entry" "$pic" "$WORK/b.dds"
check "folder and single give the same archive" cmp -s "$WORK/new1.big" "$WORK/new2.big"
finish
