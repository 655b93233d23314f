# How the Android libraries are linked; sourced by build-android.sh, and by check-size.sh, which
# links its aarch64 stand-in the same way so that it measures what a phone downloads.
#
# - 16 KB pages: required for new apps on Android 15+ devices.
# - Relative relocations packed in Android's own format (APS2; the dynamic linker reads it from
#   API 23, and the app's minSdk is 26): 1.1 MB of .rela.dyn becomes 0.14 MB. The standard RELR
#   packing would save 0.12 MB more but needs API 28 (android+relr) or 30 (relr).
ANDROID_LINK_RUSTFLAGS="-C link-arg=-Wl,-z,max-page-size=16384 -C link-arg=-Wl,--pack-dyn-relocs=android"
# The release library only (the one shipped and measured): identical code folded (--icf=all).
# Generic code instantiated for types of one layout is often the same machine code; Rust never
# promises distinct function addresses, so folding is safe. Kept out of the test profile's flags
# so that its cached builds stay valid.
ANDROID_RELEASE_LINK_RUSTFLAGS="$ANDROID_LINK_RUSTFLAGS -C link-arg=-Wl,--icf=all"

# The release library's source paths (every crate's, set for the whole build): a panic's location
# names its file, and a crate from crates.io is compiled from the build machine's
# $CARGO_HOME/registry/src/<index>/<crate>/, this project from its checkout. Mapped to the
# crate's own path (`lopdf-0.47.0/src/…`, `core/src/…`), the library carries shorter strings and
# nothing of the machine that built it. Needs the registry fetched (`cargo fetch --locked`).
android_release_path_rustflags() {
  local flags="--remap-path-prefix=$PWD/=" dir
  for dir in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
    flags="$flags --remap-path-prefix=$dir="
  done
  echo "$flags"
}
