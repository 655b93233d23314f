#!/usr/bin/env bash
# Generates the Kotlin and Swift bindings from the built library, in library mode: the
# unstripped target/debug (or target/release) libharness_ffi.so carries the interface metadata.
#
#   scripts/gen-bindings.sh [--release] [OUT_DIR]
#
# Writes OUT_DIR/kotlin/edu/pku/harness/harness_ffi.kt and OUT_DIR/swift/{Harness.swift,
# HarnessFFI.h, HarnessFFI.modulemap}; OUT_DIR defaults to $CARGO_TARGET_DIR/bindings
# (target/bindings). Names come from uniffi.toml, passed with --config.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=debug
profile_flag=()
if [ "${1:-}" = "--release" ]; then
  profile=release
  profile_flag=(--release)
  shift
fi
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
out="${1:-$target_dir/bindings}"

case "$(uname -s)" in
  Darwin) lib="$target_dir/$profile/libharness_ffi.dylib" ;;
  *) lib="$target_dir/$profile/libharness_ffi.so" ;;
esac

# The generator first: building it with the `cli` feature also rebuilds the library with that
# feature, so the plain library is built after it and is the one left on disk.
cargo build --quiet --locked -p harness-ffi --features cli --bin uniffi-bindgen
cargo build --quiet --locked -p harness-ffi "${profile_flag[@]}"

rm -rf "$out/kotlin" "$out/swift"
for language in kotlin swift; do
  "$target_dir/debug/uniffi-bindgen" generate --library "$lib" --language "$language" \
    --config uniffi.toml --no-format --out-dir "$out/$language" >/dev/null
done
echo "bindings from $lib: $out/kotlin (Kotlin), $out/swift (Swift)"
