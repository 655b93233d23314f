# Sourced by scripts/build-android-app.sh: builds libharness_ffi.so for the APK's ABIs, with the
# Cargo profile CORE_PROFILE (release unless set: the shipped APK's; android-test for the APK
# scripts/test.sh checks, see Cargo.toml).
#
#   build_core_libraries OUT_DIR ABI…   writes OUT_DIR/<abi>/libharness_ffi.so, stripped; sets
#                                       CORE_LIB_HOW (how it was linked) or, when it could not be
#                                       built, CORE_LIB_MISSING (why) and writes nothing
#
# With ANDROID_NDK_HOME: cargo-ndk and the NDK, as scripts/build-android.sh. Without it: the
# Rust target's standard library, clang and Debian's ld.lld through scripts/lib/ndkless-link.sh
# (stub system libraries with Android's sonames and the symbols used, LLVM's libunwind from
# Rust's musl target linked in, a shim for the glibc names of the C parts), then checked:
# NEEDED libc.so, no undefined _Unwind_* symbol, and no glibc-only name left undefined (bionic's
# own symbol list is not at hand without the NDK, so the check is against the names glibc's
# headers are known to produce).
source scripts/lib/android-link.sh

ANDROID_API=26
CORE_PROFILE="${CORE_PROFILE:-release}"

abi_triple() {
  case "$1" in
    arm64-v8a) echo aarch64-linux-android ;;
    x86_64) echo x86_64-linux-android ;;
    *) echo "unknown ABI $1" >&2; return 1 ;;
  esac
}

# The glibc-only names a library compiled against glibc's headers may still ask for; each would
# make Android's loader refuse the library.
GLIBC_ONLY='^(__errno_location|__assert_fail|__ctype_(b|tolower|toupper)_loc|__isoc99_.*|__isoc23_.*|__xpg_.*|__fxstat.*|__xstat.*|__lxstat.*|__libc_.*|fcntl64|__stack_chk_guard@.*|gnu_get_libc_version|__cxa_thread_atexit_impl@GLIBC.*|.*@GLIBC.*)$'

build_core_libraries() {
  local out="$1"
  shift
  CORE_LIB_HOW="" CORE_LIB_MISSING=""
  local target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
  local link_flags="$ANDROID_LINK_RUSTFLAGS"
  if [ "$CORE_PROFILE" = release ]; then
    cargo fetch --locked
    link_flags="$ANDROID_RELEASE_LINK_RUSTFLAGS $(android_release_path_rustflags)"
  fi
  if [ -n "${ANDROID_NDK_HOME:-}" ]; then
    command -v cargo-ndk >/dev/null 2>&1 || { CORE_LIB_MISSING="ANDROID_NDK_HOME is set but cargo-ndk is not installed (cargo install cargo-ndk)"; return 0; }
    local abi targets=()
    for abi in "$@"; do
      rustup target add "$(abi_triple "$abi")" >/dev/null
      targets+=(-t "$abi")
      export "CARGO_TARGET_$(abi_triple "$abi" | tr 'a-z-' 'A-Z_')_RUSTFLAGS=$link_flags"
    done
    cargo ndk --platform "$ANDROID_API" "${targets[@]}" -o "$out" build --locked --profile "$CORE_PROFILE" -p harness-ffi --lib
    CORE_LIB_HOW="the Android NDK ($ANDROID_NDK_HOME) through cargo-ndk"
  else
    ensure_debian_packages clang lld libclang-dev libc6-dev-arm64-cross
    local abi
    for abi in "$@"; do
      if ! build_ndkless "$out" "$abi" "$target_dir"; then
        rm -rf "$out"
        return 0
      fi
    done
    CORE_LIB_HOW="no NDK: clang and Debian's ld.lld against generated stub libc/libm/libdl/liblog.so (Android's sonames, the symbols used), LLVM's libunwind from Rust's musl target linked in, C parts compiled against glibc's headers with a shim (scripts/lib/bionic-shim.c)"
  fi
  local lib
  for lib in "$out"/*/libharness_ffi.so; do
    llvm-strip --strip-unneeded "$lib" 2>/dev/null || strip --strip-unneeded "$lib" 2>/dev/null || true
  done
}

# build_ndkless OUT ABI TARGET_DIR: returns non-zero with CORE_LIB_MISSING set when it cannot.
build_ndkless() {
  local out="$1" abi="$2" target_dir="$3" triple
  triple="$(abi_triple "$abi")"
  local musl="${triple%%-*}-unknown-linux-musl"
  local installed
  installed="$(rustup target list --installed)"
  local t
  for t in "$triple" "$musl"; do
    grep -qx "$t" <<<"$installed" || rustup target add "$t" >/dev/null || {
      CORE_LIB_MISSING="rustup could not add the target $t"
      return 1
    }
  done
  local work="$target_dir/ndkless/$triple"
  mkdir -p "$work"
  local sysroot
  sysroot="$(rustc --print sysroot)"
  cp "$sysroot/lib/rustlib/$musl/lib/self-contained/libunwind.a" "$work/libunwind.a" || {
    CORE_LIB_MISSING="Rust's $musl target has no self-contained libunwind.a"
    return 1
  }
  # glibc's headers for the C parts: the cross package's for arm64, the host's for x86_64.
  local cflags="--target=$triple$ANDROID_API -fPIC -Dsysconf=pku_glibc_sysconf"
  # bindgen reads QuickJS's header (rquickjs has no bindings for Android) against the same.
  local bindgen_args
  case "$triple" in
    aarch64-*)
      cflags="$cflags --sysroot=/usr/aarch64-linux-gnu"
      bindgen_args="--sysroot=/usr/aarch64-linux-gnu"
      ;;
    x86_64-*)
      cflags="$cflags -isystem /usr/include/x86_64-linux-gnu -isystem /usr/include"
      bindgen_args="-isystem /usr/include/x86_64-linux-gnu -isystem /usr/include"
      ;;
  esac
  # shellcheck disable=SC2086 # the flags are words
  clang ${cflags/-Dsysconf=pku_glibc_sysconf/} -O2 -c scripts/lib/bionic-shim.c -o "$work/bionic-shim.o"
  local env_triple
  env_triple="$(tr 'a-z-' 'A-Z_' <<<"$triple")"
  local log="$work/cargo.log"
  if ! env "CARGO_TARGET_${env_triple}_LINKER=$PWD/scripts/lib/ndkless-link.sh" \
    "CARGO_TARGET_${env_triple}_RUSTFLAGS=$link_flags" \
    "CC_${triple//-/_}=clang" "CFLAGS_${triple//-/_}=$cflags" "AR_${triple//-/_}=ar" \
    "BINDGEN_EXTRA_CLANG_ARGS_${triple//-/_}=$bindgen_args" \
    NDKLESS_DIR="$work" NDKLESS_TARGET="$triple$ANDROID_API" \
    cargo build --quiet --locked --profile "$CORE_PROFILE" -p harness-ffi --lib --target "$triple" >"$log" 2>&1; then
    tail -30 "$log" >&2
    CORE_LIB_MISSING="linking libharness_ffi.so for $triple without the NDK failed (log: $log)"
    return 1
  fi
  local lib="$target_dir/$triple/$CORE_PROFILE/libharness_ffi.so"
  # The checks that tell a library Android's loader takes from one it refuses.
  local needed undefined
  needed="$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  undefined="$(readelf --dyn-syms -W "$lib" | awk '$7 == "UND" && $8 != "" { print $8 }')"
  if ! grep -qw 'libc.so' <<<"$needed"; then
    CORE_LIB_MISSING="the $triple library names no libc.so (NEEDED: $needed)"
    return 1
  fi
  if grep -q '^_Unwind_' <<<"$undefined"; then
    CORE_LIB_MISSING="the $triple library leaves $(grep -c '^_Unwind_' <<<"$undefined") _Unwind_* symbols undefined"
    return 1
  fi
  local glibc
  glibc="$(grep -E "$GLIBC_ONLY" <<<"$undefined" | tr '\n' ' ' || true)"
  if [ -n "$glibc" ]; then
    CORE_LIB_MISSING="the $triple library asks for glibc-only symbols bionic lacks: $glibc"
    return 1
  fi
  echo "  $abi: NEEDED $needed; $(wc -l <<<"$undefined") symbols from them, none _Unwind_*, none glibc-only"
  mkdir -p "$out/$abi"
  cp "$lib" "$out/$abi/libharness_ffi.so"
}
