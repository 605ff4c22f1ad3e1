#!/bin/sh
# Builds libscenesound.so.0 into OUTDIR (default .build-clib/lib) with swiftc directly:
# four modules (SceneSoundPlatform, SceneSoundProtocol, SceneSoundClient, SceneSoundC), optimised whole-module,
# linked into one shared object with the Swift standard library linked statically, the
# SONAME libscenesound.so.0, and only the scenesound_* symbols exported (packaging/scenesound.map).
# lld rather than the default gold: gold leaves a few localised Swift symbols in .dynsym.
#
# Why not `swift build`: a dynamic library product would link the Swift runtime dynamically,
# and a scratch path of its own would have to fetch every package dependency (NIO, …) even
# though the library uses none of them. swiftc needs neither.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/.build-clib/lib}
mkdir -p "$out" && out=$(cd "$out" && pwd)
work=$out/.objects  # beside the output: concurrent builds into different places never share it
swiftc=${SWIFTC:-/opt/swift/usr/bin/swiftc}
mkdir -p "$out" "$work"

# The package's language mode (swift-tools-version 6.x defaults to Swift 6).
# One package name for all four: SceneSoundPlatform shares its helpers with `package` access.
flags="-O -wmo -parse-as-library -swift-version 6 -package-name scenesound -I $work"

# Each module's top-level sources only: Sources/SceneSoundClient/Idioms (the Apple-style API,
# which needs Foundation, libsndfile and the sound themes) stays out of the library.
modules="SceneSoundPlatform SceneSoundProtocol SceneSoundClient SceneSoundC"

# Up to date, as make judges it, and then not built again (`make deb` after `make test`, whose
# LibraryTests built the library into the same place): the library is newer than every input,
# and the sources, compiler and flags are the ones it was built from (a source removed or added
# changes the list).
set --
for module in $modules; do set -- "$@" "$root/Sources/$module"; done
compiler=$(readlink -f "$swiftc")
inputs=$(find "$@" -maxdepth 1 -name '*.swift' | sort; "$swiftc" --version 2>&1; echo "$flags")
library=$out/libscenesound.so.0
if [ -f "$library" ] && [ "$(cat "$out/.inputs" 2>/dev/null)" = "$inputs" ] &&
   [ -z "$(find "$@" -maxdepth 1 -name '*.swift' -newer "$library")" ] &&
   [ -z "$(find "$root/packaging/build-lib.sh" "$root/packaging/scenesound.map" "$compiler" -newer "$library")" ]; then
    echo "$library is up to date"
    exit 0
fi
rm -f "$out/.inputs"

compile() {  # module name → object and .swiftmodule in $work
    "$swiftc" $flags -module-name "$1" -emit-module -emit-module-path "$work/$1.swiftmodule" \
        -c "$root"/Sources/"$1"/*.swift -o "$work/$1.o"
}
for module in $modules; do compile "$module"; done

"$swiftc" -emit-library -static-stdlib -use-ld=lld \
    "$work/SceneSoundPlatform.o" "$work/SceneSoundProtocol.o" "$work/SceneSoundClient.o" "$work/SceneSoundC.o" \
    -o "$library" \
    -Xlinker -soname=libscenesound.so.0 \
    -Xlinker --version-script="$root/packaging/scenesound.map" \
    -Xlinker --gc-sections -Xlinker -s
ln -sf libscenesound.so.0 "$out/libscenesound.so"
echo "$inputs" > "$out/.inputs"
echo "built $library"
