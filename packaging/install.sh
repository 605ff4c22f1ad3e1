#!/bin/sh
# `make install` and the Debian packages' install step: the C library, its header and
# pkg-config file, the programs, the systemd user unit, man pages made from --help, the KWin
# script and the GNOME Shell extension, under PREFIX (DESTDIR is honoured for packagers).
#   install.sh PREFIX LIB_BUILD_DIR [BINARIES_DIR]
# Without BINARIES_DIR the programs are built with `swift build -c release`, the Swift runtime
# linked in (--static-swift-stdlib): what is installed runs without the toolchain.
#
# One program, three names: scenesoundd is installed once, and `scenesound` and the capture
# guard (in libexec/scenesound/, where the daemon looks for it) are links to it; it runs as
# the name it was called by. The runtime and Foundation are most of each program's weight
# (docs/PACKAGING.md).
#
# LIBDIR (default PREFIX/lib; the packages pass /usr/lib/<triplet>) is where the C library
# goes. GNOME_EXTENSION_VARIANT: 43 or 45 installs that variant of the GNOME Shell extension
# (default: the one for the GNOME Shell installed here); `both` installs the two under
# share/scenesound/gnome-shell-extension/ for the packages, whose postinst links the right one
# (debian/scenesound.postinst).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
case $1 in /*) prefix=$1 ;; *) prefix=$(pwd)/$1 ;; esac  # .pc and unit need absolute paths
lib_build=$2
binaries=${3:-}
libdir=${LIBDIR:-$prefix/lib}
dest=${DESTDIR:-}
swift=${SWIFT:-/opt/swift/usr/bin/swift}

if [ -z "$binaries" ]; then
    (cd "$root" && "$swift" build -c release --static-swift-stdlib --disable-local-rpath --product scenesoundd) || exit 1
    binaries=$(cd "$root" && "$swift" build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)
fi
version=$("$binaries/scenesoundd" --version)

install -d "$dest$libdir/pkgconfig" "$dest$prefix/include" "$dest$prefix/bin" "$dest$prefix/lib/systemd/user" \
    "$dest$prefix/share/man/man1" "$dest$prefix/libexec/scenesound"
install -m 0644 "$lib_build/libscenesound.so.0" "$dest$libdir/libscenesound.so.0"
ln -sf libscenesound.so.0 "$dest$libdir/libscenesound.so"
install -m 0644 "$root/Sources/CSceneSound/include/scenesound.h" "$dest$prefix/include/scenesound.h"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" -e "s|@VERSION@|$version|g" \
    "$root/packaging/scenesound.pc.in" > "$dest$libdir/pkgconfig/scenesound.pc"
sed "s|@PREFIX@|$prefix|g" "$root/packaging/scenesound.service.in" > "$dest$prefix/lib/systemd/user/scenesound.service"

install -m 0755 "$binaries/scenesoundd" "$dest$prefix/bin/scenesoundd"
ln -sf scenesoundd "$dest$prefix/bin/scenesound"
# scenesoundd --capture-apps refuses to capture without its guard.
ln -sf ../../bin/scenesoundd "$dest$prefix/libexec/scenesound/scenesound-capture-guard"
for program in scenesound scenesoundd; do
    "$root/packaging/help-to-man.sh" "$dest$prefix/bin/$program" 1 > "$dest$prefix/share/man/man1/$program.1"
done

# scenesoundd --windows kwin loads a copy of this script into KWin (over D-Bus); it sits where
# KWin keeps packaged scripts, as a KPackage.
kwin=$dest$prefix/share/kwin/scripts/scenesound
install -d "$kwin/contents/code"
install -m 0644 "$root/share/kwin/scenesound.js" "$kwin/contents/code/main.js"
sed "s|@VERSION@|$version|g" "$root/packaging/kwin-metadata.json.in" > "$kwin/metadata.json"

# GNOME Shell: the extension that tells the daemon where native Wayland windows are.
variant=${GNOME_EXTENSION_VARIANT:-}
if [ "$variant" = both ]; then
    for variant in 43 45; do
        "$root/packaging/install-gnome-extension.sh" "$dest$prefix/share/scenesound/gnome-shell-extension/$variant" $variant
    done
else
    "$root/packaging/install-gnome-extension.sh" "$dest$prefix/share/gnome-shell/extensions" $variant
fi
echo "installed SceneSound $version under $dest$prefix"
