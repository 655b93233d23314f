#!/usr/bin/env bash
# Builds ios/HarnessFFI.xcframework: the static library for iOS devices (aarch64-apple-ios)
# and for the simulator (aarch64-apple-ios-sim and x86_64-apple-ios, joined with lipo), each
# with the headers HarnessFFI.h and HarnessCoreFFI.h and their one module map; copies the
# generated Harness.swift and HarnessCore.swift into ios/Sources/Harness for the Swift package
# in ios/; generates ios/HarnessApp.xcodeproj from ios/project.yml with XcodeGen; builds the app
# and runs its UI tests (ios/AppUITests) on a simulator.
#
#   scripts/build-ios.sh            everything, UI tests on IOS_SIMULATOR (default iPhone 16)
#   scripts/build-ios.sh framework  only the xcframework and the generated Swift
#   scripts/build-ios.sh device     also builds for a device (set DEVELOPMENT_TEAM for signing)
#
# Needs macOS with Xcode 16+ (xcodebuild, xcrun, lipo) and XcodeGen. Stops before building
# anything, naming what is missing, with exit status 2.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-all}"
case "$mode" in
  all | framework | device) ;;
  *)
    echo "build-ios.sh: unknown argument '$mode': use framework, device, or nothing" >&2
    exit 2
    ;;
esac

missing() {
  echo "build-ios.sh: $*" >&2
  exit 2
}
fail() {
  echo "build-ios.sh: $*" >&2
  exit 1
}

absent=()
if [ "$(uname -s)" != Darwin ]; then
  absent+=("macOS (this machine runs $(uname -s))")
fi
command -v xcodebuild >/dev/null 2>&1 || absent+=("xcodebuild (install Xcode 16+ and run xcode-select -s /Applications/Xcode.app)")
command -v xcrun >/dev/null 2>&1 || absent+=("xcrun (Xcode's command line tools)")
command -v lipo >/dev/null 2>&1 || absent+=("lipo (Xcode's command line tools)")
if [ "$mode" != framework ]; then
  command -v xcodegen >/dev/null 2>&1 || absent+=("xcodegen (brew install xcodegen)")
fi
command -v cargo >/dev/null 2>&1 || absent+=("cargo (install Rust with rustup, https://rustup.rs)")
if [ ${#absent[@]} -gt 0 ]; then
  printf -v list '\n  - %s' "${absent[@]}"
  missing "cannot build the iOS app here; missing:$list"
fi
xcodebuild -version >/dev/null 2>&1 || fail "xcodebuild does not run (only the Command Line Tools are selected?): install Xcode and run xcode-select -s /Applications/Xcode.app"

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
cp "$swift/HarnessFFI.h" "$swift/HarnessCoreFFI.h" "$out/headers/"
cp "$swift/HarnessFFI.modulemap" "$out/headers/module.modulemap"
lipo -create \
  "$target_dir/aarch64-apple-ios-sim/release/libharness_ffi.a" \
  "$target_dir/x86_64-apple-ios/release/libharness_ffi.a" \
  -output "$out/simulator/libharness_ffi.a"
xcodebuild -create-xcframework \
  -library "$target_dir/aarch64-apple-ios/release/libharness_ffi.a" -headers "$out/headers" \
  -library "$out/simulator/libharness_ffi.a" -headers "$out/headers" \
  -output ios/HarnessFFI.xcframework
cp "$swift/Harness.swift" "$swift/HarnessCore.swift" ios/Sources/Harness/
echo "ios/HarnessFFI.xcframework and ios/Sources/Harness/{Harness,HarnessCore}.swift are ready"
[ "$mode" = framework ] && exit 0

xcodegen generate --spec ios/project.yml --project ios
simulator="${IOS_SIMULATOR:-iPhone 16}"
xcrun simctl list devices available | grep -q "$simulator (" ||
  fail "no simulator named '$simulator': create one in Xcode (Window → Devices and Simulators) or set IOS_SIMULATOR"
xcodebuild -project ios/HarnessApp.xcodeproj -scheme HarnessApp \
  -destination "platform=iOS Simulator,name=$simulator" test
if [ "$mode" = device ]; then
  [ -n "${DEVELOPMENT_TEAM:-}" ] || fail "DEVELOPMENT_TEAM is not set: set it to your Apple team id to sign for a device"
  xcodebuild -project ios/HarnessApp.xcodeproj -scheme HarnessApp -destination generic/platform=iOS \
    DEVELOPMENT_TEAM="$DEVELOPMENT_TEAM" build
fi
echo "the iOS app is built and its UI tests passed on $simulator"
