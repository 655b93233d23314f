#!/usr/bin/env bash
# Every test of the project, in one command; exits non-zero on any failure. It installs what it
# lacks (Debian packages, the Kotlin compiler from npm, Compose Multiplatform from Maven Central,
# tree-sitter from PyPI, Rust targets).
#  0. cargo fmt --check and cargo clippy -D warnings over the whole workspace; no uniffi in the
#     core's or the CLI's own build; the TypeScript plugins type-checked and their committed
#     bundles rebuilt and compared (scripts/check-bundles.sh; npm packages into sdk/node_modules)
#  1. the Rust workspace: unit, integration, property, crash and FFI tests; the cloud server's
#     tests again against a real PostgreSQL (scripts/test-cloud-postgres.sh)
#  2. cargo check of the FFI crate for aarch64-linux-android and aarch64-apple-ios
#  3. a syntax check of the generated and hand-written Swift and of the C header
#  4. the Kotlin tests on the host JVM against the real library
#  5. the shared Compose screens (android/ui) under test on the desktop JVM, headless, against
#     the real library; screenshots in target/screenshots (its last line: N passed, N failed)
#  6. the Android app: the signed APK without Gradle, with its arm64-v8a core library (a cheaper
#     Cargo profile than the shipped APK's, below), and the app's journeys under Robolectric
#     against the real host library (its last line: N passed, N failed); that library's size
#     against the budget (scripts/check-size.sh --test-profile)
#  7. the conformance scenarios through the `harness` binary (its last line: N passed, N failed)
set -euo pipefail
cd "$(dirname "$0")/.."

# A fresh clone builds everything once: without incremental state its target dir is gigabytes
# smaller (this suite fails when the disk fills). A work tree that already keeps incremental
# state keeps using it, so its warm runs rebuild nothing.
if [ -z "${CARGO_INCREMENTAL:-}" ] && [ ! -d "${CARGO_TARGET_DIR:-target}/debug/incremental" ]; then
  export CARGO_INCREMENTAL=0
fi
echo "test.sh: $(df -h --output=avail . | tail -1 | tr -d ' ') free on the disk of $PWD at the start"

if ! command -v cargo >/dev/null 2>&1; then
  echo "test.sh: cargo is not installed; install Rust with rustup (https://rustup.rs) and run again" >&2
  exit 1
fi

# Habits first: formatting and lints are part of the build (rustfmt.toml, clippy clean).
if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

# STYLE.md §1: the core and the CLI build without uniffi; only harness-ffi turns on harness-core's
# `uniffi` feature (the derives of the types that cross the FFI as they are).
for crate in harness-core harness-cli; do
  if cargo tree --locked -p "$crate" -e normal | grep -qi uniffi; then
    echo "test.sh: $crate depends on uniffi (cargo tree -p $crate -e normal): only harness-ffi may turn on harness-core's uniffi feature" >&2
    exit 1
  fi
done

# The bundles the core ships and its tests load are built from TypeScript; a stale one fails here,
# named, before anything runs it.
scripts/check-bundles.sh

# The remote-plugin tests talk to a real MCP server (core/tests/mcp_remote.rs), pinned here.
mcp_prefix="${HOME}/.cache/pku-harness/mcp"
mcp_server="${mcp_prefix}/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if [ ! -f "$mcp_server" ]; then
  npm install --prefix "$mcp_prefix" @modelcontextprotocol/server-everything@2026.8.31
fi
export PKU_HARNESS_MCP_EVERYTHING="$mcp_server"
cargo test --workspace --locked
# The PKU harness Cloud's tests once more against a real PostgreSQL (Debian's, started on a loopback
# port in a temporary directory); the workspace run above covers its SQLite backend.
scripts/test-cloud-postgres.sh
scripts/check-targets.sh
scripts/check-swift.sh
scripts/test-kotlin-host.sh
scripts/test-compose-desktop.sh
# The signed APK with its arm64-v8a core library (the phones' ABI only; x86_64, for emulators, is
# what build-android-app.sh adds by default), built with Cargo's android-test profile: the
# shipped release build's LTO takes ~29 min cold on two cores, and every CI run starts from a
# fresh clone. Then the app's journeys under Robolectric (its last line: N passed, N failed).
PKU_ANDROID_ABIS=arm64-v8a scripts/build-android-app.sh --require-native --test-profile
# The library's size budget (10 MiB stripped for the release build) guarded on that library:
# 1.98 times the budget for the android-test profile (scripts/check-size.sh, docs/size.md).
scripts/check-size.sh --test-profile
scripts/test-android-robolectric.sh

scenarios=(conformance/scenarios)
# The shared examples sit beside the checkout when there is one.
if [ -d ../shared/conformance/examples ]; then
  scenarios+=(../shared/conformance/examples)
fi
cargo run --quiet --locked -p harness-cli -- conformance "${scenarios[@]}"
