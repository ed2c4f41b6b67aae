#!/usr/bin/env bash
# psgfs exit codes: 0 ok, 1 internal, 2 usage, 3 cannot open/read, 4 not a recognised format,
# 5 too damaged, 6 mount failed. Every failure prints exactly one line on stderr (naming FILE
# and the reason where there is a FILE), nothing on stdout, and leaves nothing mounted.
. "$(dirname "$0")/lib.sh"

mp=$WORK/mp
mkdir -p "$mp"
MOUNTS+=("$mp")

# expect CODE WORD ARGS...: psgfs ARGS exits CODE with one stderr line containing WORD.
expect() {
	local code=$1 word=$2 st=0 lines
	shift 2
	timeout 20 "$PSGFS" "$@" > "$WORK/out" 2> "$WORK/err" || st=$?
	lines=$(wc -l < "$WORK/err")
	echo "# psgfs $* -> $st: $(head -1 "$WORK/err")"
	if mountpoint -q "$mp"; then
		fusermount3 -u "$mp"
		echo "# ... and it mounted"
		return 1
	fi
	[ "$st" = "$code" ] && [ "$lines" = 1 ] && [ ! -s "$WORK/out" ] &&
		grep -qF -- "$word" "$WORK/err"
}

sky=$WORK/sky.psg
"$PSGFS_GEN" sky "$sky"
psk=$WORK/p.psk
"$PSGFS_GEN" psk --seed 1 "$psk"

# 0: mounts, unmounts
check "0: a good arena mounts" mount_psgfs "$sky" "$mp"
check "0: and unmounts" unmount_psgfs "$mp"
check "0: --help on stdout" bash -c "'$PSGFS' --help | grep -q '^usage: psgfs'"
check "0: --version" bash -c "'$PSGFS' --version | grep -q '^psgfs '"

# 2: usage
check "2: no arguments" expect 2 "missing FILE"
check "2: one argument" expect 2 "missing MOUNTPOINT" "$sky"
check "2: three positional arguments" expect 2 "unexpected argument 'extra'" "$sky" "$mp" extra
check "2: cache_size=abc" expect 2 "cache_size 'abc'" "$sky" "$mp" -o cache_size=abc
check "2: cache_size below 1M" expect 2 "cache_size '100K'" "$sky" "$mp" -o cache_size=100K
check "2: cache_size=12Q" expect 2 "cache_size '12Q'" "$sky" "$mp" -o cache_size=12Q
check "2: unreadable hierarchy file" expect 2 "$WORK/nope.tsv" "$sky" "$mp" -o hierarchy="$WORK/nope.tsv"

# Sizes: digits with an optional K/M/G suffix; no sign, no blanks, nothing that overflows.
for v in -1 -5M -0 +64M ' 64M' '64M ' 0x10 18446744073709551616 17179869184G 18014398509481984K; do
	check "2: cache_size='$v'" expect 2 "bad cache_size '$v'" "$sky" "$mp" -o "cache_size=$v"
done
check "2: cache_size=-1 says what a size is" expect 2 "cache_size '-1': not a size (digits" "$sky" "$mp" -o cache_size=-1
check "2: cache_size=17179869184G is too large" expect 2 "cache_size '17179869184G': too large" "$sky" "$mp" -o cache_size=17179869184G
check "2: cache_size below 1M names the minimum" expect 2 "below the minimum 1M" "$sky" "$mp" -o cache_size=1048575

# Hierarchy: a regular file (links to one are fine) of at most 16M, read before mounting;
# anything else is refused at once, naming the file and the reason.
"$PSGFS_GEN" skinned --seed 9 --bones 14 --hierarchy-out "$WORK/hier.tsv" "$WORK/sk.psg"
mkfifo "$WORK/hier.fifo"
check "2: hierarchy is a FIFO (refused, not waited on)" expect 2 "$WORK/hier.fifo: not a regular file (a FIFO)" "$sky" "$mp" -o hierarchy="$WORK/hier.fifo"
check "2: umask not octal" expect 2 "bad umask '9'" "$sky" "$mp" -o umask=9
check "2: umask too large" expect 2 "bad umask '17777'" "$sky" "$mp" -o umask=17777
check "2: hierarchy is a directory" expect 2 "$WORK: not a regular file (a directory)" "$sky" "$mp" -o hierarchy="$WORK"
check "2: hierarchy is /dev/zero" expect 2 "/dev/zero: not a regular file (a character device)" "$sky" "$mp" -o hierarchy=/dev/zero
ln -s hier.fifo "$WORK/fifo.link"
check "2: hierarchy is a link to a FIFO" expect 2 "$WORK/fifo.link: not a regular file" "$sky" "$mp" -o hierarchy="$WORK/fifo.link"
truncate -s $((16 * 1024 * 1024 + 1)) "$WORK/huge.tsv"
check "2: hierarchy larger than 16M" expect 2 "$WORK/huge.tsv: larger than 16777216 bytes" "$sky" "$mp" -o hierarchy="$WORK/huge.tsv"
printf 'bone\tparent\n\0\n' > "$WORK/nul.tsv"
check "2: hierarchy with a NUL byte" expect 2 "$WORK/nul.tsv: contains a NUL byte" "$sky" "$mp" -o hierarchy="$WORK/nul.tsv"
ln -s hier.tsv "$WORK/hier.link"
for h in hier.tsv hier.link; do
	check "0: a good hierarchy ($h) mounts" mount_psgfs "$WORK/sk.psg" "$mp" -o hierarchy="$WORK/$h"
	check "   ... and is used" grep -q 'hierarchy: from the hierarchy file' "$mp/info.txt"
	check "   ... unmounts" unmount_psgfs "$mp"
done

# Stats: checked before mounting; written whole through a temporary file and a rename, so a
# symbolic link at FILE is replaced and its target left alone.
mkdir "$WORK/statsdir"
check "2: stats is a directory" expect 2 "stats file $WORK/statsdir: is a directory" "$sky" "$mp" -o stats="$WORK/statsdir"
check "2: stats in a missing directory" expect 2 "stats file $WORK/nodir/s.txt: cannot create a file in its directory: No such file" "$sky" "$mp" -o stats="$WORK/nodir/s.txt"
check "2: stats is a device" expect 2 "stats file /dev/null: not a regular file" "$sky" "$mp" -o stats=/dev/null
if [ "$(id -u)" != 0 ]; then
	mkdir "$WORK/ro"
	chmod 555 "$WORK/ro"
	check "2: stats in an unwritable directory" expect 2 "stats file $WORK/ro/s.txt: cannot create a file in its directory: Permission denied" "$sky" "$mp" -o stats="$WORK/ro/s.txt"
else
	echo "# running as root: /sys stands in for a directory that cannot be written"
	check "2: stats in an unwritable directory" expect 2 "stats file /sys/psgfs-stats.txt: cannot create a file in its directory: Permission denied" "$sky" "$mp" -o stats=/sys/psgfs-stats.txt
fi
check "2: a failed stats check leaves no temporary file" bash -c "[ -z \"\$(ls -A '$WORK/statsdir')\" ]"
printf 'precious\n' > "$WORK/target.txt"
ln -s target.txt "$WORK/stats.link"
stats_written() {
	for _ in $(seq 100); do
		[ -f "$1" ] && [ ! -L "$1" ] && grep -q '^cache_budget 1048576$' "$1" && return 0
		sleep 0.05
	done
	return 1
}
check "0: mounts with stats at a symbolic link" mount_psgfs "$sky" "$mp" -o stats="$WORK/stats.link",cache_size=1M
kill -USR1 "$(pgrep -n -f -x "$PSGFS $sky $mp -o stats=$WORK/stats.link,cache_size=1M")"
check "   ... SIGUSR1 replaced the link by a regular file with the counters" stats_written "$WORK/stats.link"
check "   ... the link's target is unchanged" bash -c "[ \"\$(cat '$WORK/target.txt')\" = precious ]"
rm "$WORK/stats.link"
ln -s target.txt "$WORK/stats.link"
check "   ... unmounts (stats written again at exit)" unmount_psgfs "$mp"
check "   ... exit replaced the new link too" stats_written "$WORK/stats.link"
check "   ... the target is still unchanged" bash -c "[ \"\$(cat '$WORK/target.txt')\" = precious ]"
check "   ... no temporary file left beside it" bash -c "[ \"\$(ls '$WORK' | grep -c '^stats.link')\" = 1 ]"
# libfuse names a rejected option on a line of its own, then psgfs says what it means.
bad_fuse() {
	local st=0
	timeout 20 "$PSGFS" "$sky" "$mp" -o no_such_option > /dev/null 2> "$WORK/err" || st=$?
	[ "$st" = 2 ] && grep -q 'no_such_option' "$WORK/err" && tail -1 "$WORK/err" | grep -qF "psgfs: $sky:"
}
check "2: an option libfuse rejects" bad_fuse

# Source paths holding the characters of FUSE's option syntax (issue 21 item 3): the path is
# -o fsname= with its commas and backslashes escaped, so it mounts read-only with exactly the
# options psgfs sets, and /proc/mounts shows it as the source.
mtab_escape() { # as /proc/mounts writes a path: space, tab, newline, backslash in octal
	local s=${1//\\/\\134}
	s=${s// /\\040}
	s=${s//$'\t'/\\011}
	printf '%s' "${s//$'\n'/\\012}"
}
mounted_as() { # SRC: the mount on $mp is read-only, without injected options, from SRC
	local src opts
	read -r src _ _ opts _ < <(awk -v m="$mp" '$2 == m' /proc/mounts)
	echo "# $src: $opts"
	[ "$src" = "$(mtab_escape "$1")" ] && [[ $opts == ro,* ]] && [[ $opts != *allow_other* ]] &&
		[[ $opts != *,rw* ]]
}
odd_names=('c,allow_other' 'd,rw' 'a,,b' 'back\slash' 'trailing\' '\,' 'two  spaces'
	$'new\nline' $'tab\there' 'eq=uals,fsname=x,subtype=y' 'x,max_read=1')
for n in "${odd_names[@]}"; do
	cp "$sky" "$WORK/$n"
	check "0: a source named $(printf '%q' "$n") mounts" mount_psgfs "$WORK/$n" "$mp"
	check "   ... read-only, nothing injected, named in /proc/mounts" mounted_as "$WORK/$n"
	check "   ... a write fails with EROFS" bash -c "touch '$mp/x' 2>&1 | grep -q 'Read-only file system'"
	check "   ... serves the file" grep -q '^format: psg$' "$mp/info.txt"
	check "   ... unmounts" unmount_psgfs "$mp"
done

# 3: cannot open or read
check "3: missing file" expect 3 "$WORK/missing.psg: cannot open: No such file" "$WORK/missing.psg" "$mp"
mkdir -p "$WORK/folder"
check "0: a folder mounts (a folder mount)" mount_psgfs "$WORK/folder" "$mp"
check "0: and unmounts" unmount_psgfs "$mp"
mkfifo "$WORK/fifo"
check "3: a FIFO (refused, not waited on)" expect 3 "$WORK/fifo: not a regular file" "$WORK/fifo" "$mp"
check "3: a device" expect 3 "/dev/null: not a regular file" /dev/null "$mp"
if [ "$(id -u)" != 0 ]; then
	cp "$sky" "$WORK/unreadable.psg"
	chmod 000 "$WORK/unreadable.psg"
	check "3: unreadable (mode 000)" expect 3 "$WORK/unreadable.psg: cannot open: Permission denied" "$WORK/unreadable.psg" "$mp"
else
	echo "# running as root: mode 000 is readable; /proc/self/mem stands in for an unreadable file"
fi
check "3: open but unreadable (read fails with EIO)" expect 3 "/proc/self/mem: cannot read" /proc/self/mem "$mp"

# 4: not a recognised format
head -c 4096 /dev/urandom > "$WORK/random.bin"
printf 'xRW4' | dd of="$WORK/random.bin" conv=notrunc status=none # never a magic by chance
check "4: random bytes" expect 4 "$WORK/random.bin: not a PSG arena, PSK or PSA file" "$WORK/random.bin" "$mp"
: > "$WORK/empty.psg"
check "4: empty file" expect 4 "$WORK/empty.psg: empty file" "$WORK/empty.psg" "$mp"
printf 'hello\n' > "$WORK/text.psk"
check "4: a text file named .psk" expect 4 "$WORK/text.psk" "$WORK/text.psk" "$mp"
head -c 20 "$psk" > "$WORK/head20.psk"
check "4: a bare 20-byte ACTRHEAD prefix" expect 4 "$WORK/head20.psk" "$WORK/head20.psk" "$mp"

# 5: too damaged: a PSG whose dictStart (header offset 0x30, big-endian) is past the end
cp "$sky" "$WORK/dict.psg"
printf '\x7f\xff\xff\xf0' | dd of="$WORK/dict.psg" bs=1 seek=$((0x30)) conv=notrunc status=none
check "5: PSG dictStart past EOF" expect 5 "$WORK/dict.psg: PSG arena: header: " "$WORK/dict.psg" "$mp"
head -c 40 "$sky" > "$WORK/short.psg"
check "5: PSG cut inside its header" expect 5 "$WORK/short.psg: PSG arena: truncated" "$WORK/short.psg" "$mp"
# A PSK cut inside its second chunk header is not refused: the reader is lenient, the mount
# shows what is there and errors.txt names the cut (documented policy, psk.h).
head -c 40 "$psk" > "$WORK/cut.psk"
check "0: PSK cut inside the second chunk header mounts" mount_psgfs "$WORK/cut.psk" "$mp"
check "   ... errors.txt names the cut" grep -q 'too short for a chunk header' "$mp/errors.txt"
check "   ... unmounts" unmount_psgfs "$mp"

# 6: mount failed
check "6: mount point does not exist" expect 6 "$sky: cannot mount on $WORK/nodir: No such file" "$sky" "$WORK/nodir"
touch "$WORK/afile"
check "6: mount point is a regular file" expect 6 "$sky: cannot mount on $WORK/afile: Not a directory" "$sky" "$WORK/afile"
check "6: nothing was mounted over the file" bash -c "! grep -qF ' $WORK/afile ' /proc/mounts && [ -f '$WORK/afile' ]"
# libfuse parses some options it then refuses when the kernel's INIT arrives, after mounting
# (issue 21 item 8): a daemonised mount waits for INIT, so these fail as any mount does.
check "6: -o max_read=1 (refused at INIT), daemonised" expect 6 "$sky: cannot mount on $mp: " "$sky" "$mp" -o max_read=1
check "   ... the line says why" grep -q "maximum read size" "$WORK/err"
check "6: -o max_read=1 in the foreground" expect 6 "$sky: cannot mount on $mp: " "$sky" "$mp" -f -o max_read=1
# FILE errors come first: a bad file and a bad mount point is a file error.
check "3 before 6: missing file and missing mount point" expect 3 "$WORK/missing.psg" "$WORK/missing.psg" "$WORK/nodir"
check "2 before 3: bad option and missing file" expect 2 "cache_size" "$WORK/missing.psg" "$mp" -o cache_size=x
check "no mount left behind by any failure" bash -c "! grep -qF ' $WORK/' /proc/mounts"
finish
