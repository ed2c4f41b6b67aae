#!/usr/bin/env bash
# A PSA mounted for real; per-sequence PSAs read back through psgfs itself and, when
# darkplaces-server is installed, load in DarkPlaces with a PSK of the same skeleton.
. "$(dirname "$0")/lib.sh"

psa=$WORK/anim.psa
"$PSGFS_GEN" psa --seed 21 --bones 6 --sequences 3 --frames 9 --scale-keys "$psa"
m=$WORK/m
mount_psgfs "$psa" "$m"

check "root lists chunks errors.txt export info.txt sequences skeleton" \
	test "$(ls "$m" | tr '\n' ' ')" = "chunks errors.txt export info.txt sequences skeleton "
check "three sequence directories" test "$(ls "$m/sequences" | wc -l)" -eq 3
check "info.txt: 6 bones, 3 sequences, no problems" \
	bash -c "grep -q '^bones: 6$' '$m/info.txt' && grep -q '^sequences: 3$' '$m/info.txt' && grep -q '^problems: 0$' '$m/info.txt'"
seq0=$(ls "$m/sequences" | sed -n 1p)
check "sequence dir has info.txt keys.tsv scale_keys.tsv and its .psa and .glb" \
	test "$(ls "$m/sequences/$seq0" | tr '\n' ' ')" = "$seq0.glb $seq0.psa info.txt keys.tsv scale_keys.tsv "
frames=$(sed -n 's/^num_raw_frames: //p' "$m/sequences/$seq0/info.txt")
check "keys.tsv has frames x bones rows + header" \
	test "$(wc -l < "$m/sequences/$seq0/keys.tsv")" -eq $((frames * 6 + 1))
check "keys.tsv columns" bash -c "head -1 '$m/sequences/$seq0/keys.tsv' | grep -q '^frame	bone	name	px	py	pz	qx	qy	qz	qw'"
check "st_size exact everywhere" all_read_whole "$m"

# Each exported sequence is a standalone PSA that psgfs itself mounts with the same keys.
all_same=1
for d in "$m"/sequences/*/; do
	name=$(basename "$d")
	one=$WORK/$name.psa
	cp "$d/$name.psa" "$one"
	r=$WORK/r.$name
	mount_psgfs "$one" "$r"
	[ "$(ls "$r/sequences" | wc -l)" -eq 1 ] || all_same=0
	rs=$(ls "$r/sequences")
	grep -q '^first_raw_frame: 0$' "$r/sequences/$rs/info.txt" || all_same=0
	cmp -s "$d/keys.tsv" "$r/sequences/$rs/keys.tsv" || all_same=0
	cmp -s "$d/scale_keys.tsv" "$r/sequences/$rs/scale_keys.tsv" || all_same=0
	cmp -s "$m/skeleton/bones.tsv" "$r/skeleton/bones.tsv" || all_same=0
	unmount_psgfs "$r"
done
check "per-sequence PSAs remount with identical keys, scale keys and bones" test "$all_same" = 1

# The real PSA of the corpus, when ../shared is present.
corpus=${PSGFS_SHARED:-}/corpus/psk
if [ -d "$corpus" ]; then
	c=$WORK/c
	mount_psgfs "$corpus/psk_psa_py/psa/grunt_hh_grabplayer_crouch_SEQ0.psa" "$c"
	check "corpus PSA: 89 bones, 1 sequence, 8989 keys and scale keys" \
		bash -c "grep -q '^bones: 89$' '$c/info.txt' && grep -q '^keys: 8989$' '$c/info.txt' && grep -q '^scale_keys: 8989$' '$c/info.txt'"
	check "corpus PSA: keys.tsv has 101 x 89 rows" \
		test "$(wc -l < "$c/sequences/$(ls "$c/sequences")/keys.tsv")" -eq $((101 * 89 + 1))
	p=$WORK/p
	mount_psgfs "$corpus/pyffi/pendulum.psa" "$p"
	check "pendulum.psa: sequence Swinging, 20 frames" \
		bash -c "ls '$p/sequences' | grep -q '^00.Swinging$' && grep -q '^num_raw_frames: 20$' '$p/sequences/00.Swinging/info.txt'"
else
	echo "# skip corpus PSAs: $corpus not present"
fi

# DarkPlaces (a strict third-party reader) loads a PSK with an exported sequence PSA.
if [ -x /usr/games/darkplaces-server ]; then
	pk=$WORK/dp.psk
	pa=$WORK/dp.psa
	"$PSGFS_GEN" psk --seed 31 --bones 5 --points 30 "$pk"
	"$PSGFS_GEN" psa --seed 31 --bones 5 --sequences 2 --frames 6 --match-psk "$pa"
	d=$WORK/dp
	mount_psgfs "$pa" "$d"
	s=$(ls "$d/sequences" | tail -1)
	base=$WORK/dpbase
	mkdir -p "$base/id1/models"
	cp "$pk" "$base/id1/models/m.psk"
	cp "$d/sequences/$s/$s.psa" "$base/id1/models/m.psa"
	timeout 60 /usr/games/darkplaces-server -basedir "$base" -nohome +modeldecompile models/m.psk +quit \
		> "$WORK/dp.log" 2>&1 || true
	check "DarkPlaces loads the PSK with the exported sequence PSA" \
		grep -q "Wrote models/m_decompiled.obj" "$WORK/dp.log"
	nf=$(sed -n 's/^num_raw_frames: //p' "$d/sequences/$s/info.txt")
	check "DarkPlaces decompiled every frame of the sequence ($nf)" \
		test "$(grep -c 'Wrote models/m_decompiled/seq_[0-9]*_[0-9]*\.smd' "$WORK/dp.log")" -eq "$nf"
else
	echo "# skip DarkPlaces: darkplaces-server not installed"
fi

# PSA files that store parent 0 for every bone (as many exporters write): said in info.txt
# and errors.txt; -o hierarchy=FILE gives parents; in a folder mount a PSK beside it whose
# bone names match gives the matched bones theirs.
fl=$WORK/flat
mkdir -p "$fl"
"$PSGFS_GEN" psa --seed 5 --bones 9 --sequences 2 --match-psk --flat-parents "$fl/walk.psa"
"$PSGFS_GEN" psk --seed 5 --bones 9 "$fl/body.psk"
mf=$WORK/mflat
mount_psgfs "$fl/walk.psa" "$mf"
check "flat PSA: info.txt says every bone hangs from bone 0 and where parents can come from" \
	grep -qx "hierarchy: every bone hangs from bone 0 (the file stores parent 0 for all 9 bones; parents can come from -o hierarchy=FILE or, in a folder mount, a PSK beside it whose bone names match)" \
	"$mf/info.txt"
check "flat PSA: errors.txt says so too" grep -q "^skeleton: every one of the 9 bones hangs from bone 0" "$mf/errors.txt"
cp "$mf/export/walk.glb" "$WORK/flat.glb"
unmount_psgfs "$mf"
printf 'bone\tparent\nbone_2\tbone_1\nbone_3\tbone_2\nbone_4\tbone_3\n' > "$WORK/walk.tsv"
mount_psgfs "$fl/walk.psa" "$mf" -o hierarchy="$WORK/walk.tsv"
check "-o hierarchy on a PSA: applied (info.txt)" grep -qx \
	"hierarchy: from -o hierarchy: 3 of 9 bones (the file stores parent 0 for each)" "$mf/info.txt"
check "-o hierarchy on a PSA: bones.tsv parents" test \
	"$(cut -f3 "$mf/skeleton/bones.tsv" | tail -n +2 | tr '\n' ' ')" = "0 0 1 2 3 0 0 0 0 "
check "-o hierarchy on a PSA: no flat-skeleton line in errors.txt" bash -c "! grep -q 'hangs from bone 0' '$mf/errors.txt'"
check "-o hierarchy on a PSA: the .glb changes" bash -c "! cmp -s '$mf/export/walk.glb' '$WORK/flat.glb'"
unmount_psgfs "$mf"
mount_psgfs "$fl" "$mf"
check "folder: the PSK beside the flat PSA gives its parents" grep -qx \
	"hierarchy: from body.psk: 8 of 9 bones (the file stores parent 0 for each)" "$mf/walk.psa/info.txt"
check "folder: the PSA's parents are the PSK's" test \
	"$(cut -f3 "$mf/walk.psa/skeleton/bones.tsv" | tail -n +3)" = \
	"$(cut -f3 "$mf/body.psk/skeleton/bones.tsv" | tail -n +3)"
check "folder: the .glb hangs the bones as the PSK does" bash -c "! cmp -s '$mf/walk.psa/export/walk.glb' '$WORK/flat.glb'"
cp "$mf/walk.psa/info.txt" "$WORK/loose_info.txt"
cp "$mf/walk.psa/skeleton/bones.tsv" "$WORK/loose_bones.tsv"
unmount_psgfs "$mf"

# The same pair inside an EB archive: the archive's folder is a container like the mounted
# folder (struct container_ops), so the PSA finds its PSK there too and shows the same tree.
"$PSGFS_TOOL" pack --format eb "$fl" "$WORK/flat.big" >/dev/null
mount_psgfs "$WORK/flat.big" "$mf"
check "archive: the PSK beside the flat PSA gives its parents, as loose" \
	cmp -s "$WORK/loose_info.txt" "$mf/walk.psa/info.txt"
check "archive: the PSA's bones.tsv is the loose one's" \
	cmp -s "$WORK/loose_bones.tsv" "$mf/walk.psa/skeleton/bones.tsv"
unmount_psgfs "$mf"

finish
