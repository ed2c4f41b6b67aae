#!/usr/bin/env bash
# A PSK mounted for real. Tree layout, exact sizes, bytes equal to the source chunks,
# stable inodes across remounts, sorted listings, mtime, EROFS, repeatable reads.
. "$(dirname "$0")/lib.sh"

psk=$WORK/mesh.psk
"$PSGFS_GEN" psk --seed 11 --bones 7 --points 50 --materials 2 --normals --colors --uv-sets 2 \
	--morphs 2 --sockets 2 "$psk"
m=$WORK/m
mount_psgfs "$psk" "$m"

expected="chunks colors.tsv errors-full.txt errors.txt export faces.tsv info.txt materials.tsv morphs normals.tsv points.tsv skeleton sockets.tsv uvs wedges.tsv weights.tsv"
check "root lists every PSK file, sorted" test "$(ls "$m" | tr '\n' ' ' | sed 's/ $//')" = "$expected"
check "readdir order is already sorted (ls -f)" \
	test "$(ls -f "$m" | grep -v '^\.\.\?$' | tr '\n' ' ')" = "$(ls "$m" | tr '\n' ' ')"
check "skeleton has bones.tsv names.txt bones/" test "$(ls "$m/skeleton" | tr '\n' ' ')" = "bones bones.tsv names.txt "
check "one bone file per bone" test "$(ls "$m/skeleton/bones" | wc -l)" -eq 7
check "names.txt has 7 names" test "$(wc -l < "$m/skeleton/names.txt")" -eq 7
check "uvs/0.tsv and uvs/1.tsv" test "$(ls "$m/uvs" | tr '\n' ' ')" = "0.tsv 1.tsv "
check "two morph files" test "$(ls "$m/morphs" | wc -l)" -eq 2
check "points.tsv: header + 50 rows" test "$(wc -l < "$m/points.tsv")" -eq 51
check "every TSV starts with a header naming its columns" \
	bash -c "for f in \$(find '$m' -name '*.tsv'); do head -1 \"\$f\" | grep -q '^[a-z_0-9]*	' || exit 1; done"
check "weights.tsv columns" test "$(head -1 "$m/weights.tsv")" = "$(printf 'point\tbone\tname\tweight')"
check "bones.tsv columns start index name parent" bash -c "head -1 '$m/skeleton/bones.tsv' | grep -q '^index	name	parent	px	py	pz	qx	qy	qz	qw'"
check "errors.txt is empty for a clean file" test ! -s "$m/errors.txt"
check "info.txt counts points and problems" bash -c "grep -q '^points: 50$' '$m/info.txt' && grep -q '^problems: 0$' '$m/info.txt'"

# st_size is exact for every file, before and after reading.
sizes_ok=1
while IFS= read -r -d '' f; do
	s=$(stat -c %s "$f")
	n=$(cat "$f" | wc -c)
	[ "$s" = "$n" ] || { echo "size mismatch: $f stat $s read $n"; sizes_ok=0; }
done < <(find "$m" -type f -print0)
check "st_size equals bytes read for every file" test "$sizes_ok" = 1

# Chunk payloads are the source bytes: header (32) + payload, chunk after chunk.
rebuilt=$WORK/rebuilt
: > "$rebuilt"
off=0
ok_bytes=1
for c in "$m"/chunks/*.bin; do
	len=$(stat -c %s "$c")
	dd if="$psk" bs=1 skip=$((off + 32)) count="$len" status=none | cmp -s - "$c" || ok_bytes=0
	off=$((off + 32 + len))
done
check "chunks/*.bin are the payloads in file order" test "$ok_bytes" = 1
check "chunk payloads + headers add up to the file size" test "$off" -eq "$(stat -c %s "$psk")"

check "mtime comes from the source file" test "$(stat -c %Y "$m/info.txt")" = "$(stat -c %Y "$psk")"
check "reads are byte-identical" bash -c "cmp -s <(cat '$m/points.tsv') <(cat '$m/points.tsv')"
check "same tree as psgfs-tool extract" same_as_tool "$psk" "$m"

# Every write is refused with EROFS.
erofs() { ! out=$("$@" 2>&1) && grep -q "Read-only file system" <<< "$out"; }
check "touch new file: EROFS" erofs touch "$m/new"
check "write existing file: EROFS" erofs bash -c "echo x > '$m/info.txt'"
check "mkdir: EROFS" erofs mkdir "$m/dir"
check "rm: EROFS" erofs rm -f "$m/info.txt"
check "chmod: EROFS" erofs chmod 777 "$m/info.txt"
check "mv: EROFS" erofs mv "$m/info.txt" "$m/x.txt"

# Inode numbers are structural: the same after a remount.
find "$m" -printf '%i %P\n' | sort > "$WORK/ino1"
unmount_psgfs "$m"
mount_psgfs "$psk" "$m"
find "$m" -printf '%i %P\n' | sort > "$WORK/ino2"
check "inode numbers stable across remounts" cmp -s "$WORK/ino1" "$WORK/ino2"
check "inode numbers unique" test "$(cut -d' ' -f1 "$WORK/ino1" | sort | uniq -d | wc -l)" -eq 0

# Hostile names become safe, unique components.
hostile=$WORK/hostile.psk
"$PSGFS_GEN" psk --seed 5 --bones 8 --points 20 --hostile-names --morphs 3 "$hostile"
h=$WORK/h
mount_psgfs "$hostile" "$h"
check "hostile bone names: one file per bone, no slashes" test "$(ls "$h/skeleton/bones" | wc -l)" -eq 8
check "hostile names: no entry escapes the mount" test -z "$(find "$h" -name '..*' -o -name '*/*' | sed -n 1p)"
check "hostile names: every file readable" bash -c "find '$h' -type f -exec cat {} + > /dev/null"
finish
