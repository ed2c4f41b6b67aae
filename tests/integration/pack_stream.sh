#!/usr/bin/env bash
# psgfs-tool pack-stream (docs/worlds.md "Writing a stream set"): a generated district
# (psgfs-gen district, PS3 and Xbox 360) extracted collection by collection and packed back is
# the same stream set byte for byte; the packed set mounts and reads clean; --like takes the
# stamps of another set; every refusal is one line naming the file, with its own exit code,
# leaves OUTDIR as it was and no temporary file behind.
. "$(dirname "$0")/lib.sh"

T=$PSGFS_TOOL
G=$PSGFS_GEN
# collections DIST COLL: each collection of DIST extracted into COLL/<name>/ (loose arenas)
collections() {
	local f b
	mkdir -p "$2"
	for f in "$1"/*.psf "$1"/*.xsf; do
		[ -e "$f" ] || continue
		b=$(basename "$f")
		"$T" extract "$f" "$2/${b%.*}" >/dev/null || return 1
	done
}
same_set() { # A B: the same file names, each byte for byte
	diff <(cd "$1" && ls) <(cd "$2" && ls) >/dev/null &&
		for f in "$1"/*; do cmp -s "$f" "$2/$(basename "$f")" || return 1; done
}
no_temp_left() { ! find "$1" -name '.*.*.*' | grep -q .; }

for pf in ps3 x360; do
	d=$WORK/gen-$pf/DIST_Rt
	mkdir -p "$WORK/gen-$pf" "$WORK/out-$pf"
	"$G" district --platform "$pf" --tiles 6 --models 20 --seed 3 "$d" >/dev/null
	collections "$d" "$WORK/coll-$pf"
	check "$pf: the extract holds the collections" [ -d "$WORK/coll-$pf/cPres_Global" ]
	if "$T" pack-stream "$WORK/coll-$pf" "$WORK/out-$pf/DIST_Rt" >"$WORK/out" 2>&1; then
		ok "$pf: pack-stream"
	else
		not_ok "$pf: pack-stream ($(cat "$WORK/out"))"
	fi
	check "$pf: one summary line counting the files" grep -q "^$WORK/out-$pf/DIST_Rt: $(ls "$d" | wc -l) files" "$WORK/out"
	check "$pf: the same stream set, byte for byte" same_set "$d" "$WORK/out-$pf/DIST_Rt"
	check "$pf: no temporary file left" no_temp_left "$WORK/out-$pf"
done
check "x360: the Tex stub is written" [ -s "$WORK/out-x360/DIST_Rt/DIST_Rt_Tex.xsm" ]
check "ps3: the Tex stream is written" [ -s "$WORK/out-ps3/DIST_Rt/cTex_Global.psf" ]

# the packed set mounts: every collection lists its assets, nothing in errors.txt, the
# textures of the models resolve across the Pres and Tex streams
m=$WORK/mnt
if mount_psgfs "$WORK/out-ps3/DIST_Rt" "$m"; then
	check "mount: a collection is a directory of its assets" \
		[ "$(ls "$m/cPres_Global.psf" | grep -c '\.psg$')" -ge 1 ]
	check "mount: every collection's errors.txt is empty" bash -c \
		"for f in '$m'/*.psf/errors.txt; do [ ! -s \"\$f\" ] || exit 1; done"
	check "mount: a model's diffuse texture resolves into the Tex stream" bash -c \
		"ls -l '$m'/cPres_Global.psf/*/materials/00.material/diffuse.png | grep -q cTex_Global.psf"
	check "mount: the resolved texture reads" bash -c \
		"[ \"\$(head -c 4 '$m'/cPres_Global.psf/0x*.psg/materials/00.material/diffuse.png | tail -c 3)\" = PNG ]"
	unmount_psgfs "$m"
fi

# --like: the stamps (and header words) of another set; the ids follow the new name
"$T" pack-stream --like "$WORK/gen-ps3/DIST_Rt" "$WORK/coll-ps3" "$WORK/out-ps3/DIST_Other" \
	>/dev/null
stamp() { od -An -tx1 -j8 -N8 "$1" | tr -d ' \n' | grep .; } # fails when there is none
check "--like: the stamp of the stub's kind" [ "$(stamp "$WORK/out-ps3/DIST_Other/DIST_Other_Pres.psm")" = \
	"$(stamp "$WORK/gen-ps3/DIST_Rt/DIST_Rt_Pres.psm")" ]
check "--like: the collections carry it too" [ "$(stamp "$WORK/out-ps3/DIST_Other/cPres_Global.psf")" = \
	"$(stamp "$WORK/gen-ps3/DIST_Rt/cPres_Global.psf")" ]
check "--like: the Global's id follows the district" bash -c "[ -s '$WORK/out-ps3/DIST_Other/DIST_Other_Pres.psm' ] &&
	! cmp -s '$WORK/out-ps3/DIST_Other/DIST_Other_Pres.psm' '$WORK/gen-ps3/DIST_Rt/DIST_Rt_Pres.psm'"
check "--like: the tiles' collections are the same bytes" cmp -s \
	"$WORK/out-ps3/DIST_Other/cPres_50_50_high.psf" "$WORK/gen-ps3/DIST_Rt/cPres_50_50_high.psf"
"$T" pack-stream --like "$WORK/gen-ps3/DIST_Rt/DIST_Rt_Sim.pss" "$WORK/coll-ps3" \
	"$WORK/out-ps3/DIST_One" >/dev/null
check "--like FILE: one file of a set gives its kind's stamp" [ \
	"$(stamp "$WORK/out-ps3/DIST_One/DIST_One_Sim.psm")" = \
	"$(stamp "$WORK/gen-ps3/DIST_Rt/DIST_Rt_Sim.psm")" ]

# ---- refusals ----
keep=$WORK/keep/DIST_K
mkdir -p "$keep"
printf 'keep me' >"$keep/DIST_K_Pres.psm"
cp "$keep/DIST_K_Pres.psm" "$WORK/keep.ref"
one_line_naming() { [ "$(wc -l <"$WORK/err")" = 1 ] && grep -qF -- "$1" "$WORK/err"; }
# refuse CODE WHAT DIR [VAR=VALUE|OPTION...]
refuse() {
	local code=$1 what=$2 dir=$3 rc=0
	shift 3
	local envs=() opts=() a
	for a in "$@"; do
		case $a in PSGFS_*) envs+=("$a") ;; *) opts+=("$a") ;; esac
	done
	timeout 60 env "${envs[@]}" "$T" pack-stream "${opts[@]}" "$dir" "$keep" >/dev/null 2>"$WORK/err" ||
		rc=$?
	check "refuse $what: exit $code (got $rc)" [ "$rc" = "$code" ]
	check "refuse $what: one line naming it" one_line_naming "$what"
	check "refuse $what: OUTDIR untouched" bash -c \
		"cmp -s '$keep/DIST_K_Pres.psm' '$WORK/keep.ref' && [ \$(ls -A '$keep' | wc -l) = 1 ]"
}
mk() { rm -rf "$WORK/r" && cp -r "$WORK/coll-ps3" "$WORK/r"; }
a=$(cd "$WORK/coll-ps3/cPres_Global" && ls *.psg | head -1)

mk && ln -s /etc/passwd "$WORK/r/cPres_Global/0x1.psg"
refuse 8 "cPres_Global/0x1.psg" "$WORK/r"
mk && ln -s "$WORK/coll-ps3/cTex_Global" "$WORK/r/cTex_Elsewhere"
refuse 8 "cTex_Elsewhere" "$WORK/r"
mk && mkdir "$WORK/r/cGfx_Global" && cp "$WORK/r/cPres_Global/$a" "$WORK/r/cGfx_Global/"
refuse 6 "cGfx_Global" "$WORK/r"
mk && touch "$WORK/r/cPres_Global/notes.txt"
refuse 6 "cPres_Global/notes.txt" "$WORK/r"
mk && mkdir "$WORK/r/cPres_Global/deeper" && touch "$WORK/r/cPres_Global/deeper/0x2.psg"
refuse 6 "cPres_Global/deeper/0x2.psg" "$WORK/r"
mk && printf 'not an arena' >"$WORK/r/cPres_Global/0x77.psg"
refuse 20 "cPres_Global" "$WORK/r"
mk && cp "$WORK/r/cPres_Global/$a" "$WORK/r/cPres_Global/${a#0x}" # the same id again
refuse 20 "cPres_Global" "$WORK/r"
mk && cp "$WORK/coll-x360/cPres_Global/"*.rx2 "$WORK/r/cPres_Global/"
refuse 20 ".rx2" "$WORK/r"
mk
refuse 9 "cPres_Global/$a" "$WORK/r" PSGFS_PACK_TEST_CHANGE="cPres_Global/$a"
mk # the change hook left a byte appended
refuse 11 "cPres_Global.psf" "$WORK/r" PSGFS_PACK_STREAM_TEST_CORRUPT=cPres_Global.psf
refuse 11 "DIST_K_Pres.psm" "$WORK/r" PSGFS_PACK_STREAM_TEST_CORRUPT=DIST_K_Pres.psm
refuse 21 "no-such-stub" "$WORK/r" --like "$WORK/no-such-stub"
refuse 3 "no-such-dir" "$WORK/no-such-dir"
# hostile stubs (issue 30): a FIFO among the stub's files does not block the open; a header
# word the packed set cannot carry is refused naming the stub's file, not the written set
mkdir -p "$WORK/stub-fifo" "$WORK/stub-lie"
mkfifo "$WORK/stub-fifo/DIST_X_Pres.psm"
refuse 21 "stub-fifo" "$WORK/r" --like "$WORK/stub-fifo"
word() { printf "$(printf '\\x%02x' $3 $4 $5 $6)" | dd of="$1" bs=1 seek=$2 conv=notrunc status=none; }
cp "$WORK/gen-ps3/DIST_Rt/cPres_Global.psf" "$WORK/stub-lie/cPres_Global.psf"
word "$WORK/stub-lie/cPres_Global.psf" 20 255 255 255 255 # SFIL +0x14: 2^32 - 1 assets
refuse 21 "stub-lie/cPres_Global.psf" "$WORK/r" --like "$WORK/stub-lie/cPres_Global.psf"
word "$WORK/stub-lie/cPres_Global.psf" 20 0 0 0 1
word "$WORK/stub-lie/cPres_Global.psf" 24 0 0 0 1 # RefPack, over raw assets
refuse 21 "stub-lie/cPres_Global.psf" "$WORK/r" --like "$WORK/stub-lie/cPres_Global.psf"
# large sparse files: no arena is read whole to learn it is none; a collection past the
# format's 4 GiB is refused from the sizes, before its assets are read into memory
mk && truncate -s 3G "$WORK/r/cPres_Global/0x1.psg"
refuse 20 "cPres_Global/0x1.psg" "$WORK/r"
# an arena that lies about its size: its resource descriptors add up to less than the file
mk && { cat "$WORK/r/cPres_Global/$a" && printf '%16s' ''; } >"$WORK/r/cPres_Global/0x1.psg"
refuse 20 "cPres_Global/0x1.psg: an arena whose header sizes add up to" "$WORK/r"
mk && cp "$WORK/r/cPres_Global/$a" "$WORK/r/cPres_Global/0x1.psg" &&
	cp "$WORK/r/cPres_Global/$a" "$WORK/r/cPres_Global/0x2.psg" &&
	truncate -s 2G "$WORK/r/cPres_Global/0x1.psg" "$WORK/r/cPres_Global/0x2.psg"
refuse 12 "cPres_Global" "$WORK/r"
peak_kb=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$T" pack-stream "$WORK/r" "$keep")
check "refuse cPres_Global: its 4 GiB are not read into memory (peak ${peak_kb} kB)" \
	[ "$peak_kb" -lt $((1024 * 1024)) ]
check "no temporary file left by the refusals" no_temp_left "$WORK/keep"
# a folder named like one of the set's files: refused before any rename, so the old set stays
# whole (the files renamed before it were new, the rest old)
old=$WORK/old/DIST_K
mkdir -p "$old"
"$T" pack-stream --like "$WORK/gen-ps3/DIST_Rt" "$WORK/coll-ps3" "$old" >/dev/null
rm "$old/DIST_K_Sim.pst" && mkdir "$old/DIST_K_Sim.pst"
cp -r "$old" "$WORK/old.ref"
rc=0
"$T" pack-stream "$WORK/coll-ps3" "$old" >/dev/null 2>"$WORK/err" || rc=$?
check "a folder in the way: exit 10 (got $rc)" [ "$rc" = 10 ]
check "a folder in the way: one line naming it" one_line_naming "DIST_K_Sim.pst"
check "a folder in the way: OUTDIR untouched" diff -r "$WORK/old.ref" "$old"
check "a folder in the way: no temporary file left" no_temp_left "$old"
rc=0
"$T" pack-stream "$WORK/r" "$WORK/keep/noname" >/dev/null 2>&1 || rc=$?
check "usage: a district without a DIST_ name is exit 2" [ "$rc" = 2 ]
"$T" pack-stream --help >"$WORK/help"
check "pack-stream --help lists the exit codes" grep -q '20 an' "$WORK/help"
# a successful pack over an existing set replaces its files
mk && "$T" pack-stream "$WORK/r" "$keep" >/dev/null
check "a successful pack replaces OUTDIR's files" [ "$(head -c 4 "$keep/DIST_K_Pres.psm")" = CMAP ]
finish
