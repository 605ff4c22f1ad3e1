#!/bin/sh
# `make install`: the C library, its header and pkg-config file, both programs (and the
# capture guard the daemon starts, and the KWin script it loads), the systemd
# user unit, man pages made from --help and the GNOME Shell extension, under PREFIX (DESTDIR is
# honoured for packagers).
#   install.sh PREFIX LIB_BUILD_DIR [BINARIES_DIR]
# Without BINARIES_DIR the programs are built with `swift build -c release`.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
case $1 in /*) prefix=$1 ;; *) prefix=$(pwd)/$1 ;; esac  # .pc and unit need absolute paths
lib_build=$2
binaries=${3:-}
dest=${DESTDIR:-}$prefix
swift=${SWIFT:-/opt/swift/usr/bin/swift}

if [ -z "$binaries" ]; then
    (cd "$root" && for product in scenesound scenesoundd scenesound-capture-guard; do
        "$swift" build -c release --product "$product" || exit 1
    done)
    binaries=$(cd "$root" && "$swift" build -c release --show-bin-path)
fi

install -d "$dest/lib/pkgconfig" "$dest/include" "$dest/bin" "$dest/lib/systemd/user" "$dest/share/man/man1"
install -m 0755 "$lib_build/libscenesound.so.0" "$dest/lib/libscenesound.so.0"
ln -sf libscenesound.so.0 "$dest/lib/libscenesound.so"
install -m 0644 "$root/Sources/CSceneSound/include/scenesound.h" "$dest/include/scenesound.h"
sed "s|@PREFIX@|$prefix|g" "$root/packaging/scenesound.pc.in" > "$dest/lib/pkgconfig/scenesound.pc"
sed "s|@PREFIX@|$prefix|g" "$root/packaging/scenesound.service.in" > "$dest/lib/systemd/user/scenesound.service"
for program in scenesound scenesoundd; do
    install -m 0755 "$binaries/$program" "$dest/bin/$program"
    "$root/packaging/help-to-man.sh" "$binaries/$program" 1 > "$dest/share/man/man1/$program.1"
done
# scenesoundd --windows kwin loads its KWin script from PREFIX/share/scenesound/kwin/.
install -d "$dest/share/scenesound/kwin"
install -m 0644 "$root/share/kwin/scenesound.js" "$dest/share/scenesound/kwin/scenesound.js"
# scenesoundd --capture-apps looks for its guard beside itself, and refuses to capture without it.
install -m 0755 "$binaries/scenesound-capture-guard" "$dest/bin/scenesound-capture-guard"
# GNOME Shell: the extension that tells the daemon where native Wayland windows are, in the
# variant for the Shell installed here (GNOME_EXTENSION_VARIANT=43 or 45 chooses by hand).
"$root/packaging/install-gnome-extension.sh" "$dest/share/gnome-shell/extensions" ${GNOME_EXTENSION_VARIANT:-}
echo "installed SceneSound under $dest"
