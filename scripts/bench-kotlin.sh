#!/usr/bin/env bash
# The FFI cost from Kotlin, each call beside its floor: ns/call of ping (a no-op), decide, an
# agent read, an agent call whose prompt the Kotlin Platform answers at once, and a screen
# read, against the release libraries (LTO, as shipped; slow to build on two cores). The floor
# is bindings/floor (harness-ffi-floor): the same call shapes doing nothing, generated and
# loaded the same way, measured in the same run on the same JVM. Ends with the table README.md
# holds. `--debug` measures the debug libraries instead.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/host-tools.sh

require_command cargo "install Rust with rustup (https://rustup.rs)"
ensure_kotlinc
ensure_host_jars

profile=release
[ "${1:-}" = "--debug" ] && profile=debug
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
# release_cdylib PACKAGE LIBNAME: the release cdylib alone (the staticlib would double the LTO
# time and is not measured). `cargo bench -p harness-ffi` writes its bench-profile build to the
# same file (target/release/deps has one libharness_ffi.so for both profiles), and cargo deems
# the release build fresh without looking at that file: so a library this script did not see
# cargo build is removed and built again.
release_cdylib() {
  local package="$1" so="$target_dir/release/lib$2.so" stamp="$target_dir/kotlin-host/lib$2.so.sha256"
  local messages
  messages="$(cargo rustc --quiet --locked --release -p "$package" --lib --crate-type cdylib \
    --message-format=json-render-diagnostics)"
  if grep -F "\"$so\"" <<<"$messages" | grep -q '"fresh":true' &&
    [ "$(sha256sum <"$so")" != "$(cat "$stamp" 2>/dev/null)" ]; then
    echo "$so was not built by this script's last build; building it again"
    rm -f "$so" "$target_dir/release/deps/lib$2.so"
    cargo rustc --quiet --locked --release -p "$package" --lib --crate-type cdylib
  fi
  mkdir -p "$(dirname "$stamp")"
  sha256sum <"$so" >"$stamp"
}
if [ "$profile" = release ]; then
  release_cdylib harness-ffi harness_ffi
  release_cdylib harness-ffi-floor harness_ffi_floor
else
  cargo build --quiet --locked -p harness-ffi-floor --lib
fi
# Also builds uniffi-bindgen (and the debug harness-ffi); both libraries have the same
# interface in either profile.
scripts/gen-bindings.sh "$target_dir/bindings" >/dev/null
rm -rf "$target_dir/bindings-floor"
"$target_dir/debug/uniffi-bindgen" generate --library "$target_dir/$profile/libharness_ffi_floor.so" \
  --language kotlin --config bindings/floor/uniffi.toml --no-format \
  --out-dir "$target_dir/bindings-floor/kotlin" >/dev/null

build="$target_dir/kotlin-host"
runtime_cp="$JNA_JAR:$KOTLIN_LIB/kotlinx-coroutines-core-jvm.jar:$KOTLIN_LIB/kotlin-stdlib.jar"
kotlinc_cached "$build/bindings.jar" "$runtime_cp" "$target_dir/bindings/kotlin" android/host-stubs
kotlinc_cached "$build/floor.jar" "$runtime_cp" "$target_dir/bindings-floor/kotlin" android/host-stubs
bench_cp="$build/bindings.jar:$build/floor.jar:$runtime_cp"
kotlinc_cached "$build/bench.jar" "$bench_cp" android/host-bench

echo "libraries: $target_dir/$profile/lib{harness_ffi,harness_ffi_floor}.so ($profile); $(date -u +%F);" \
  "$(java -version 2>&1 | head -1); JNA $(basename "$(readlink -f "$JNA_JAR")")"
exec java -Djna.library.path="$target_dir/$profile" -cp "$build/bench.jar:$bench_cp" \
  edu.pku.harness.host.BenchKt
