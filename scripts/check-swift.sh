#!/usr/bin/env bash
# Checks the Swift side without a Swift compiler: generates the Swift bindings, then
#  - parses the generated Harness.swift and HarnessCore.swift, ios/Package.swift and every
#    hand-written file under ios/Sources with tree-sitter-swift (PyPI), allowing only the
#    grammar's two known misreads of valid UniFFI output (see scripts/lib/check_swift.py), and
#  - runs `gcc -fsyntax-only` on the generated C headers HarnessFFI.h and HarnessCoreFFI.h
#    together, as the one C module HarnessFFI includes them, and
#  - checks that the SwiftUI app and its widget extension (ios/App/Sources, ios/Widget/Sources,
#    ios/Shared) read every field of every screen model in
#    the generated bindings (HarnessCore.swift: the screen models are the core's types), except
#    those listed in ios/App/fields-not-shown.txt
#    (scripts/lib/check_swift_fields.py).
# Installs tree-sitter into a virtualenv under the tools directory when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/host-tools.sh

TREE_SITTER_VERSION=0.26.1
TREE_SITTER_SWIFT_VERSION=0.7.4

require_command cargo "install Rust with rustup (https://rustup.rs)"
require_command python3 "install Python 3"
require_command gcc "install gcc (apt-get install gcc)"

venv="$HARNESS_TOOLS_DIR/tree-sitter-$TREE_SITTER_VERSION-swift-$TREE_SITTER_SWIFT_VERSION"
if ! "$venv/bin/python" -c "import tree_sitter, tree_sitter_swift" 2>/dev/null; then
  echo "installing tree-sitter $TREE_SITTER_VERSION and tree-sitter-swift $TREE_SITTER_SWIFT_VERSION from PyPI into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "tree-sitter==$TREE_SITTER_VERSION" "tree-sitter-swift==$TREE_SITTER_SWIFT_VERSION"
fi

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
scripts/gen-bindings.sh "$target_dir/bindings" >/dev/null
swift_dir="$target_dir/bindings/swift"

mapfile -t sources < <(find ios -name '*.swift' | sort)
"$venv/bin/python" scripts/lib/check_swift.py "$swift_dir/Harness.swift" "$swift_dir/HarnessCore.swift" "${sources[@]}"

# The headers are written for clang: gcc does not know their nullability qualifiers.
printf '#include "HarnessFFI.h"\n#include "HarnessCoreFFI.h"\n' |
  gcc -fsyntax-only -Wall -Werror -D_Nonnull= -D_Nullable= -D_Null_unspecified= -I "$swift_dir" -x c -
echo "$swift_dir/HarnessFFI.h, HarnessCoreFFI.h: gcc -fsyntax-only passed"

python3 scripts/lib/check_swift_fields.py "$swift_dir/HarnessCore.swift" ios/App/fields-not-shown.txt \
  ios/App/Sources ios/Widget/Sources ios/Shared
echo "swift check passed"
