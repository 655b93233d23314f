#!/usr/bin/env bash
# Builds the Android libraries with cargo-ndk: libharness_ffi.so for arm64-v8a, armeabi-v7a
# and x86_64 into android/core/src/main/jniLibs, linked for 16 KB pages with packed relocations;
# then generates the Kotlin bindings into android/core/build/generated/uniffi/kotlin, where the
# :core module (android/core/build.gradle.kts) reads them. The .so files keep their symbols
# (the Android Gradle plugin strips them when it packages the app).
#
# Needs the Android NDK (ANDROID_NDK_HOME) and cargo-ndk (cargo install cargo-ndk). Fails
# before building anything when either is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "build-android.sh: $*" >&2
  exit 1
}

if [ -z "${ANDROID_NDK_HOME:-}" ]; then
  fail "ANDROID_NDK_HOME is not set: install the Android NDK (r27 or later, e.g. with Android Studio's SDK Manager or sdkmanager \"ndk;27.2.12479018\") and set ANDROID_NDK_HOME to its directory"
fi
if [ ! -d "$ANDROID_NDK_HOME/toolchains/llvm/prebuilt" ]; then
  fail "ANDROID_NDK_HOME=$ANDROID_NDK_HOME does not hold an Android NDK (no toolchains/llvm/prebuilt); point it at the NDK's directory"
fi
command -v cargo >/dev/null 2>&1 || fail "cargo is not installed; install Rust with rustup (https://rustup.rs)"
command -v cargo-ndk >/dev/null 2>&1 || fail "cargo-ndk is not installed; run: cargo install cargo-ndk"

rustup target add aarch64-linux-android armv7-linux-androideabi x86_64-linux-android >/dev/null

# The release library's link and paths, as scripts/check-size.sh measures it
# (scripts/lib/android-link.sh: 16 KB pages, packed relocations, identical code folded, source
# paths without the build machine's; the NDK links with lld).
source scripts/lib/android-link.sh
cargo fetch --locked
release_rustflags="$ANDROID_RELEASE_LINK_RUSTFLAGS $(android_release_path_rustflags)"
export CARGO_TARGET_AARCH64_LINUX_ANDROID_RUSTFLAGS="$release_rustflags"
export CARGO_TARGET_ARMV7_LINUX_ANDROIDEABI_RUSTFLAGS="$release_rustflags"
export CARGO_TARGET_X86_64_LINUX_ANDROID_RUSTFLAGS="$release_rustflags"

cargo ndk --platform "${ANDROID_PLATFORM:-26}" -t arm64-v8a -t armeabi-v7a -t x86_64 \
  -o android/core/src/main/jniLibs build --locked --release -p harness-ffi --lib

scripts/gen-bindings.sh --release android/core/build/generated/uniffi
echo "Android libraries in android/core/src/main/jniLibs; Kotlin bindings in android/core/build/generated/uniffi/kotlin"
