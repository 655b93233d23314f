#!/usr/bin/env bash
# Builds ios/HarnessFFI.xcframework: the static library for iOS devices (aarch64-apple-ios)
# and for the simulator (aarch64-apple-ios-sim and x86_64-apple-ios, joined with lipo), each
# with HarnessFFI.h and its module map; then copies the generated Harness.swift into
# ios/Sources/Harness for the Swift package in ios/.
#
# Needs macOS with Xcode (xcodebuild, lipo). Fails before building anything without them.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "build-ios.sh: $*" >&2
  exit 1
}

if [ "$(uname -s)" != Darwin ]; then
  fail "xcodebuild is not available: building the iOS xcframework needs macOS with Xcode (this machine runs $(uname -s)); run this script on a Mac"
fi
command -v xcodebuild >/dev/null 2>&1 || fail "xcodebuild not found: install Xcode and select it with xcode-select -s /Applications/Xcode.app"
xcodebuild -version >/dev/null 2>&1 || fail "xcodebuild does not run (only the Command Line Tools are selected?): install Xcode and run xcode-select -s /Applications/Xcode.app"
command -v lipo >/dev/null 2>&1 || fail "lipo not found: install Xcode's command line tools"
command -v cargo >/dev/null 2>&1 || fail "cargo is not installed; install Rust with rustup (https://rustup.rs)"

targets=(aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios)
rustup target add "${targets[@]}" >/dev/null
for target in "${targets[@]}"; do
  cargo build --locked --release -p harness-ffi --lib --target "$target"
done

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
scripts/gen-bindings.sh --release "$target_dir/bindings"
swift="$target_dir/bindings/swift"

out="$target_dir/ios"
rm -rf "$out" ios/HarnessFFI.xcframework
mkdir -p "$out/headers" "$out/simulator"
cp "$swift/HarnessFFI.h" "$out/headers/"
cp "$swift/HarnessFFI.modulemap" "$out/headers/module.modulemap"
lipo -create \
  "$target_dir/aarch64-apple-ios-sim/release/libharness_ffi.a" \
  "$target_dir/x86_64-apple-ios/release/libharness_ffi.a" \
  -output "$out/simulator/libharness_ffi.a"
xcodebuild -create-xcframework \
  -library "$target_dir/aarch64-apple-ios/release/libharness_ffi.a" -headers "$out/headers" \
  -library "$out/simulator/libharness_ffi.a" -headers "$out/headers" \
  -output ios/HarnessFFI.xcframework
cp "$swift/Harness.swift" ios/Sources/Harness/Harness.swift
echo "ios/HarnessFFI.xcframework and ios/Sources/Harness/Harness.swift are ready; open ios/Package.swift in Xcode"
