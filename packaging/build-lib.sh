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
compile() {  # module name → object and .swiftmodule in $work
    "$swiftc" $flags -module-name "$1" -emit-module -emit-module-path "$work/$1.swiftmodule" \
        -c "$root"/Sources/"$1"/*.swift -o "$work/$1.o"
}
compile SceneSoundPlatform
compile SceneSoundProtocol
compile SceneSoundClient
compile SceneSoundC

"$swiftc" -emit-library -static-stdlib -use-ld=lld \
    "$work/SceneSoundPlatform.o" "$work/SceneSoundProtocol.o" "$work/SceneSoundClient.o" "$work/SceneSoundC.o" \
    -o "$out/libscenesound.so.0" \
    -Xlinker -soname=libscenesound.so.0 \
    -Xlinker --version-script="$root/packaging/scenesound.map" \
    -Xlinker --gc-sections -Xlinker -s
ln -sf libscenesound.so.0 "$out/libscenesound.so"
echo "built $out/libscenesound.so.0"
