#!/usr/bin/env bash
# The FFI overhead from Kotlin: ns/call of ping (a no-op), decide, and an agent call whose
# prompt the Kotlin Platform answers at once, against the release library (LTO, as shipped;
# slow to build on two cores). `--debug` measures the debug library instead.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/host-tools.sh

require_command cargo "install Rust with rustup (https://rustup.rs)"
ensure_kotlinc
ensure_host_jars

profile=release
[ "${1:-}" = "--debug" ] && profile=debug
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
if [ "$profile" = release ]; then
  cargo rustc --quiet --locked --release -p harness-ffi --lib --crate-type cdylib
fi
scripts/gen-bindings.sh "$target_dir/bindings" >/dev/null

build="$target_dir/kotlin-host"
runtime_cp="$JNA_JAR:$KOTLIN_LIB/kotlinx-coroutines-core-jvm.jar:$KOTLIN_LIB/kotlin-stdlib.jar"
kotlinc_cached "$build/bindings.jar" "$runtime_cp" "$target_dir/bindings/kotlin" android/host-stubs
kotlinc_cached "$build/bench.jar" "$build/bindings.jar:$runtime_cp" android/host-bench

echo "library: $target_dir/$profile/libharness_ffi.so; $(java -version 2>&1 | head -1); JNA $(basename "$(readlink -f "$JNA_JAR")")"
exec java -Djna.library.path="$target_dir/$profile" -cp "$build/bindings.jar:$build/bench.jar:$runtime_cp" \
  edu.pku.harness.host.BenchKt
