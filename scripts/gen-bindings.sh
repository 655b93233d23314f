#!/usr/bin/env bash
# Generates the Kotlin and Swift bindings from the built library, in library mode: the
# unstripped target/debug (or target/release) libharness_ffi.so carries the interface metadata.
#
#   scripts/gen-bindings.sh [--release] [OUT_DIR]
#
# The library holds two UniFFI components: harness-ffi's (the Harness object, its traits and
# error) and harness-core's (the records and enums that cross as they are). Writes
# OUT_DIR/kotlin/edu/pku/harness/harness_ffi.kt and OUT_DIR/kotlin/edu/pku/harness/core/
# harness_core.kt (a package each), and OUT_DIR/swift/{Harness.swift, HarnessCore.swift} (both
# for the one Swift module Harness) with the headers HarnessFFI.h and HarnessCoreFFI.h and one
# module map HarnessFFI.modulemap (C module HarnessFFI) over both; OUT_DIR defaults to
# $CARGO_TARGET_DIR/bindings (target/bindings). Names come from uniffi.toml, passed with --config.
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

# The generators first: building them with the `cli` feature also rebuilds the library with that
# feature, so the plain library is built after them and is the one left on disk.
cargo build --quiet --locked -p harness-ffi --features cli --bin uniffi-bindgen --bin uniffi-bindgen-swift
# The debug library is the one the Kotlin tests load: it has the development feature (the sample
# plugins, the campus simulator: bindings/src/development.rs); a release build, for phones, not.
features=()
[ "$profile" = debug ] && features=(--features development)
cargo build --quiet --locked -p harness-ffi "${profile_flag[@]}" "${features[@]}"

rm -rf "$out/kotlin" "$out/swift"
"$target_dir/debug/uniffi-bindgen" generate --library "$lib" --language kotlin \
  --config uniffi.toml --no-format --out-dir "$out/kotlin" >/dev/null
# uniffi 0.32's Kotlin lowers what an async foreign method returns when it is a core type
# (Platform.askApproval's Answer, Platform.requestPermission's PermissionState) into the
# RustBuffer class of the type's own package, where the callback's result takes harness_ffi's:
# the same C struct, so it is copied across here, as uniffi already does for a Rust future's
# result (mozilla/uniffi-rs#2630). Fails when a line is gone: then an upgrade fixed it, and this
# goes.
kt="$out/kotlin/edu/pku/harness/harness_ffi.kt"
for returned in Answer PermissionState; do
  lowered="FfiConverterType$returned.lower(returnValue),"
  if [ "$(grep -c "^ *$lowered\$" "$kt")" != 1 ]; then
    echo "gen-bindings.sh: $kt: no single '$lowered' to fix; remove the workaround for $returned" >&2
    exit 1
  fi
  perl -pi -e 's/^( *)\Q'"$lowered"'\E$/$1FfiConverterType'"$returned"'.lower(returnValue).let { RustBuffer.create(it.capacity.toULong(), it.len.toULong(), it.data) },/' "$kt"
done
# UniFFI's Swift command: the same sources and headers as `generate`, and one module map for
# the headers of both components (two module maps would each declare HarnessFFI).
"$target_dir/debug/uniffi-bindgen-swift" --swift-sources --headers --modulemap \
  --module-name HarnessFFI --modulemap-filename HarnessFFI.modulemap \
  --config uniffi.toml "$lib" "$out/swift" >/dev/null
echo "bindings from $lib: $out/kotlin (Kotlin), $out/swift (Swift)"
