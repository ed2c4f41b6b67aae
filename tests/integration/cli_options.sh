#!/usr/bin/env bash
# Option values of psgfs-tool and psgfs-gen: sizes have psgfs's syntax, minimum and reasons;
# the hierarchy file is checked as psgfs checks it; every bad value exits 2 with one line that
# names the option, the value and what is allowed.
. "$(dirname "$0")/lib.sh"

# run CODE WORD PROGRAM ARGS...: exits CODE, nothing on stdout, one stderr line with WORD.
run() {
	local code=$1 word=$2 st=0 lines
	shift 2
	timeout 20 "$@" > "$WORK/out" 2> "$WORK/err" || st=$?
	lines=$(wc -l < "$WORK/err")
	echo "# $(basename "$1") ${*:2} -> $st: $(head -1 "$WORK/err")"
	[ "$st" = "$code" ] && [ "$lines" = 1 ] && [ ! -s "$WORK/out" ] &&
		grep -qF -- "$word" "$WORK/err"
}

arena=$WORK/a3M.psg
"$PSGFS_GEN" sized --size 3M --seed 2 "$arena"
# The budget alone is checked on the smallest arena: one walk of the 3M one (under a 1M cache,
# which it overflows) is enough, each costs 2 to 3 CPU-seconds under ASan.
small=$WORK/a64K.psg
"$PSGFS_GEN" sized --size 64K --seed 2 "$small"

# ---- psgfs-tool --cache-size: the budget it reports is the one given ----
walk_budget() { # SIZE BUDGET ARENA: walk ARENA with --cache-size SIZE succeeds, reports BUDGET
	timeout 120 "$PSGFS_TOOL" --cache-size "$1" walk "$3" > "$WORK/walk" &&
		grep -qx 'failed 0' "$WORK/walk" && grep -qx "cache_budget $2" "$WORK/walk"
}
check "tool: --cache-size 64M is 64 MiB" walk_budget 64M 67108864 "$small"
check "tool: --cache-size 1M is 1 MiB" walk_budget 1M 1048576 "$arena"
check "   ... and a 3M arena evicts from it" \
	bash -c "awk '\$1 == \"cache_evictions\" { exit !(\$2 > 0) }' '$WORK/walk'"
check "tool: --cache-size=2m (lower case, = form)" walk_budget 2m 2097152 "$small"
check "tool: no --cache-size is the 64M default" bash -c \
	"'$PSGFS_TOOL' walk '$small' | grep -qx 'cache_budget 67108864'"

mkdir -p "$WORK/mp"
MOUNTS+=("$WORK/mp")
# The tool refuses what psgfs refuses, for the same reason in the same words.
same_reason() { # VALUE
	local st=0 tool daemon
	timeout 20 "$PSGFS" "$arena" "$WORK/mp" -o "cache_size=$1" 2> "$WORK/derr" || st=$?
	if mountpoint -q "$WORK/mp"; then
		fusermount3 -u "$WORK/mp"
		echo "# ... and psgfs mounted"
		return 1
	fi
	[ "$st" = 2 ] || return 1
	daemon=$(sed "s/^psgfs: bad cache_size '.*': //" "$WORK/derr")
	tool=$(sed "s/^psgfs-tool: bad --cache-size '.*': //" "$WORK/err")
	echo "# reason: $tool"
	[ -n "$tool" ] && [ "$tool" = "$daemon" ]
}
for v in 100 1048575 -1 -5M +64M ' 64M' 64Q 0x10 17179869184G ''; do
	check "tool: --cache-size '$v' refused" run 2 "bad --cache-size '$v': " "$PSGFS_TOOL" --cache-size "$v" walk "$arena"
	check "   ... with psgfs's reason" same_reason "$v"
done
check "no mount left by the daemon runs" bash -c "! grep -qF ' $WORK/' /proc/mounts"

# ---- psgfs-tool --hierarchy: read before opening FILE, only a regular file ----
sk=$WORK/sk.psg
"$PSGFS_GEN" skinned --seed 9 --bones 14 --hierarchy-out "$WORK/hier.tsv" "$sk"
mkfifo "$WORK/fifo"
truncate -s $((16 * 1024 * 1024 + 1)) "$WORK/huge.tsv"
check "tool: hierarchy FIFO refused at once" run 2 "hierarchy file $WORK/fifo: not a regular file (a FIFO)" "$PSGFS_TOOL" --hierarchy "$WORK/fifo" walk "$sk"
check "tool: hierarchy directory" run 2 "hierarchy file $WORK: not a regular file (a directory)" "$PSGFS_TOOL" --hierarchy "$WORK" walk "$sk"
check "tool: hierarchy /dev/zero" run 2 "hierarchy file /dev/zero: not a regular file (a character device)" "$PSGFS_TOOL" --hierarchy /dev/zero walk "$sk"
check "tool: hierarchy above 16M" run 2 "hierarchy file $WORK/huge.tsv: larger than 16777216 bytes" "$PSGFS_TOOL" --hierarchy "$WORK/huge.tsv" walk "$sk"
check "tool: hierarchy missing" run 2 "hierarchy file $WORK/nope.tsv: cannot open: No such file" "$PSGFS_TOOL" --hierarchy "$WORK/nope.tsv" walk "$sk"
check "tool: a good hierarchy is used" bash -c \
	"'$PSGFS_TOOL' --hierarchy '$WORK/hier.tsv' cat '$sk' info.txt | grep -q 'hierarchy: from the hierarchy file'"

# ---- psgfs-gen: each bad value names the option, the value and the range ----
out=$WORK/gen.out
check "gen: skinned --bones 2" run 2 "bad --bones '2': skinned allows 3 to 4096" "$PSGFS_GEN" skinned --bones 2 "$out"
check "gen: skinned --bones 0 (not silently the default)" run 2 "bad --bones '0': skinned allows 3 to 4096" "$PSGFS_GEN" skinned --bones 0 "$out"
check "gen: skinned --bones 4294967299 (not 3 after truncation)" run 2 "bad --bones '4294967299': skinned allows 3 to 4096" "$PSGFS_GEN" skinned --bones 4294967299 "$out"
check "gen: skinned --tris 0" run 2 "bad --tris '0': skinned allows 1 to 1048576" "$PSGFS_GEN" skinned --tris 0 "$out"
check "gen: skinned --islands 65" run 2 "bad --islands '65': skinned allows 1 to 64" "$PSGFS_GEN" skinned --islands 65 "$out"
check "gen: skinned --meshes 257" run 2 "bad --meshes '257': skinned allows 1 to 256" "$PSGFS_GEN" skinned --meshes 257 "$out"
check "gen: psk --materials 257" run 2 "bad --materials '257': psk allows 1 to 256" "$PSGFS_GEN" psk --materials 257 "$out"
check "gen: psk --uv-sets 9" run 2 "bad --uv-sets '9': psk allows 0 to 8" "$PSGFS_GEN" psk --uv-sets 9 "$out"
check "gen: psa --bones 0" run 2 "bad --bones '0': psa allows 1 to 65536" "$PSGFS_GEN" psa --bones 0 "$out"
check "gen: psa with too many keys" run 2 "psa: more than 16777216 keys" "$PSGFS_GEN" psa --bones 65536 --sequences 300 --frames 10 "$out"
check "gen: sized --size 10K" run 2 "bad --size '10K': sized allows 65536 to" "$PSGFS_GEN" sized --size 10K "$out"
check "gen: --bones -3" run 2 "bad --bones '-3': not a number" "$PSGFS_GEN" skinned --bones -3 "$out"
check "gen: --seed past 64 bits" run 2 "bad --seed '99999999999999999999': too large" "$PSGFS_GEN" psk --seed 99999999999999999999 "$out"
check "gen: an option another kind takes" run 2 "--bones does not apply to sky" "$PSGFS_GEN" sky --bones 4 "$out"
check "gen: unknown kind" run 2 "unknown kind 'foo'" "$PSGFS_GEN" foo --bones 4 "$out"
check "gen: nothing written by the refusals" test ! -e "$out"
check "gen: the smallest skinned arena" "$PSGFS_GEN" skinned --bones 3 --meshes 1 --verts 1 --islands 1 --tris 1 "$out"
check "gen: skinned --help is the general help" bash -c "'$PSGFS_GEN' skinned --help | grep -q '^usage: psgfs-gen'"
check "gen: the help says --tris is per island" bash -c "'$PSGFS_GEN' --help | grep -q -- '--tris N  *triangles per island'"
# --tris counts per island: 2 islands x 7 triangles in each of 2 meshes.
"$PSGFS_GEN" skinned --seed 4 --meshes 2 --islands 2 --tris 7 --truth "$WORK/truth.tsv" "$out"
check "gen: --tris 7 --islands 2 gives meshes of 14 triangles" \
	bash -c "[ \"\$(awk -F'\t' '\$1 == \"mesh\" { print \$6 }' '$WORK/truth.tsv' | sort -u)\" = 14 ]"
finish
