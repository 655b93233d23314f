#!/usr/bin/env python3
"""How much of a release library each crate takes: reads the symbol table of an unstripped
.so (`nm -S -C`), attributes every defined symbol's size to a crate, and prints a Markdown table
(largest first) with the share of the stripped file each part takes.

Attribution, by the demangled name:
- a Rust path `krate::…` goes to `krate`; `<T as Trait>::f` goes to T's crate (the code is
  T's), or to the trait's when T is a primitive or a std type;
- generic std code instantiated for a crate's type (`core::ptr::drop_in_place<rmcp::…>`,
  `alloc::vec::Vec<harness_core::…>`) goes to that crate: it is there because of it;
- C and assembly: `sqlite3…` to SQLite, ring's C and assembly (`ring_core_…`, `GFp_…`,
  `ecp_nistz256…`, …) to ring; anything else without a Rust path to "C, other";
- names the build made: UniFFI's exported scaffolding (`uniffi_harness_ffi_…`) to harness_ffi
  (`uniffi_harness_core_…`, for the core's types that cross as they are, to harness_core),
  the machine outliner's `OUTLINED_FUNCTION_…` (opt-level "z") to a row of its own, and a
  v0-mangled standard-library name without a crate in its path (`<str>::to_lowercase`) to std.
What no symbol covers (section headers, unwind tables, string literals, relocations) is the
row "not in a symbol".

C symbols are attributed first by the C libraries the build scripts made (every `*.a` under
BUILD_DIR/*/out, named by its build directory: `libsqlite3-sys`, `ring`), then by the name
patterns above. A second table gives the stripped file's sections: what symbols cannot show
(unwind tables for panic=unwind, relocations of a position-independent library).

    size_table.py LIB.so STRIPPED.so BUILD_DIR [TOP]
"""

import glob
import os
import re
import subprocess
import sys
from collections import Counter

STD = {"core", "alloc", "std", "hashbrown", "__rustc", "compiler_builtins", "std_detect"}
RING_C = re.compile(
    r"^(ring_core_|GFp_|ecp_nistz256|aes_hw_|aes_nohw_|vpaes_|bn_|x25519_|"
    r"ChaCha20_|CRYPTO_|gcm_|sha256_block|sha512_block|LIMBS_|limbs_|chacha20_|poly1305_|"
    r"fiat_|p256_|p384_|nistz256|ecp_)"
)
# A crate is the first segment of a path: an identifier before `::` that does not follow `::`.
PATH = re.compile(r"(?:^|[<\s(&,\[*;{])([A-Za-z_][A-Za-z0-9_]*)::")
PRIMITIVE = re.compile(r"^[&*\[\(]|^(dyn |mut |const |u8|u16|u32|u64|u128|usize|i8|i16|i32|i64|"
                       r"i128|isize|f32|f64|bool|char|str)\b")


def crates_in(name):
    """The crate names in a demangled symbol, in order of appearance."""
    return [c for c in PATH.findall(name) if c != "_"]


def stored_javascript(build_dir):
    """The bytes of JavaScript (the SDK runtime and the validator as QuickJS bytecode, the
    plugins' bundles) and manifests the library holds: what core/build.rs deflated into the
    newest harness-core build directory, and the shipped manifests, stored as text."""
    outs = glob.glob(os.path.join(build_dir, "harness-core-*", "out", "runtime.qjsbc.deflate"))
    if not outs:
        return 0
    out = os.path.dirname(max(outs, key=os.path.getmtime))
    files = glob.glob(os.path.join(out, "**", "*.deflate"), recursive=True)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files += glob.glob(os.path.join(root, "plugins", "*", "manifest.json"))
    return sum(os.path.getsize(f) for f in files)


def c_libraries(build_dir):
    """Symbol name → the crate whose build script compiled it, from the C archives."""
    owners = {}
    for archive in sorted(glob.glob(os.path.join(build_dir, "*", "out", "**", "*.a"), recursive=True)):
        if archive.endswith("_test.a"):
            continue
        crate = os.path.basename(archive.split("/out/")[0]).rsplit("-", 1)[0]
        names = subprocess.run(
            ["nm", "--defined-only", "-j", archive], capture_output=True, text=True
        ).stdout
        for name in names.split():
            if not name.endswith(":"):
                owners.setdefault(name, f"{crate} (C)")
    return owners


def exported(raw):
    """Symbols named by the build rather than by a Rust path: the UniFFI scaffolding's exported
    functions and metadata (the FFI crate's, and the core's for its types that cross as they
    are), and code the outliner shared."""
    if raw.lower().startswith(("uniffi_harness_ffi_", "ffi_harness_ffi_", "uniffi_meta_harness_ffi_")):
        return "harness_ffi"
    if raw.lower().startswith(("uniffi_harness_core_", "ffi_harness_core_", "uniffi_meta_harness_core_")):
        return "harness_core"
    if raw.startswith("OUTLINED_FUNCTION_"):
        # opt-level "z" runs LLVM's machine outliner: runs of instructions shared by many
        # functions, of every crate, moved into one.
        return "outlined (shared by many crates)"
    return None


def crate_of(name):
    if name.startswith("sqlite3"):
        return "libsqlite3-sys (C)"
    if RING_C.match(name):
        return "ring (C)"
    found = crates_in(name)
    if not found:
        return "C, other"
    if name.startswith("<"):
        inner = name[1:]
        target = inner.split(" as ", 1)[0]
        if not PRIMITIVE.match(target):
            own = crates_in(target)
            firsts = [c for c in own if c not in STD]
            if firsts:
                return firsts[0]
    outside = [c for c in found if c not in STD]
    return outside[0] if outside else found[0]


def main():
    lib, stripped, build_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    owners = c_libraries(build_dir)
    # Raw names for the C lookup, demangled ones for Rust paths, line by line alike.
    raw = subprocess.run(
        ["nm", "-S", "--defined-only", lib], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    demangled = subprocess.run(
        ["nm", "-S", "-C", "--defined-only", lib], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    sizes = Counter()
    for line, pretty in zip(raw, demangled):
        parts = line.split(" ", 3)
        if len(parts) < 4 or parts[2].lower() not in "tdrvw":
            continue  # b: zero-initialised data takes no room in the file
        size = int(parts[1], 16)
        owner = owners.get(parts[3]) or exported(parts[3])
        if owner is None:
            owner = crate_of(pretty.split(" ", 3)[3])
            if owner == "C, other" and parts[3].startswith("_R"):
                # A v0-mangled name (the standard library's) without a crate in its path,
                # such as `<str>::to_lowercase`.
                owner = "std"
        sizes[owner] += size

    file_size = os.path.getsize(stripped)
    in_symbols = sum(sizes.values())
    sizes["not in a symbol"] = max(file_size - in_symbols, 0)
    rows = sizes.most_common()
    if top:
        rows = rows[:top]
    print("| part | bytes | KiB | share of the stripped file |")
    print("|---|---:|---:|---:|")
    for crate, size in rows:
        print(f"| {crate} | {size} | {size / 1024:.0f} | {100 * size / file_size:.1f}% |")
    print(f"| **stripped file** | {file_size} | {file_size / 1024:.0f} | 100% |")
    # The TypeScript plugins' engine as a row of its own (its parts are rows above too): QuickJS
    # and its Rust bindings, and the JavaScript the library carries (the SDK runtime and the
    # shipped plugins' bundles and manifests, string data no symbol covers), as stored: deflated
    # by core/build.rs, the files in the newest build directory of harness-core.
    engine = sum(size for crate, size in sizes.items() if crate.startswith("rquickjs"))
    javascript = stored_javascript(build_dir)
    print(f"| *the TypeScript engine: QuickJS and rquickjs* | {engine} | {engine / 1024:.0f} | {100 * engine / file_size:.1f}% |")
    print(f"| *the TypeScript engine: the shipped JavaScript and bytecode, deflated* | {javascript} | {javascript / 1024:.0f} | {100 * javascript / file_size:.1f}% |")
    if top:
        return
    print()
    print("| section | bytes | KiB | share |")
    print("|---|---:|---:|---:|")
    sections = subprocess.run(["size", "-A", stripped], capture_output=True, text=True, check=True)
    listed = []
    for line in sections.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0].startswith(".") and fields[1].isdigit():
            listed.append((int(fields[1]), fields[0]))
    for size, name in sorted(listed, reverse=True)[:8]:
        print(f"| {name} | {size} | {size / 1024:.0f} | {100 * size / file_size:.1f}% |")


if __name__ == "__main__":
    main()
