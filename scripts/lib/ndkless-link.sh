#!/usr/bin/env bash
# The linker rustc runs for an Android target when there is no NDK (scripts/lib/android-core-lib.sh
# sets it as CARGO_TARGET_<TRIPLE>_LINKER): clang drives Debian's ld.lld, with
#  - NDKLESS_DIR/libunwind.a: LLVM's libunwind from Rust's musl target, linked in as the NDK links
#    its own (Android has no public unwinder), so that no _Unwind_* symbol is left to the phone;
#  - NDKLESS_DIR/bionic-shim.o: the few glibc names the C parts and the unwinder use, in bionic's
#    terms (scripts/lib/bionic-shim.c);
#  - stub libc.so, libm.so, libdl.so, liblog.so that carry Android's sonames and exactly the
#    symbols this library takes from them, generated here: a first link (against empty stubs)
#    names the symbols left undefined, and the second links against stubs that define them, so
#    that each is bound to a NEEDED library as the NDK's stubs would bind it.
# Arguments: what rustc passes a gcc-style linker. NDKLESS_TARGET is clang's target
# (e.g. aarch64-linux-android26).
set -euo pipefail
: "${NDKLESS_DIR:?}" "${NDKLESS_TARGET:?}"

output=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [ "${args[$i]}" = "-o" ] && output="${args[$((i + 1))]}"
done
[ -n "$output" ] || { echo "ndkless-link.sh: no -o among the linker's arguments" >&2; exit 1; }

stubs="$NDKLESS_DIR/stubs"
link() { # STUB_DIR
  clang --target="$NDKLESS_TARGET" -fuse-ld=lld -nostdlib -L"$1" -L"$NDKLESS_DIR" "${args[@]}" \
    "$NDKLESS_DIR/bionic-shim.o" -Wl,-soname,"$(basename "$output")"
}

stub_lib() { # DIR NAME [C source]
  clang --target="$NDKLESS_TARGET" -shared -nostdlib -fuse-ld=lld -fPIC -w -fno-builtin -Wl,-soname,"$2" -o "$1/$2" -x c "${3:-/dev/null}"
}

# Pass 1: empty stubs (the sonames only), to learn what the library needs from the system.
empty="$NDKLESS_DIR/empty-stubs"
mkdir -p "$empty"
for lib in libc.so libm.so libdl.so liblog.so; do
  [ -f "$empty/$lib" ] || stub_lib "$empty" "$lib"
done
link "$empty"

# Each undefined (not weak) dynamic symbol, with its type, into the library bionic exports it from.
rm -rf "$stubs"
mkdir -p "$stubs"
readelf --dyn-syms -W "$output" | awk '$7 == "UND" && $5 == "GLOBAL" && $8 != "" { print $4, $8 }' | sed 's/@.*//' | sort -u |
  while read -r type name; do
    case "$name" in
      __android_log_*) lib=liblog ;;
      dlopen | dlclose | dlsym | dlerror | dladdr | dlvsym | dl_iterate_phdr | android_dlopen_ext) lib=libdl ;;
      *) if grep -qE '^(a?(sin|cos|tan)h?|atan2|exp|exp2|expm1|log|log10|log1p|log2|pow|sqrt|cbrt|hypot|fmod|floor|ceil|round|trunc|rint|lrint|llrint|lround|llround|fma|fmin|fmax|fdim|frexp|ldexp|modf|nextafter|remainder|copysign|scalbn|erf|erfc|lgamma|tgamma|nearbyint)[fl]?$' <<<"$name"; then lib=libm; else lib=libc; fi ;;
    esac
    if [ "$type" = OBJECT ]; then echo "char $name[8];" >>"$stubs/$lib.c"; else echo "void $name(void) {}" >>"$stubs/$lib.c"; fi
  done
for lib in libc libm libdl liblog; do
  touch "$stubs/$lib.c"
  stub_lib "$stubs" "$lib.so" "$stubs/$lib.c"
done

# Pass 2: the same link against stubs that define what it needs.
link "$stubs"
