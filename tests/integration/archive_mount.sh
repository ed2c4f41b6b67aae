#!/usr/bin/env bash
# Archive mounts (issue 18): psgfs GAME.big MNT and archives inside folder mounts. Archives laid
# out like the game's (data/content/...): folders mirrored, plain entries as files of their
# bytes, assets as directories holding exactly the tree a loose file shows plus their own
# bytes, material links across the archive, nested archives; -o assets=files and cp -r giving
# back the loose files byte for byte; the errno of each operation; hostile names and bad
# archives (nothing crashes, hangs or reads outside); texture mods into OUTDIR at the entry's
# path; psgfs-tool ls|cat|extract|walk on archives.
. "$(dirname "$0")/lib.sh"
: "${MKARC:?}" "${ERRNO_PROBE:?}" "${HAMMER:?}"

S=$WORK/src
mkdir -p "$S"
"$PSGFS_GEN" sky "$S/sky.psg"
"$PSGFS_GEN" textures "$S/sky_Textures.psg"
"$PSGFS_GEN" psk "$S/board.psk"
printf 'hello\n' >"$S/notes.txt"
head -c 3000000 /dev/urandom >"$S/big.bin"
CAC=data/content/createacharacter
big=$WORK/createacharacter.big
"$MKARC" "$big" \
	"$CAC/model" sky.psg "$S/sky.psg" \
	"$CAC/model" sky_Textures.psg "$S/sky_Textures.psg" \
	"$CAC/model" board.psk "$S/board.psk" \
	"$CAC" notes.txt "$S/notes.txt" \
	data/content/misc big.bin "$S/big.bin"
# The loose files, as an unpacking tool writes them.
L=$WORK/loose
mkdir -p "$L/$CAC/model" "$L/data/content/misc"
cp "$S/sky.psg" "$S/sky_Textures.psg" "$S/board.psk" "$L/$CAC/model/"
cp "$S/notes.txt" "$L/$CAC/"
cp "$S/big.bin" "$L/data/content/misc/"

# ---- a single archive ----
m=$WORK/m
mount_psgfs "$big" "$m"
check "root: the archive's folders and its info.txt and errors.txt" test \
	"$(ls "$m" | tr '\n' ' ')" = "data errors.txt info.txt "
check "folders mirrored" test "$(ls "$m/$CAC" | tr '\n' ' ')" = "model notes.txt "
check "a plain entry is a file of its bytes" cmp -s "$m/$CAC/notes.txt" "$S/notes.txt"
check "st_size of a 3 MB entry comes from the table, bytes equal" bash -c \
	"[ \$(stat -c %s '$m/data/content/misc/big.bin') = 3000000 ] && cmp -s '$m/data/content/misc/big.bin' '$S/big.bin'"
check "an asset entry is a directory" test -d "$m/$CAC/model/sky.psg"
check "... holding its own bytes under its own name" cmp -s "$m/$CAC/model/sky.psg/sky.psg" "$S/sky.psg"
ref=$WORK/ref
mount_psgfs "$L/$CAC/model" "$ref"
for a in sky.psg sky_Textures.psg board.psk; do
	check "$a: exactly the tree a folder mount of the loose file shows, byte for byte" \
		diff -r --no-dereference -x "$a" "$ref/$a" "$m/$CAC/model/$a"
done
mat=$m/$CAC/model/sky.psg/materials/00.material
check "material links across the archive: relative, into the companion entry" test \
	"$(readlink "$mat/diffuse.png")" = "../../../sky_Textures.psg/textures/0x2c7f381800171902.png"
check "... and they resolve to the byte-identical texture" cmp -s "$mat/diffuse.png" \
	"$m/$CAC/model/sky_Textures.psg/textures/0x2c7f381800171902.png"
check "the .glb export of the archived model equals the loose one's" cmp -s \
	"$m/$CAC/model/sky.psg/export/sky.glb" "$ref/sky.psg/export/sky.glb"
check "info.txt counts entries per compression" bash -c \
	"grep -qx 'entries: 5' '$m/info.txt' && grep -qx 'entries stored: 5' '$m/info.txt' &&
	 grep -qx 'shown as assets: 3' '$m/info.txt'"
check "errors.txt is empty for a sound archive" test ! -s "$m/errors.txt"
# errno of each operation
e() { "$ERRNO_PROBE" "$@"; }
check "errno: writing an entry is EROFS" test "$(e open_w "$m/$CAC/notes.txt")" = EROFS
check "errno: creating a file is EROFS" test "$(e open_creat "$m/$CAC/new.txt")" = EROFS
check "errno: mkdir is EROFS" test "$(e mkdir "$m/$CAC/d")" = EROFS
check "errno: unlink is EROFS" test "$(e unlink "$m/$CAC/notes.txt")" = EROFS
check "errno: rename is EROFS" test "$(e rename "$m/$CAC/notes.txt" "$m/$CAC/x")" = EROFS
check "errno: a missing name is ENOENT" test "$(e stat "$m/$CAC/nope")" = ENOENT
check "errno: reading a folder is EISDIR" test "$(e read "$m/$CAC")" = EISDIR
check "errno: listing a file is ENOTDIR" test "$(e readdir "$m/$CAC/notes.txt")" = ENOTDIR
check "errno: reading an asset directory is EISDIR" test "$(e read "$m/$CAC/model/sky.psg")" = EISDIR
check "inode numbers are unique over the mount" bash -c \
	"[ \$(find '$m' -printf '%i\n' | sort | uniq -d | wc -l) = 0 ]"
find "$m" -printf '%i %P\n' | sort -k2 >"$WORK/ino.1"
unmount_psgfs "$m"
mount_psgfs "$big" "$m"
find "$m" -printf '%i %P\n' | sort -k2 >"$WORK/ino.2"
check "inode numbers are the same after a remount" cmp -s "$WORK/ino.1" "$WORK/ino.2"
unmount_psgfs "$m"

# ---- -o assets=files: cp -r gives back the loose files ----
mount_psgfs "$big" "$m" -o assets=files
check "assets=files: an asset is a plain file" test -f "$m/$CAC/model/sky.psg"
rm -rf "$WORK/out"
cp -r "$m/$CAC" "$WORK/out"
check "assets=files: cp -r of a folder gives back the loose files, byte for byte" \
	diff -r "$WORK/out" "$L/$CAC"
unmount_psgfs "$m"
check "assets=bogus is a usage error (exit 2)" bash -c \
	"st=0; timeout 20 '$PSGFS' '$big' '$m' -o assets=bogus 2>/dev/null || st=\$?; [ \$st = 2 ]"

# ---- a folder mount of a game data/ folder ----
G=$WORK/game/data
mkdir -p "$G/content" "$G/loose"
cp "$big" "$G/content/createacharacter.big"
cp "$S/sky.psg" "$G/loose/"
cp "$big" "$G/content/renamed.dat" # an archive by its bytes, whatever its name
f=$WORK/f
mount_psgfs "$G" "$f"
check "folder: a .big is a directory of its tree" cmp -s \
	"$f/content/createacharacter.big/$CAC/model/sky.psg/sky.psg" "$S/sky.psg"
check "folder: an archive under another name too" test -d "$f/content/renamed.dat/$CAC"
check "folder: the archive's info.txt" grep -q "EB v3" "$f/content/createacharacter.big/info.txt"
check "folder: an archived asset shows what the loose one shows" diff -r \
	"$f/loose/sky.psg/skeleton" "$f/content/createacharacter.big/$CAC/model/sky.psg/skeleton"
unmount_psgfs "$f"

# ---- the generator's game data/ folder (psgfs-gen game: EB v3 archives with every
# compression, a BIGF music bank, loose files) ----
gen_help=$("$PSGFS_GEN" --help 2>&1 || true)
if grep -q '^  game ' <<<"$gen_help"; then
	GG=$WORK/gamegen
	timeout 300 "$PSGFS_GEN" game --seed 5 --manifest "$WORK/game.man" "$GG" >/dev/null
	# want: "path-in-the-mount<TAB>size<TAB>fnv" for every manifest row: a loose file at its
	# path, an archive's entry at archive/path, and an archive inside an archive as its own
	# bytes inside its directory (archive/path/name). Loose archives are directories: no row.
	awk -F'\t' 'NR > 1 && !($2 == "-" && $1 ~ /\.(big|psf|xsf)$/) {
		p = ($2 == "-") ? $1 : $1 "/" $2
		if ($2 != "-" && $2 ~ /\.(big|psf|xsf)$/) { n = split($2, c, "/"); p = p "/" c[n] }
		print p "\t" $4 "\t" $5}' "$WORK/game.man" | sort >"$WORK/game.all"
	# Assets of stream files need the SFIL parser: checked apart, when this build has it.
	in_sfil=$'\\.(psf|xsf)/[^/]*\t' sfil_own=$'\\.(psf|xsf)/[^/]*\\.(psf|xsf)\t'
	grep -Ev "$in_sfil" "$WORK/game.all" >"$WORK/game.want" || true
	grep -E "$in_sfil" "$WORK/game.all" | grep -Ev "$sfil_own" >"$WORK/game.sfil" || true
	grep -E "$sfil_own" "$WORK/game.all" >>"$WORK/game.want" || true
	# hashes DIR LIST: "path<TAB>size<TAB>fnv" for each path of LIST (relative to DIR, a path a
	# line), the size or hash left empty when it cannot be had; one stat and one psgfs-gen hash
	# for the whole list (a stat, a psgfs-gen and a cut per row were most of this section).
	hashes() {
		local sizes=$WORK/hashes.size fnvs=$WORK/hashes.fnv
		(cd "$1" && xargs -r -d '\n' -a "$2" stat -c $'%n\t%s' 2>/dev/null) >"$sizes" || true
		(cd "$1" && xargs -r -d '\n' -a "$2" "$PSGFS_GEN" hash 2>/dev/null) >"$fnvs" || true
		awk -F'\t' -v sizes="$sizes" -v fnvs="$fnvs" 'FILENAME == sizes { size[$1] = $2; next }
			FILENAME == fnvs { fnv[substr($0, 19)] = substr($0, 1, 16); next }
			{ print $0 "\t" size[$0] "\t" fnv[$0] }' "$sizes" "$fnvs" "$2"
	}
	got_rows() { # MNT WANT: the same rows read back through the mount
		cut -f1 "$2" >"$WORK/rows.list"
		hashes "$1" "$WORK/rows.list"
	}
	mount_psgfs "$GG" "$f" -o assets=files
	got_rows "$f" "$WORK/game.want" >"$WORK/game.got"
	check "game folder: every entry of every archive (and every loose file) has the generator's size and bytes ($(wc -l <"$WORK/game.want") rows)" \
		cmp -s "$WORK/game.want" "$WORK/game.got"
	"$PSGFS_GEN" stream --assets 2 "$WORK/probe.psf" >/dev/null 2>&1 || true
	if [ -s "$WORK/game.sfil" ] && "$PSGFS_TOOL" ls "$WORK/probe.psf" >/dev/null 2>&1; then
		got_rows "$f" "$WORK/game.sfil" >"$WORK/game.sfil.got"
		check "game folder: every asset of every stream file (loose and archived) has the generator's size and bytes" \
			cmp -s "$WORK/game.sfil" "$WORK/game.sfil.got"
	else
		echo "# skip: this build does not read SFIL stream files yet"
	fi
	rm -rf "$WORK/cac"
	cp -r "$f/data/content/createacharacter.big/data/content/createacharacter" "$WORK/cac"
	awk -F'\t' '$1 ~ /createacharacter.big\/data\/content\/createacharacter\// {
		sub(/.*createacharacter.big\/data\/content\/createacharacter\//, "", $1); print $1 "\t" $3}' \
		"$WORK/game.want" | sort >"$WORK/cac.want"
	(cd "$WORK/cac" && find . -type f | sed 's|^\./||' | sort) >"$WORK/cac.list"
	hashes "$WORK/cac" "$WORK/cac.list" | cut -f1,3 >"$WORK/cac.got"
	check "game folder: cp -r of an archive's folder gives back its loose files, byte for byte" \
		test -s "$WORK/cac.want" -a -z "$(cmp "$WORK/cac.want" "$WORK/cac.got" 2>&1)"
	unmount_psgfs "$f"
	mount_psgfs "$GG" "$f"
	check "game folder: every archive is a directory with info.txt" bash -c \
		"for a in \$(cd '$GG' && find . -name '*.big'); do [ -d '$f'/\$a ] && [ -s '$f'/\$a/info.txt ] || exit 1; done"
	check "game folder: an archived asset is a directory holding its own bytes" bash -c "
		p=\$(awk -F'\t' '\$1 ~ /\\.big\$/ && \$2 ~ /\\.psg\$/ {print \$1 \"/\" \$2; exit}' '$WORK/game.man')
		[ -d '$f'/\$p ] && cmp -s '$f'/\$p/\${p##*/} <(cat '$f'/\$p/\${p##*/})"
	unmount_psgfs "$f"
	check "game folder: psgfs-tool walk renders every file of it" bash -c \
		"'$PSGFS_TOOL' walk '$GG' | grep -qx 'failed 0'"
	# Every compression, 4 threads at random offsets, a 1 MiB cache (pieces evicted and
	# decoded again): every byte equal to what psgfs-tool extracts. After the sweep, 10,000
	# random reads (or 4 s): 4 s alone kept both CPUs busy, 95,000 reads in the plain build and
	# 12,000 under ASan+UBSan, the same paths again and again.
	cac=$GG/data/content/createacharacter.big
	"$PSGFS_TOOL" --assets dirs extract "$cac" "$WORK/cac.ref" >/dev/null
	mount_psgfs "$cac" "$m" -o cache_size=1M
	check "game archive: 4 threads of random reads, 1 MiB cache, every byte right" bash -c \
		"timeout 60 '$HAMMER' -a -n 10000 '$m' '$WORK/cac.ref' 4 4 1 >'$WORK/hammer.out' && cat '$WORK/hammer.out'"
	unmount_psgfs "$m"
else
	echo "# skip: this psgfs-gen has no 'game' kind (the generator of game folders)"
fi

# ---- hostile names ----
h=$WORK/hostile.big
"$MKARC" "$h" '../..' 'up.txt' "$S/notes.txt" '/abs' 'x.txt' "$S/notes.txt" \
	'win\x5cdows' 'y.txt' "$S/notes.txt" '' '' "$S/notes.txt" 'dup' 's.txt' "$S/notes.txt" \
	'dup' 's.txt' "$S/notes.txt" 'c' 'a\x01b\x0a.txt' "$S/notes.txt" 'c' '\xff\xfe.bin' \
	"$S/notes.txt" '' 'info.txt' "$S/notes.txt"
mount_psgfs "$h" "$m"
check "hostile: '..' and absolute paths stay inside, backslashes split folders" test \
	"$(ls "$m" | tr '\n' ' ')" = "_.. _unnamed_3 abs c dup errors.txt info.txt info.txt~2 win "
check "hostile: duplicates get ~2" test "$(ls "$m/dup" | tr '\n' ' ')" = "s.txt s.txt~2 "
check "hostile: control bytes and non-UTF-8 become %XX" test \
	"$(ls "$m/c" | tr '\n' ' ')" = "%FF%FE.bin a%01b%0A.txt "
check "hostile: errors.txt lists every renamed path" test "$(wc -l <"$m/errors.txt")" = 8
unmount_psgfs "$m"

# ---- empty entries stored compressed (issue 29 §2): unpacked size 0 is an empty file ----
for v in refpack chunkref; do
	"$PSGFS_GEN" big --variant $v --assets 1 "$WORK/empty-$v.big" >/dev/null
	mount_psgfs "$WORK/empty-$v.big" "$m"
	e0=$m/$CAC/empty.dat
	check "empty ($v): st_size 0, cat gives 0 bytes without an error" bash -c \
		"[ \$(stat -c %s '$e0') = 0 ] && n=\$(cat '$e0' | wc -c) && [ \$n = 0 ]"
	check "empty ($v): no errors.txt line" test ! -s "$m/errors.txt"
	unmount_psgfs "$m"
	rm -rf "$WORK/x"
	check "empty ($v): psgfs-tool extract writes it empty" bash -c \
		"'$PSGFS_TOOL' extract '$WORK/empty-$v.big' '$WORK/x' >/dev/null && [ -f '$WORK/x/$CAC/empty.dat' ] && [ ! -s '$WORK/x/$CAC/empty.dat' ]"
done

# ---- bad archives: nothing crashes, hangs or reads outside ----
"$MKARC" --cut 2999990 "$WORK/lying.big" d ok.txt "$S/notes.txt" d liar.bin "$S/big.bin@4000000000"
mount_psgfs "$WORK/lying.big" "$m"
check "lying: st_size is what the table claims" test "$(stat -c %s "$m/d/liar.bin")" = 4000000000
check "lying: a read past the real bytes fails with EIO" bash -c \
	"! dd if='$m/d/liar.bin' of=/dev/null bs=4096 skip=1000 count=1 2>'$WORK/dd.err' && grep -q 'Input/output error' '$WORK/dd.err'"
check "lying: the other entry reads" cmp -s "$m/d/ok.txt" "$S/notes.txt"
check "lying: errors.txt names the entry" grep -q "liar.bin" "$m/errors.txt"
unmount_psgfs "$m"
# psgfs-gen's liar (issue 30 §10): a.bin claims 4 GiB - 1 and stores 100 bytes. The bytes it
# has read, a read past them fails (with zero-message opens the kernel takes the short read
# as the file's end; a mount that gets opens reads it uncached, below).
"$PSGFS_GEN" big --variant lying --seed 2 "$WORK/liar.big" >/dev/null
st=0
"$PSGFS_TOOL" cat "$WORK/liar.big" data/content/hostile/a.bin >"$WORK/liar.100" 2>/dev/null || st=$?
check "lying (generated): psgfs-tool cat writes the 100 bytes it has, then fails (exit 1)" \
	test "$st:$(stat -c %s "$WORK/liar.100")" = 1:100
mount_psgfs "$WORK/liar.big" "$m"
a=$m/data/content/hostile/a.bin
check "lying (generated): st_size is the claim" test "$(stat -c %s "$a")" = 4294967295
check "lying (generated): a read past the 100 bytes fails with EIO" bash -c \
	"! dd if='$a' of=/dev/null bs=4096 skip=1 count=1 2>'$WORK/dd.err' && grep -q 'Input/output error' '$WORK/dd.err'"
check "lying (generated): the 100 bytes it has read" bash -c \
	"head -c 100 '$a' >'$WORK/liar.got' && [ \$(stat -c %s '$WORK/liar.got') = 100 ] && cmp -s '$WORK/liar.got' '$WORK/liar.100'"
check "lying (generated): errors.txt names it and where its bytes end" grep -q \
	"a.bin): its stored bytes end at byte 100 of the 4294967295" "$m/errors.txt"
unmount_psgfs "$m"
# A texture-mods mount gets opens: the entry the table shows short is read uncached, so cat
# copies its 100 bytes and then fails.
mkdir -p "$WORK/liar-out"
mount_psgfs "$WORK/liar.big" "$m" -o mods="$WORK/liar-out"
check "lying (generated, opens sent): cat copies the 100 bytes it has, then fails with EIO" bash -c \
	"! cat '$a' >'$WORK/liar.cat2' 2>'$WORK/cat2.err' && grep -q 'Input/output error' '$WORK/cat2.err' &&
	 cmp -s '$WORK/liar.cat2' '$WORK/liar.100'"
unmount_psgfs "$m"
"$MKARC" --count 1000000 "$WORK/million.big" d a.txt "$S/notes.txt"
"$MKARC" --cut 100 "$WORK/cut.big" d a.txt "$S/notes.txt" d b.txt "$S/notes.txt"
head -c 4096 /dev/urandom | { printf 'EB\0\3'; cat; } >"$WORK/noise.big"
for b in million cut noise; do
	st=0
	timeout 30 "$PSGFS" "$WORK/$b.big" "$m" 2>"$WORK/$b.err" || st=$?
	if mountpoint -q "$m"; then
		MOUNTS+=("$m")
		timeout 60 find "$m" -type f -exec cat {} + >/dev/null 2>&1 || true
		check "bad ($b): mounted, everything read or refused, the daemon alive" mountpoint -q "$m"
		unmount_psgfs "$m"
	else
		check "bad ($b): refused with exit 4 or 5 and one line" bash -c \
			"[ $st = 4 ] || [ $st = 5 ]; [ \$(wc -l <'$WORK/$b.err') = 1 ]"
	fi
done
G2=$WORK/badgame
mkdir -p "$G2"
cp "$WORK/million.big" "$WORK/cut.big" "$WORK/noise.big" "$G2/"
mount_psgfs "$G2" "$f"
check "bad in a folder: every archive is a directory that reads or explains itself" bash -c \
	"timeout 60 find '$f' -type f -exec cat {} + >/dev/null 2>&1; [ -f '$f/noise.big/info.txt' ] && mountpoint -q '$f'"
unmount_psgfs "$f"

# ---- nested archives ----
"$MKARC" "$WORK/outer.big" data inner.big "$big" data notes.txt "$S/notes.txt"
mount_psgfs "$WORK/outer.big" "$m"
check "nested: an archive in the archive is a directory of its tree" cmp -s \
	"$m/data/inner.big/$CAC/model/sky.psg/sky.psg" "$S/sky.psg"
check "nested: its own bytes beside its tree" cmp -s "$m/data/inner.big/inner.big" "$big"
unmount_psgfs "$m"

# ---- texture mods into OUTDIR at the entry's path ----
"$MKARC" "$WORK/tex.big" "$CAC/texture" 0x2c7f3818.psg "$S/sky_Textures.psg"
od=$WORK/outdir
mkdir -p "$od"
sum_before=$(sha256sum <"$WORK/tex.big")
mount_psgfs "$WORK/tex.big" "$m" -o "mods=$od"
t=$m/$CAC/texture/0x2c7f3818.psg/textures
dds=$(ls "$t" | grep -m1 '\.dds$')
cp "$t/$dds" "$WORK/same.dds"
check "mods: a DDS saved into an archived arena is accepted" cp "$WORK/same.dds" "$t/$dds"
check "mods: the arena lands at OUTDIR/<the entry's path>" test -f "$od/$CAC/texture/0x2c7f3818.psg"
check "mods: same DDS, same bytes as the entry" cmp -s "$od/$CAC/texture/0x2c7f3818.psg" "$S/sky_Textures.psg"
check "mods: the archive is never written" test "$(sha256sum <"$WORK/tex.big")" = "$sum_before"
unmount_psgfs "$m"

# ---- GUIDs the companion lacks, found in 0x<GUID>.psg entries of archives (issue 20 §2) ----
el=$WORK/elsewhere
mkdir -p "$el/data/models"
cp "$S/sky.psg" "$el/data/models/sky.psg"
"$PSGFS_GEN" textures --only 3 "$el/data/models/sky_Textures.psg"
"$PSGFS_GEN" textures --only 2 "$WORK/t2.psg"
"$PSGFS_GEN" textures --only 4 "$WORK/t4.psg"
"$MKARC" "$el/data/tex.big" data/content/tex 0x2c7f381800171902.psg "$WORK/t2.psg" \
	data/content/tex 0x2c7f381800171904.psg "$WORK/t4.psg"
"$MKARC" "$el/data/models.big" data/models sky.psg "$S/sky.psg" \
	data/models sky_Textures.psg "$el/data/models/sky_Textures.psg"
mount_psgfs "$el" "$f"
mat=$f/data/models/sky.psg/materials/00.material
check "guid: a loose model's diffuse links into a 0x<GUID> entry of an archive never listed before" test \
	"$(readlink "$mat/diffuse.png")" = \
	"../../../../tex.big/data/content/tex/0x2c7f381800171902.psg/textures/0x2c7f381800171902.png"
check "guid: ... and the link resolves to the byte-identical texture" cmp -s "$mat/diffuse.png" \
	"$f/data/tex.big/data/content/tex/0x2c7f381800171902.psg/textures/0x2c7f381800171902.png"
mat=$f/data/models.big/data/models/sky.psg/materials/00.material
check "guid: a model inside an archive links into another archive" test \
	"$(readlink "$mat/detail.dds")" = \
	"../../../../../../tex.big/data/content/tex/0x2c7f381800171904.psg/textures/0x2c7f381800171904.dds"
check "guid: ... byte-identical too" cmp -s "$mat/detail.dds" \
	"$f/data/tex.big/data/content/tex/0x2c7f381800171904.psg/textures/0x2c7f381800171904.dds"
check "guid: info.txt counts them" grep -qx \
	"materials: 1; 3 of 4 GUID channels name a texture: 1 of sky_Textures.psg (linked), 2 in 0x<GUID> arenas elsewhere in the mount (linked)" \
	"$f/data/models.big/data/models/sky.psg/info.txt"
unmount_psgfs "$f"
"$MKARC" "$WORK/one.big" data/models sky.psg "$S/sky.psg" data/tex 0x2c7f381800171902.psg "$WORK/t2.psg"
mount_psgfs "$WORK/one.big" "$m"
check "guid: in a single-archive mount, entries of the same archive" test \
	"$(readlink "$m/data/models/sky.psg/materials/00.material/diffuse.dds")" = \
	"../../../../tex/0x2c7f381800171902.psg/textures/0x2c7f381800171902.dds"
unmount_psgfs "$m"

# ---- ... and in texture arenas of any name, by their TableOfContents (issue 29 §5) ----
"$MKARC" "$WORK/toc.big" data/models sky_model.psg "$S/sky.psg" \
	data/content sky_textures.psg "$S/sky_Textures.psg"
mount_psgfs "$WORK/toc.big" "$m"
mat=$m/data/models/sky_model.psg/materials/00.material
check "toc: an archive's model links into a texture arena entry of another name" test \
	"$(readlink "$mat/diffuse.png")" = \
	"../../../../content/sky_textures.psg/textures/0x2c7f381800171902.png"
check "toc: ... byte-identical" cmp -s "$mat/diffuse.png" \
	"$m/data/content/sky_textures.psg/textures/0x2c7f381800171902.png"
check "toc: material.txt names the entry" grep -qP \
	'\t0x2C7F381800171903\ttexture 0x2c7f381800171903 in data/content/sky_textures.psg \(by its TableOfContents\)$' \
	"$mat/material.txt"
unmount_psgfs "$m"
tf=$WORK/tocfold
mkdir -p "$tf/models"
cp "$S/sky.psg" "$tf/models/sky_model.psg"
"$MKARC" "$tf/tex.big" data sky_textures.psg "$S/sky_Textures.psg"
mount_psgfs "$tf" "$f"
check "toc: a loose model links into a texture arena entry of an archive of the folder" test \
	"$(readlink "$f/models/sky_model.psg/materials/00.material/detail.dds")" = \
	"../../../../tex.big/data/sky_textures.psg/textures/0x2c7f381800171904.dds"
unmount_psgfs "$f"

# ---- psgfs-tool on archives ----
check "tool ls: the archive's root" bash -c "'$PSGFS_TOOL' ls '$big' | cut -f4 | tr '\n' ' ' | grep -qx 'data errors.txt info.txt '"
check "tool cat: an entry's bytes" bash -c "'$PSGFS_TOOL' cat '$big' '$CAC/notes.txt' | cmp -s - '$S/notes.txt'"
rm -rf "$WORK/x"
check "tool extract of an archive: the loose files at the archive's paths" bash -c \
	"'$PSGFS_TOOL' extract '$big' '$WORK/x' >/dev/null && diff -r -x info.txt -x errors.txt '$WORK/x' '$L'"
check "tool walk: every file of the archive renders" bash -c "'$PSGFS_TOOL' walk '$big' | grep -qx 'failed 0'"
check "tool walk: a lying entry is a failure (exit 1)" bash -c \
	"st=0; '$PSGFS_TOOL' walk '$WORK/lying.big' >/dev/null 2>&1 || st=\$?; [ \$st = 1 ]"
finish
