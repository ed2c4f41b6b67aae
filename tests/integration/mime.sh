#!/usr/bin/env bash
# The shared-mime-info definition (data/psgfs.xml): meson install puts it in
# share/mime/packages (the database refresh is left to the target system under a DESTDIR, run
# otherwise), and with it GLib (what GNOME-family file managers use) names PSG, RX2, PSK/PSKX,
# PSA and EA .big archive files by their first bytes and by extension, where without it they
# are unknown.
. "$(dirname "$0")/lib.sh"

for tool in update-mime-database gio meson; do
	if ! command -v "$tool" >/dev/null; then
		echo "# skipped: $tool not found (scripts/deps test installs shared-mime-info, libglib2.0-bin)"
		exit 0
	fi
done
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "$(dirname "$PSGFS")/.." && pwd)

# ---- meson install ----
timeout 120 meson install -C "$build" --destdir "$WORK/inst" --no-rebuild --quiet >/dev/null
xml=$(find "$WORK/inst" -path '*/share/mime/packages/psgfs.xml' | sed -n 1p)
check "meson install puts psgfs.xml in share/mime/packages" test -n "$xml"
check "   ... identical to data/psgfs.xml" cmp -s "$xml" "$root/data/psgfs.xml"
check "   ... and leaves the database to the target system under a DESTDIR" \
	test -z "$(find "$WORK/inst" -name mime.cache)"
mkdir -p "$WORK/prefix/share/mime/packages"
cp "$xml" "$WORK/prefix/share/mime/packages/"
check "the install script refreshes the database of a real prefix" bash -c \
	"env -u DESTDIR MESON_INSTALL_PREFIX='$WORK/prefix' '$root/scripts/mime-update' share/mime 2>/dev/null && test -s '$WORK/prefix/share/mime/mime.cache'"

# ---- what GLib makes of the files, with and without the definition ----
F=$WORK/files
mkdir -p "$F"
"$PSGFS_GEN" sky "$F/model.psg"
"$PSGFS_GEN" textures --platform x360 "$F/textures.rx2"
"$PSGFS_GEN" psk "$F/mesh.psk"
"$PSGFS_GEN" psk --big --points 44000 "$F/BIG.PSKX"
"$PSGFS_GEN" psa "$F/anim.psa"
"$PSGFS_GEN" big --assets 1 "$F/game.big" >/dev/null
"$PSGFS_GEN" big --variant bigf "$F/music.BIG" >/dev/null
for f in model.psg textures.rx2 mesh.psk anim.psa game.big music.BIG; do
	cp "$F/$f" "$F/${f%.*}_renamed.bin"
done
# A RenderWare 4 arena of another platform (PC header): only the generic type.
{ printf '\x89RW4w32\x00'; head -c 200 /dev/zero; } >"$F/pc_arena.bin"
type_of() { # FILE [XDG_DATA_HOME]: GLib's content type for FILE
	XDG_DATA_HOME=${2:-$WORK/none} XDG_DATA_DIRS=/usr/share timeout 10 \
		gio info -a standard::content-type "$1" 2>/dev/null | awk '/content-type:/ {print $2}'
}
is_type() { # FILE TYPE
	local got
	got=$(type_of "$1" "$WORK/prefix/share")
	[ "$got" = "$2" ] || { echo "# $(basename "$1"): $got"; return 1; }
}
check "without the definition a renamed arena is not a Skate 3 arena ($(type_of "$F/model_renamed.bin"))" \
	test "$(type_of "$F/model_renamed.bin")" != application/x-skate3-psg
check ".psg: Skate 3 arena (PS3)" is_type "$F/model.psg" application/x-skate3-psg
check ".rx2: Skate 3 arena (Xbox 360)" is_type "$F/textures.rx2" application/x-skate3-rx2
check ".psk: Unreal skeletal mesh" is_type "$F/mesh.psk" model/x-unreal-psk
check ".PSKX, upper case: Unreal skeletal mesh" is_type "$F/BIG.PSKX" model/x-unreal-psk
check ".psa: Unreal animation" is_type "$F/anim.psa" model/x-unreal-psa
check "a PS3 arena by its bytes alone (.bin)" is_type "$F/model_renamed.bin" application/x-skate3-psg
check "an Xbox 360 arena by its bytes alone" is_type "$F/textures_renamed.bin" application/x-skate3-rx2
check "a PSK by its bytes alone" is_type "$F/mesh_renamed.bin" model/x-unreal-psk
check "a PSA by its bytes alone" is_type "$F/anim_renamed.bin" model/x-unreal-psa
check "without the definition a .big is not an EA archive ($(type_of "$F/game.big"))" \
	test "$(type_of "$F/game.big")" != application/x-ea-big
check ".big: EA BIG archive (EB v3)" is_type "$F/game.big" application/x-ea-big
check ".BIG, upper case: EA BIG archive (BIGF)" is_type "$F/music.BIG" application/x-ea-big
check "an EB v3 archive by its bytes alone" is_type "$F/game_renamed.bin" application/x-ea-big
check "a BIGF archive by its bytes alone" is_type "$F/music_renamed.bin" application/x-ea-big
check "another platform's arena: the generic RenderWare 4 type" is_type "$F/pc_arena.bin" application/x-rw4-arena
check "the Skate 3 types are RenderWare 4 arenas (sub-class)" bash -c \
	"grep -q 'application/x-skate3-psg application/x-rw4-arena' '$WORK/prefix/share/mime/subclasses'"
finish
