#!/usr/bin/env bash
# Type-checks harness-ffi for the phones without their toolchains:
#   cargo check -p harness-ffi --target aarch64-linux-android
#   cargo check -p harness-ffi --target aarch64-apple-ios
# C code in dependencies (ring, bundled SQLite) is compiled even by `cargo check`; with no NDK
# and no Xcode here, Debian's clang compiles it for the target:
#  - Android: clang --target=aarch64-linux-android against Debian's arm64 glibc headers
#    (libc6-dev-arm64-cross); good enough to type-check, never to ship.
#  - iOS: clang without a sysroot in ring's own no-sysroot mode (-nostdlibinc
#    -DRING_CORE_NOSTDLIBINC=1) plus a stub TargetConditionals.h, and SDKROOT pointing at an
#    empty directory so that the cc crate does not ask xcrun for an SDK. Enough for ring; on
#    iOS SQLite is the SDK's own libsqlite3 (core/Cargo.toml), so no SQLite C is compiled.
#    QuickJS's C needs a C library's headers: a wrapper compiler compiles those files (and
#    bindgen reads quickjs.h) as aarch64 Linux against Debian's arm64 headers — the same
#    architecture and type sizes, good enough to type-check.
# rquickjs has no pre-generated bindings for either phone, so bindgen runs (libclang).
# Installs clang, libclang-dev and libc6-dev-arm64-cross when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/host-tools.sh

require_command cargo "install Rust with rustup (https://rustup.rs)"
require_command rustup "install Rust with rustup (https://rustup.rs)"
ensure_debian_packages clang libclang-dev libc6-dev-arm64-cross

installed="$(rustup target list --installed)"
for target in aarch64-linux-android aarch64-apple-ios; do
  grep -qx "$target" <<<"$installed" || rustup target add "$target"
done

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
stubs="$target_dir/check-targets"
mkdir -p "$stubs/ios-include" "$stubs/empty-sdk"
cat >"$stubs/ios-include/TargetConditionals.h" <<'H'
/* Stand-in for the iOS SDK's TargetConditionals.h, for cargo check only. */
#define TARGET_OS_MAC 1
#define TARGET_OS_OSX 0
#define TARGET_OS_IPHONE 1
#define TARGET_OS_IOS 1
#define TARGET_OS_SIMULATOR 0
H

echo "cargo check -p harness-ffi --target aarch64-linux-android"
CC_aarch64_linux_android=clang \
CFLAGS_aarch64_linux_android="--target=aarch64-linux-android --sysroot=/usr/aarch64-linux-gnu" \
BINDGEN_EXTRA_CLANG_ARGS_aarch64_linux_android="--sysroot=/usr/aarch64-linux-gnu" \
  cargo check --quiet --locked -p harness-ffi --target aarch64-linux-android

cat >"$stubs/ios-cc" <<'SH'
#!/usr/bin/env bash
# QuickJS's sources as aarch64 Linux against Debian's arm64 headers (no iOS SDK here); the
# rest (ring) as the iOS target in ring's no-sysroot mode.
for arg in "$@"; do
  case "$arg" in
    *rquickjs-sys*)
      args=()
      for a in "$@"; do [ "$a" = -nostdlibinc ] || [ "$a" = -DRING_CORE_NOSTDLIBINC=1 ] || args+=("$a"); done
      exec clang "${args[@]}" --target=aarch64-linux-gnu --sysroot=/usr/aarch64-linux-gnu ;;
  esac
done
exec clang "$@"
SH
chmod +x "$stubs/ios-cc"

echo "cargo check -p harness-ffi --target aarch64-apple-ios"
SDKROOT="$stubs/empty-sdk" \
CC_aarch64_apple_ios="$stubs/ios-cc" \
CFLAGS_aarch64_apple_ios="-nostdlibinc -DRING_CORE_NOSTDLIBINC=1 -isystem $stubs/ios-include" \
BINDGEN_EXTRA_CLANG_ARGS_aarch64_apple_ios="--target=aarch64-unknown-linux-gnu --sysroot=/usr/aarch64-linux-gnu" \
  cargo check --quiet --locked -p harness-ffi --target aarch64-apple-ios

echo "target checks passed"
