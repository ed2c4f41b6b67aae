#!/usr/bin/env bash
# psgfs-tool pack under attack (issue 30, the pack part): overlays with names that escape the
# root or links out of it, kill -9 mid-pack, a full disk mid-pack (a small tmpfs), sources and
# originals changing while packed, hostile --like originals. Every attack must end with OUT
# untouched (or complete), no temporary file left for good, and one line naming the culprit.
# The last line counts the attacks run and held (the lead's closing note).
. "$(dirname "$0")/lib.sh"

T=$PSGFS_TOOL
attacks=0
held=0
# attack NAME CMD...: one attack; it held when CMD succeeds
attack() {
	local name=$1
	shift
	attacks=$((attacks + 1))
	if "$@"; then
		held=$((held + 1))
		ok "attack: $name"
	else
		not_ok "attack: $name"
	fi
}
unpack() { "$T" extract "$1" "$2" >/dev/null && rm -f "$2/info.txt" "$2/errors.txt"; }
temps_in() { find "$1" -maxdepth 1 -name '.*.big.psgfs-pack-??????' | grep -q .; }
printf 'keep me' > "$WORK/keep.ref"
# refused CODE WHAT [pack args...]: pack over a copy of keep.ref exits CODE with one line naming
# WHAT, OUT untouched, no temporary file left
# (PSGFS_*=VALUE arguments go to the environment)
refused() {
	local code=$1 what=$2 rc=0 a envs=() args=()
	shift 2
	for a in "$@"; do
		case $a in PSGFS_*) envs+=("$a") ;; *) args+=("$a") ;; esac
	done
	cp "$WORK/keep.ref" "$WORK/keep.big"
	env "${envs[@]}" "$T" pack "${args[@]}" "$WORK/keep.big" >/dev/null 2>"$WORK/err" || rc=$?
	[ "$rc" = "$code" ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -qF -- "$what" "$WORK/err" &&
		cmp -s "$WORK/keep.big" "$WORK/keep.ref" && ! temps_in "$WORK" ||
		{ echo "# got $rc: $(cat "$WORK/err")" >&2; return 1; }
}

"$PSGFS_GEN" big --seed 3 "$WORK/orig.big"
unpack "$WORK/orig.big" "$WORK/src"
cat_path=data/content/createacharacter/catalog.xml

# ---- overlays whose names escape the root, or whose links lead out of it ----
ov() { rm -rf "$WORK/ov" && mkdir -p "$WORK/ov/data/content/createacharacter"; }
ov && ln -s /etc "$WORK/ov/data/etc"
attack "overlay: a link to a folder outside" refused 8 "data/etc" --overlay "$WORK/ov" "$WORK/src"
ov && ln -s /etc/passwd "$WORK/ov/$cat_path"
attack "overlay: a link over an entry" refused 8 "catalog.xml" --like "$WORK/orig.big" --overlay "$WORK/ov"
ov && ln -s ../../../../../../etc/passwd "$WORK/ov/data/up"
attack "overlay: a relative link up and out" refused 8 "data/up" --overlay "$WORK/ov" "$WORK/src"
ov && ln -s "$WORK/src" "$WORK/ov/data/loop"
attack "overlay: a link to a folder inside" refused 8 "data/loop" --overlay "$WORK/ov" "$WORK/src"
ov && echo x >"$WORK/ov/data/$(printf 'a\001b')"
attack "overlay: a control byte" refused 6 'data/a\x01b' --overlay "$WORK/ov" "$WORK/src"
ov && echo x >"$WORK/ov/data/$(printf 'new\nline')"
attack "overlay: a newline" refused 6 'data/new\x0aline' --overlay "$WORK/ov" "$WORK/src"
ov && echo x >"$WORK/ov/data/..\\..\\evil"
attack "overlay: backslashes (a path to Windows tools)" refused 6 'data/..\x5c..\x5cevil' \
	--overlay "$WORK/ov" "$WORK/src"
ov && mkfifo "$WORK/ov/data/fifo"
attack "overlay: a FIFO" refused 8 "data/fifo" --overlay "$WORK/ov" "$WORK/src"
ov && echo x >"$WORK/ov/added.txt"
attack "overlay under --like: a path ORIG lacks" refused 13 "added.txt" --like "$WORK/orig.big" \
	--overlay "$WORK/ov"
# an original whose own names escape the root is not reproduced (exit 6, the name shown)
"$PSGFS_GEN" big --variant names "$WORK/names.big"
attack "--like an original with '..' names" refused 6 ".." --like "$WORK/names.big"
ov
attack "--like an original with '..' names, with an overlay" refused 6 ".." --like "$WORK/names.big" \
	--overlay "$WORK/ov"

# ---- hostile originals (psgfs-gen big --variant): refused with exit 13 (6 for names), or,
# when psgfs reads them clean, reproduced byte for byte ----
for v in overlap past-eof lying folder-index million nested backref chunks truncated; do
	"$PSGFS_GEN" big --variant "$v" "$WORK/h-$v.big" 2>/dev/null || continue
	rc=0
	cp "$WORK/keep.ref" "$WORK/keep.big"
	"$T" pack --like "$WORK/h-$v.big" "$WORK/keep.big" >/dev/null 2>"$WORK/err" || rc=$?
	case $rc in
	0) attack "--like hostile $v: reproduced byte for byte" cmp -s "$WORK/h-$v.big" "$WORK/keep.big" ;;
	*) attack "--like hostile $v: refused, exit 13 (got $rc), one line naming it, OUT untouched" \
		eval '[ "$rc" = 13 ] && [ "$(wc -l <"$WORK/err")" = 1 ] &&
			grep -qF "h-$v.big" "$WORK/err" && cmp -s "$WORK/keep.big" "$WORK/keep.ref" &&
			! temps_in "$WORK"' ;;
	esac
done
# mutants of an original: 60 with 1-4 bytes of the header and tables set at random, 20 cut
# short; each is refused (one line), or packs into an archive whose entries read as the
# mutant's (tests/fuzz/fuzz_pack.c does the same at scale). Many runs of one code path: dealt
# between the builds (tests/README.md), the plain build 3 in 4 of each kind, the ASan build the
# 4th.
mine() { [ $(($1 % 4 == 0)) = "$(sanitized && echo 1 || echo 0)" ]; }
mkdir -p "$WORK/mut"
tables=$(od -An -tu4 --endian=big -j 12 -N 4 "$WORK/orig.big" | tr -d ' ')
size=$(stat -c %s "$WORK/orig.big")
for i in $(seq 60); do
	mine "$i" || continue
	cp "$WORK/orig.big" "$WORK/mut/m$i.big"
	for _ in $(seq $((RANDOM % 4 + 1))); do
		printf "\\x$(printf %02x $((RANDOM % 256)))" | dd of="$WORK/mut/m$i.big" bs=1 \
			seek=$((RANDOM * 32768 % (tables + 64) + RANDOM % 32768 % (tables + 64))) \
			conv=notrunc status=none
	done
done
for i in $(seq 20); do
	mine "$i" || continue
	head -c $((size * i / 21)) "$WORK/orig.big" >"$WORK/mut/t$i.big"
done
n_mut=0
bad_mut=0
for m in "$WORK"/mut/*.big; do
	n_mut=$((n_mut + 1))
	rc=0
	"$T" pack --like "$m" "$WORK/m.big" >/dev/null 2>"$WORK/err" || rc=$?
	case $rc in
	0) [ "$("$T" manifest --assets files "$m" | grep -v -e '^info\.txt' -e '^errors\.txt' | sha256sum)" = \
		"$("$T" manifest --assets files "$WORK/m.big" | grep -v -e '^info\.txt' -e '^errors\.txt' | sha256sum)" ] ||
		{ bad_mut=$((bad_mut + 1)); echo "# mutant $m packed differently" >&2; } ;;
	6 | 13) [ "$(wc -l <"$WORK/err")" = 1 ] || { bad_mut=$((bad_mut + 1)); echo "# mutant $m: $(cat "$WORK/err")" >&2; } ;;
	*) bad_mut=$((bad_mut + 1)); echo "# mutant $m: exit $rc $(cat "$WORK/err")" >&2 ;;
	esac
done
attack "--like $n_mut mutants of an original: refused (6, 13) or read as the mutant" [ "$bad_mut" = 0 ]
attack "mutants: no temporary file left" eval '! temps_in "$WORK"'

# ---- a source or the original changing while packed (test hook: a byte appended after the
# file is read) ----
attack "DIR's file changes under --like" refused 9 "$cat_path" --like "$WORK/orig.big" "$WORK/src" \
	PSGFS_PACK_TEST_CHANGE="$cat_path"
cp "$WORK/orig.big" "$WORK/orig2.big"
rc=0
cp "$WORK/keep.ref" "$WORK/keep.big"
PSGFS_PACK_TEST_CHANGE="$WORK/orig2.big" "$T" pack --like "$WORK/orig2.big" "$WORK/keep.big" \
	>/dev/null 2>"$WORK/err" || rc=$?
attack "the original changes while packed: exit 9 (got $rc), OUT untouched" eval '[ "$rc" = 9 ] &&
	grep -qF orig2.big "$WORK/err" && cmp -s "$WORK/keep.big" "$WORK/keep.ref"'
ov && echo "new" >"$WORK/ov/$cat_path"
attack "the overlay's file changes while packed" refused 9 "$cat_path" --like "$WORK/orig.big" \
	--overlay "$WORK/ov" PSGFS_PACK_TEST_CHANGE="$cat_path"
# a real writer racing the pack: the pack fails with exit 9 or the archive holds one whole
# version of the file (old or new), never a mix
mkdir -p "$WORK/race"
head -c 30000000 /dev/urandom >"$WORK/race/big.bin"
cp "$WORK/race/big.bin" "$WORK/race.v1"
(for _ in $(seq 40); do
	head -c 1000 /dev/urandom | dd of="$WORK/race/big.bin" bs=1000 seek=$((RANDOM % 3000)) \
		conv=notrunc status=none
	sleep 0.02
done) &
writer=$!
rc=0
"$T" pack --compress none "$WORK/race" "$WORK/race.big" >/dev/null 2>"$WORK/err" || rc=$?
wait "$writer"
case $rc in
0) "$T" cat "$WORK/race.big" big.bin >"$WORK/race.out"
	attack "a writer racing the pack: packed, one whole version" eval 'cmp -s "$WORK/race.out" "$WORK/race.v1" ||
		cmp -s "$WORK/race.out" "$WORK/race/big.bin"' ;;
*) attack "a writer racing the pack: exit 9 (got $rc)" [ "$rc" = 9 ] ;;
esac

# ---- kill -9 mid-pack: OUT untouched; the temporary file is removed by the next pack ----
mkdir -p "$WORK/kin"
for i in 1 2 3 4; do head -c 20000000 /dev/urandom >"$WORK/kin/f$i.bin"; done
for delay in 0.05 0.2 0.5 1.0 1.5; do
	cp "$WORK/keep.ref" "$WORK/kout.big"
	"$T" pack "$WORK/kin" "$WORK/kout.big" >/dev/null 2>&1 &
	p=$!
	sleep "$delay"
	kill -9 "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
	attack "kill -9 after ${delay}s: OUT untouched or complete" eval 'cmp -s "$WORK/kout.big" "$WORK/keep.ref" ||
		"$T" manifest "$WORK/kout.big" >/dev/null'
done
left=$(find "$WORK" -maxdepth 1 -name '.kout.big.psgfs-pack-??????' | wc -l)
echo "# kill -9: $left temporaries left by the killed packs"
# left temporaries are harmless (hidden, beside OUT) and go with the next pack once no pack
# holds them (their lock) and they are a few seconds old; a user's file of a like name is kept
printf 'mine' >"$WORK/.kout.big.backup"
touch -d '1 minute ago' "$WORK/.kout.big.backup"
touch -d '1 minute ago' "$WORK"/.kout.big.psgfs-pack-?????? 2>/dev/null || true
"$T" pack "$WORK/src" "$WORK/kout.big" >/dev/null
attack "kill -9: the next pack removes the temporaries left" eval '! find "$WORK" -maxdepth 1 -name ".kout.big.psgfs-pack-??????" | grep -q .'
attack "kill -9: a user's .kout.big.backup is kept" [ "$(cat "$WORK/.kout.big.backup")" = mine ]
# a running pack's temporary is never removed by another pack
"$T" pack --compress none "$WORK/kin" "$WORK/kout.big" >/dev/null 2>&1 &
p1=$!
sleep 0.3
touch -d '1 minute ago' "$WORK"/.kout.big.psgfs-pack-?????? 2>/dev/null || true
rc1=0
rc2=0
"$T" pack "$WORK/src" "$WORK/kout.big" >/dev/null 2>&1 || rc2=$?
wait "$p1" || rc1=$?
attack "two packs of one OUT: neither removes the other's temporary" [ "$rc1$rc2" = 00 ]

# ---- disk full mid-pack: a 2 MiB tmpfs ----
mkdir -p "$WORK/tiny"
if mount -t tmpfs -o size=2m tmpfs "$WORK/tiny" 2>/dev/null; then
	MOUNTS+=("$WORK/tiny")
	cp "$WORK/keep.ref" "$WORK/tiny/keep.big"
	used=$(df --output=used "$WORK/tiny" | tail -n 1)
	for args in "--compress none $WORK/kin" "--like $WORK/orig.big --overlay $WORK/kin2"; do
		mkdir -p "$WORK/kin2/data/content/createacharacter"
		head -c 3000000 /dev/urandom >"$WORK/kin2/$cat_path"
		rc=0
		# shellcheck disable=SC2086
		"$T" pack $args "$WORK/tiny/keep.big" >/dev/null 2>"$WORK/err" || rc=$?
		attack "disk full ($args): exit 10 (got $rc), one line naming OUT" eval '[ "$rc" = 10 ] &&
			[ "$(wc -l <"$WORK/err")" = 1 ] && grep -qF keep.big "$WORK/err"'
		attack "disk full ($args): OUT untouched, no temporary left" eval 'cmp -s "$WORK/tiny/keep.big" "$WORK/keep.ref" &&
			! temps_in "$WORK/tiny"'
		attack "disk full ($args): the space is given back" [ "$(df --output=used "$WORK/tiny" | tail -n 1)" = "$used" ]
	done
	umount "$WORK/tiny"
	MOUNTS=("${MOUNTS[@]/"$WORK/tiny"/}")
else
	echo "# no tmpfs (not root?): disk-full attacks skipped"
fi

echo "# pack attacks: $attacks run, $held held"
finish
