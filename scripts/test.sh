#!/usr/bin/env bash
# Every test of the project: the Rust workspace (unit, integration, property tests), then the
# conformance scenarios through the `harness` binary. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  echo "test.sh: cargo is not installed; install Rust with rustup (https://rustup.rs) and run again" >&2
  exit 1
fi

cargo test --workspace --locked

scenarios=(core/tests/conformance)
# The shared examples sit beside the checkout when there is one.
if [ -d ../shared/conformance/examples ]; then
  scenarios+=(../shared/conformance/examples)
fi
cargo run --quiet --locked -p harness-cli -- conformance "${scenarios[@]}"
