#!/usr/bin/env bash
# Builds the protocol fuzzer and runs it for a bounded time (default 60 s) over the committed
# corpus and the golden vectors (read as seeds, not copied). New inputs that reach new code
# are kept in Fuzz/corpus; to keep it small, minimise it now and then:
#   .build-fuzz/protocol-fuzzer -merge=1 NEW_DIR Fuzz/corpus protocol/vectors
# Usage: Fuzz/run.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=.build-fuzz
mkdir -p "$out" Fuzz/corpus
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name ProtocolFuzzer \
  Sources/SceneSoundProtocol/*.swift Fuzz/ProtocolDecoderFuzzer.swift -o "$out/protocol-fuzzer"
"$out/protocol-fuzzer" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 Fuzz/corpus protocol/vectors
