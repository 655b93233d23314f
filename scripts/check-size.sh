#!/usr/bin/env bash
# The size of the shipped library: builds the release cdylib (opt-level "s", LTO, one codegen
# unit) for the host and for aarch64-unknown-linux-gnu (a stand-in for Android's arm64-v8a .so
# when no NDK is here: same architecture, same code; Android's libc differs), strips a copy of
# each (the unstripped one stays for uniffi-bindgen), prints both sizes and the ten largest
# parts of the aarch64 library (scripts/lib/size_table.py: symbols attributed to crates), and
# fails when a stripped library is over the budget. `--write-doc` also rewrites the full table
# in docs/size.md. Slow on two cores (LTO); not part of the default tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/host-tools.sh

# Budget for one stripped library, in bytes: 6 MiB for aarch64 with the agent and the MCP
# client in (what a student downloads with the app; docs/size.md has where it goes). History:
# 8 MiB (the top of Firefox's Rust components for arm64) held the core without the agent
# (7.58 MiB on 2026-11-30); the agent's provider, rmcp and YAML took it to 10.46 MiB.
BUDGET_BYTES=$((6 * 1024 * 1024))

require_command cargo "install Rust with rustup (https://rustup.rs)"
require_command rustup "install Rust with rustup (https://rustup.rs)"
ensure_debian_packages gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu
rustup target list --installed | grep -qx aarch64-unknown-linux-gnu || rustup target add aarch64-unknown-linux-gnu

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
host="$(rustc -vV | sed -n 's/^host: //p')"

echo "building the release cdylib for $host"
cargo rustc --quiet --locked --release -p harness-ffi --lib --crate-type cdylib
echo "building the release cdylib for aarch64-unknown-linux-gnu"
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc \
  cargo rustc --quiet --locked --release -p harness-ffi --lib --crate-type cdylib --target aarch64-unknown-linux-gnu

out="$target_dir/size"
mkdir -p "$out"
over=0
report() { # name unstripped strip-tool
  local name="$1" lib="$2" strip_tool="$3"
  local stripped="$out/$name-libharness_ffi.so"
  cp "$lib" "$stripped"
  "$strip_tool" "$stripped"
  local full small
  full=$(stat -c %s "$lib")
  small=$(stat -c %s "$stripped")
  printf '%-28s unstripped %10d bytes (%5.2f MiB)   stripped %10d bytes (%5.2f MiB)\n' \
    "$name" "$full" "$(awk "BEGIN{print $full/1048576}")" "$small" "$(awk "BEGIN{print $small/1048576}")"
  if [ "$small" -gt "$BUDGET_BYTES" ]; then
    echo "  over the budget of $BUDGET_BYTES bytes by $((small - BUDGET_BYTES)) bytes" >&2
    over=1
  fi
}
report "$host" "$target_dir/release/libharness_ffi.so" strip
report aarch64-unknown-linux-gnu "$target_dir/aarch64-unknown-linux-gnu/release/libharness_ffi.so" aarch64-linux-gnu-strip
aarch64_dir="$target_dir/aarch64-unknown-linux-gnu/release"
echo "the ten largest parts of the aarch64 library:"
python3 scripts/lib/size_table.py "$aarch64_dir/libharness_ffi.so" "$out/aarch64-unknown-linux-gnu-libharness_ffi.so" "$aarch64_dir/build" 10
if [ "${1:-}" = "--write-doc" ]; then
  python3 scripts/lib/size_table.py "$aarch64_dir/libharness_ffi.so" "$out/aarch64-unknown-linux-gnu-libharness_ffi.so" "$aarch64_dir/build" \
    > "$target_dir/size/table.md"
  python3 - "$target_dir/size/table.md" <<'PY'
import re, sys
table = open(sys.argv[1]).read()
doc = open("docs/size.md").read()
start, end = "<!-- table: scripts/check-size.sh --write-doc -->", "<!-- end of table -->"
before, rest = doc.split(start, 1)
after = rest.split(end, 1)[1]
open("docs/size.md", "w").write(before + start + "\n" + table + end + after)
PY
  echo "docs/size.md: table rewritten"
fi
echo "budget: $BUDGET_BYTES bytes (6 MiB) per stripped library"
exit "$over"
