#!/usr/bin/env bash
# psgfs-gen big|game|stream (docs/archives.md, docs/streams.md): every variant writes, the same
# seed gives the same bytes, manifests list every entry, the game folder has the game's layout,
# bad options are exit 2 with one line. The archives' contents are checked byte for byte by
# the unit test archive_gen; mounts of them by the archive integration tests.
. "$(dirname "$0")/lib.sh"

G=$PSGFS_GEN
magic() { head -c 4 "$1" | od -An -tx1 | tr -d ' \n'; }

for v in game stored refpack chunkref chunkzip chunklzx bigf big4 overlap past-eof lying names \
	folder-index million nested backref chunks truncated; do
	out=$WORK/$v.big
	if timeout 60 "$G" big --variant "$v" --seed 3 "$out" && [ -s "$out" ]; then
		case $v in
		bigf) want=42494746 ;; big4) want=42494734 ;; *) want=45420003 ;;
		esac
		check "big --variant $v: magic $want" [ "$(magic "$out")" = "$want" ]
	else
		not_ok "big --variant $v writes"
	fi
done

"$G" big --seed 7 --wide --shift 11 --platform x360 --manifest "$WORK/m1" "$WORK/a1.big"
"$G" big --seed 7 --wide --shift 11 --platform x360 --manifest "$WORK/m2" "$WORK/a2.big"
check "big: same seed, same bytes" cmp -s "$WORK/a1.big" "$WORK/a2.big"
check "big: same manifest" cmp -s "$WORK/m1" "$WORK/m2"
# 24 assets, 8 of them a model and its companion, a catalog and an empty file
check "big: 34 manifest rows" [ "$(($(wc -l < "$WORK/m1") - 1))" = 34 ]
check "big --wide: flag bit 0" [ $((0x$(od -An -tx1 -j9 -N1 "$WORK/a1.big" | tr -d ' ') & 1)) = 1 ]
check "big --shift 11" [ "$(od -An -tx1 -j10 -N1 "$WORK/a1.big" | tr -d ' ')" = 0b ]
check "big --platform x360: .rx2 entries" grep -q '\.rx2	' "$WORK/m1"
check "big --platform x360: chunklzx entries" grep -q '	chunklzx	' "$WORK/m1"
differ() { ! cmp -s "$1" "$2"; }
"$G" big --seed 8 --wide --shift 11 --platform x360 "$WORK/b.big"
check "big: another seed, other bytes" differ "$WORK/a1.big" "$WORK/b.big"

"$G" big --size 2M --entries 30 --chunked 1M --manifest "$WORK/bm" "$WORK/bench.big"
check "bench: 31 rows, one chunked" [ "$(grep -c '	chunkref	' "$WORK/bm")" = 1 ] &&
	[ "$(($(wc -l < "$WORK/bm") - 1))" = 31 ]

for f in 0 1 2 3; do
	"$G" stream --format "$f" --platform x360 --manifest "$WORK/sm$f" "$WORK/s$f.xsf"
	check "stream --format $f: SFIL and ATOC" [ "$(magic "$WORK/s$f.xsf")" = 5346494c ] &&
		[ "$(magic "$WORK/s$f.xst")" = 41544f43 ]
	check "stream --format $f: 6 assets" [ "$(grep -c '\.rx2	' "$WORK/sm$f")" = 6 ]
done
"$G" stream --toc "$WORK/t.pst" "$WORK/noext"
check "stream --toc" [ "$(magic "$WORK/t.pst")" = 41544f43 ]

"$G" game --seed 2 --manifest "$WORK/gm" "$WORK/g1"
"$G" game --seed 2 "$WORK/g2"
check "game: same seed, same folder" diff -r "$WORK/g1" "$WORK/g2"
for p in data/content/createacharacter.big data/content/world.big data/audio/music.big \
	data/readme.txt data/content/world/stream/DIST_Loose/cF2_Global.psf \
	data/content/world/stream/DIST_Loose/DIST_Loose_F2.pst; do
	check "game: $p" [ -s "$WORK/g1/$p" ]
done
check "game: CAS texture paths" grep -q '^data/content/createacharacter.big	data/content/createacharacter/texture/0x[0-9a-f]\{32\}\.psg	' "$WORK/gm"
check "game: district streams in world.big" grep -q '^data/content/world.big	data/content/world/stream/DIST_MegaPark/cGfx_Global.psf	' "$WORK/gm"
check "game: DIST textures" grep -q '	data/content/world/models/DIST_MegaPark_Textures.psg	' "$WORK/gm"

"$G" game --seed 2 --platform x360 --manifest "$WORK/gx" "$WORK/gx360"
check "game x360: .xsf/.xst stream files" [ -s "$WORK/gx360/data/content/world/stream/DIST_Loose/cF3_Global.xsf" ] &&
	[ -s "$WORK/gx360/data/content/world/stream/DIST_Loose/DIST_Loose_F3.xst" ]
check "game x360: .rx2 entries, chunklzx among them" grep -q '\.rx2	chunklzx	' "$WORK/gx"

# usage: exit 2, one line on stderr, nothing written
usage() {
	local st=0
	shift 0
	"$G" "$@" > "$WORK/out" 2> "$WORK/err" || st=$?
	[ "$st" = 2 ] && [ "$(wc -l < "$WORK/err")" = 1 ] && [ ! -s "$WORK/out" ]
}
check "usage: unknown variant" usage big --variant nope "$WORK/x.big"
check "usage: shift out of range" usage big --shift 17 "$WORK/x.big"
check "usage: bad refpack header" usage big --refpack-header 12 "$WORK/x.big"
check "usage: bad refpack header (not hex)" usage big --refpack-header 1x "$WORK/x.big"
check "usage: bad chunk style" usage big --chunk-style x "$WORK/x.big"
check "usage: stream format 4" usage stream --format 4 "$WORK/x.psf"
check "usage: stream hostile name" usage stream --hostile nope "$WORK/x.psf"
check "usage: --size with another variant" usage big --variant stored --size 1M "$WORK/x.big"
check "usage: nothing written" [ ! -e "$WORK/x.big" ] && [ ! -e "$WORK/x.psf" ]
st=0
"$G" game "$WORK/g1" 2> "$WORK/err" || st=$?
check "game: an existing folder is refused (exit 1)" [ "$st" = 1 ]

finish
