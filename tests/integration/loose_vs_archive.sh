#!/usr/bin/env bash
# Loose files and archives show the same tree (issue 28 item 6; README "Archives": an asset
# entry shows exactly the tree a folder mount shows). Every kind of asset the generator makes
# (PS3 and Xbox 360 sky and skinned arenas, a texture arena, PSK, PSKX, PSA) is mounted loose
# in a folder and inside each archive kind psgfs-tool pack writes (EB v3 stored, RefPack and
# chunked; BIGF; BIG4), the archives as entries of a folder mount and one as a mount of its
# own; the two trees are compared file for file: names, sizes and the bytes of every file.
# Left out of the comparison, and only these, because they legitimately name the container:
#   - the archive's own info.txt and errors.txt at its root (kind, entries per compression);
#   - the asset's own bytes that an asset directory of an archive holds under its own name
#     (model/sky.psg/sky.psg): a loose asset has its file beside it instead, so these are
#     compared with the loose file;
#   - in a material.txt, a texture found outside the companion is named by its path from the
#     mount's root ("texture 0x… in model/sky_Textures.psg"), which in a folder mount starts
#     with the archive's name: compared with that name taken out.
# Every other file, each asset's info.txt and errors.txt included, must be byte-identical.
. "$(dirname "$0")/lib.sh"
: "${DIR_MANIFEST:?}"

L=$WORK/loose
mkdir -p "$L/model" "$L/anim" "$L/solo"
"$PSGFS_GEN" sky "$L/model/sky.psg"
"$PSGFS_GEN" textures "$L/model/sky_Textures.psg"
"$PSGFS_GEN" sky --platform x360 "$L/model/sky.rx2"
"$PSGFS_GEN" skinned "$L/model/skin.psg"
"$PSGFS_GEN" skinned --platform x360 "$L/model/skin.rx2"
"$PSGFS_GEN" psk --bones 6 --materials 2 --morphs 1 --sockets 1 "$L/model/board.psk"
"$PSGFS_GEN" psk --big --points 2000 "$L/model/board_hd.pskx"
"$PSGFS_GEN" psa --bones 4 --sequences 2 --scale-keys "$L/solo/walk.psa"
# A flat PSA beside the PSK of its skeleton: its bone parents come from the PSK.
"$PSGFS_GEN" psk --bones 6 "$L/anim/m.psk"
"$PSGFS_GEN" psa --match-psk --bones 6 --flat-parents "$L/anim/m.psa"
printf 'hello\n' >"$L/notes.txt"

# EB v3 RefPack and BIG4 under sanitizers (the other kinds read through the same tree code).
kinds="eb:none eb:refpack eb:chunked bigf:refpack big4:refpack"
sanitized && kinds="eb:refpack big4:refpack"
# Each archive alone in its folder: with several, a texture GUID the models' companion lacks
# (the Xbox 360 sky has none) may be found in another archive (README "Links across archives").
A=$WORK/archives
for k in $kinds; do
	mkdir -p "$A/${k/:/_}"
	"$PSGFS_TOOL" pack --format "${k%:*}" --compress "${k#*:}" "$L" \
		"$A/${k/:/_}/${k/:/_}.big" >/dev/null
done

# manifest ROOT PREFIX OUT: ROOT's manifest, each material.txt's size and hash taken of its
# text with " in PREFIX" made " in " (PREFIX: the archive's folder in the mount, or empty).
manifest() {
	local root=$1 prefix=$2 out=$3 p size sha
	"$DIR_MANIFEST" "$root" | while IFS=$'\t' read -r p size sha; do
		if [[ $p == */material.txt ]]; then
			size=text
			sha=$(sed "s| in $prefix| in |g" "$root/$p" | sha256sum | cut -d" " -f1)
		fi
		printf '%s\t%s\t%s\n' "$p" "$size" "$sha"
	done >"$out"
}

ml=$WORK/ml
mount_psgfs "$L" "$ml"
manifest "$ml" "" "$WORK/loose.m"
check "the loose tree reads whole" test "$(grep -c $'\tEIO$' "$WORK/loose.m")" = 0
unmount_psgfs "$ml"

# The asset directories of the loose tree (their own bytes are the loose file's).
assets=$(awk -F'\t' '$2 == "-" && $1 ~ /\/$/ { p = substr($1, 1, length($1) - 1)
	if (p ~ /\.(psg|rx2|psk|pskx|psa)$/) print p }' "$WORK/loose.m")
check "every generated asset is an asset directory loose" test "$(echo "$assets" | wc -l)" = 10

# The PSA beside a PSK: inside an archive its bone parents do not come from the PSK yet
# (issue 28 item 1, the container interface: folder_siblings has no archive arm; w-container
# fixes it). Compared on its own; expected to differ until that lands: set to 0 then.
PSA_BESIDE_PSK_DIFFERS=1
SIB=anim/m.psa/

# compare NAME MANIFEST: the archive's tree (MANIFEST, paths relative to its root) against
# the loose one, minus the exceptions above.
compare() {
	local name=$1 m=$2 own=$WORK/own.$RANDOM rest=$WORK/rest.$RANDOM sib
	awk -F'\t' -v list="$assets" 'BEGIN { n = split(list, a, "\n"); for (i = 1; i <= n; i++) {
			k = a[i]; sub(/.*\//, "", k); own[a[i] "/" k] = 1 } }
		$1 == "info.txt" || $1 == "errors.txt" { next }
		($1 in own) { print > "/dev/stderr"; next } { print }' "$m" 2>"$own" >"$rest"
	check "$name: every file but the exceptions has the loose tree's name, size and bytes" \
		diff <(grep -v "^$SIB" "$WORK/loose.m") <(grep -v "^$SIB" "$rest")
	check "$name: each asset directory holds its own bytes, the loose file's" bash -c '
		[ "$(wc -l <"$1")" = 10 ] || exit 1
		while IFS=$'"'\t'"' read -r p size sha; do
			f=$2/${p%/*}
			[ "$size" = "$(stat -c %s "$f")" ] &&
				[ "$sha" = "$(sha256sum <"$f" | cut -d" " -f1)" ] || exit 1
		done <"$1"' _ "$own" "$L"
	sib=same
	diff -q <(grep "^$SIB" "$WORK/loose.m") <(grep "^$SIB" "$rest") >/dev/null || sib=differs
	if [ "$PSA_BESIDE_PSK_DIFFERS" = 1 ]; then
		check "$name: the PSA beside its PSK differs (expected until issue 28 item 1 lands)" \
			test "$sib" = differs
	else
		check "$name: the PSA beside its PSK shows the loose tree" test "$sib" = same
	fi
}

for k in $kinds; do
	b=${k/:/_}.big ma=$WORK/ma.${k/:/_}
	mount_psgfs "$A/${k/:/_}" "$ma"
	manifest "$ma" "$b/" "$WORK/$b.all"
	unmount_psgfs "$ma"
	awk -F'\t' -v p="$b/" 'index($1, p) == 1 { $1 = substr($1, length(p) + 1); if ($1 != "")
		print }' OFS='\t' "$WORK/$b.all" >"$WORK/$b.m"
	compare "$b in a folder mount" "$WORK/$b.m"
done

# One archive as the mount's root (the single-archive mount path).
m1=$WORK/m1
mount_psgfs "$A/eb_refpack/eb_refpack.big" "$m1"
manifest "$m1" "" "$WORK/single.m"
unmount_psgfs "$m1"
compare "eb_refpack.big mounted alone" "$WORK/single.m"
finish
