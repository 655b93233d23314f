#!/usr/bin/env bash
# The Android app without Gradle: a signed debug APK at target/android/pku-harness-debug.apk,
# built from the same sources and library versions as the Gradle build (android/*/build.gradle.kts).
#
#   scripts/build-android-app.sh [--require-native] [--test-profile]
#
#  1. fetches exactly the files of android/compose-robolectric.lock.tsv (Compose 1.7.6, Material 3
#     1.3.1, activity 1.10.1, core 1.16.0, JNA's AAR, d8) and Robolectric's android-all 34 jar,
#     the android.jar it compiles against; cached under ~/.cache/pku-harness
#  2. merges the manifests (scripts/lib/merge_manifest.py), compiles and links the resources with
#     aapt2 against API 34, one R class per library package
#  3. compiles :core (the UniFFI bindings), :ui and :app with kotlinc and its Compose plugin
#     (outputs cached by input hashes: an unchanged module is not compiled again)
#  4. dexes with d8 (minSdk 26), adds JNA's natives and libharness_ffi.so for arm64-v8a and
#     x86_64 (PKU_ANDROID_ABIS to choose; scripts/lib/android-core-lib.sh: the NDK when ANDROID_NDK_HOME is set, else
#     Debian's lld against generated stubs), zipaligns, signs with a debug key
#  5. checks the APK: `apksigner verify`, `aapt2 dump badging` names the launcher activity
#
# Without a loadable core library the APK is still written, with a loud note; --require-native
# makes that an error (exit 1). Also writes target/android/app-test/ (the merged manifest and the
# resource APK scripts/test-android-robolectric.sh runs against).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/host-tools.sh
source scripts/lib/android-tools.sh

require_native=0
compile_only=0
for arg in "$@"; do
  case "$arg" in
    --require-native) require_native=1 ;;
    # For scripts/test-android-robolectric.sh: stops after the Kotlin, before dex and the APK.
    --compile-only) compile_only=1 ;;
    # For scripts/test.sh: the core library built with Cargo's android-test profile (no LTO,
    # 16 codegen units, opt-level 1: minutes instead of ~29 min cold), not the shipped release's.
    --test-profile) export CORE_PROFILE=android-test ;;
    *) echo "usage: build-android-app.sh [--require-native] [--test-profile] | --compile-only" >&2; exit 2 ;;
  esac
done

require_command cargo "install Rust with rustup (https://rustup.rs)"
started=$SECONDS
ensure_kotlinc
ensure_android_artifacts
ensure_android_build_tools

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
out="$target_dir/android"
build="$out/build"
mkdir -p "$build"

# What the Gradle build sets in android/app/build.gradle.kts.
NAMESPACE=edu.pku.harness.app
APPLICATION_ID=edu.pku.harness
MIN_SDK=26
TARGET_SDK=35
VERSION_CODE=1
VERSION_NAME=0.1.0

scripts/gen-bindings.sh "$target_dir/bindings" >/dev/null

# --- resources -----------------------------------------------------------------------------
aars=()
while read -r coordinate type; do
  [ "$type" = aar ] || continue
  grep -qE "$ANDROID_TEST_ONLY" <<<"$coordinate" && continue
  aars+=("$(android_artifact "$coordinate")")
done < <(android_lock_rows)

# link_resources OUT_DIR EXTRA_AAR…: the merged manifest, the resource APK and the R classes
# (r.jar) of the app and its libraries (plus EXTRA_AARs, e.g. the test manifest's).
link_resources() {
  local dir="$1"
  shift
  local libs=("${aars[@]}" "$@")
  # Linked again only when an input changed: the app's resources and manifest, the libraries.
  local sum
  sum="$( { echo "${libs[*]}"; find android/app/src/main/res android/app/src/main/AndroidManifest.xml \
    scripts/lib/merge_manifest.py "$ANDROID_LOCK" -type f -print0 | sort -z | xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1)"
  [ -f "$dir/r.jar" ] && [ "$(cat "$dir/inputs.sum" 2>/dev/null)" = "$sum" ] && return 0
  rm -f "$dir/inputs.sum"
  mkdir -p "$dir/flat"
  local manifests=() packages=() flats=() lib name package
  for lib in "${libs[@]}"; do
    manifests+=("$lib/AndroidManifest.xml")
    package="$(sed -n 's/.*package="\([^"]*\)".*/\1/p' "$lib/AndroidManifest.xml" | head -1)"
    if [ -d "$lib/res" ] && [ -n "$(ls -A "$lib/res")" ]; then
      name="$(basename "$lib")"
      [ -f "$dir/flat/$name.zip" ] || "$AAPT2" compile --dir "$lib/res" -o "$dir/flat/$name.zip"
      flats+=(-R "$dir/flat/$name.zip")
      packages+=("$package")
    fi
  done
  rm -f "$dir/flat/app.zip"
  "$AAPT2" compile --dir android/app/src/main/res -o "$dir/flat/app.zip"
  python3 scripts/lib/merge_manifest.py "$dir/AndroidManifest.xml" android/app/src/main/AndroidManifest.xml \
    "$NAMESPACE" "$APPLICATION_ID" "$MIN_SDK" "$TARGET_SDK" "$VERSION_CODE" "$VERSION_NAME" "${manifests[@]}"
  rm -rf "$dir/gen" "$dir/r-classes"
  local IFS=:
  "$AAPT2" link -I "$ANDROID_JAR" --manifest "$dir/AndroidManifest.xml" --auto-add-overlay \
    --min-sdk-version "$MIN_SDK" --target-sdk-version "$TARGET_SDK" \
    "${flats[@]}" -R "$dir/flat/app.zip" \
    --java "$dir/gen" --custom-package "$NAMESPACE" --extra-packages "${packages[*]}" \
    -o "$dir/resources.apk"
  unset IFS
  mkdir -p "$dir/r-classes"
  find "$dir/gen" -name R.java -print0 | xargs -0 javac -nowarn -encoding UTF-8 --release 17 -d "$dir/r-classes" 2>/dev/null
  rm -f "$dir/r.jar"
  (cd "$dir/r-classes" && zip -q -r -X "$dir/r.jar" .)
  echo "$sum" >"$dir/inputs.sum"
}

echo "linking resources with aapt2 against API 34"
link_resources "$build/res"
# The Robolectric tests' manifest adds ui-test-manifest's activity (createAndroidComposeRule).
link_resources "$out/app-test" "$(android_artifact androidx.compose.ui:ui-test-manifest:1.7.6)"

# --- Kotlin --------------------------------------------------------------------------------
android_cp="$(android_classpath app)"
jna_jar="$(android_artifact net.java.dev.jna:jna:5.13.0)/classes.jar"
# Robolectric's android-all holds the framework (android.*, androidx-free) but not java.*: the
# JDK 17 class library stands in for Android's libcore, whose API at level 26+ it matches for
# what these sources use (d8 would reject a class file that needs more).
kotlin_android="-no-reflect"
echo "compiling :core, :ui, :app with kotlinc $KOTLIN_VERSION (each only when its inputs changed)"
KOTLINC_FLAGS="$kotlin_android" kotlinc_cached "$build/core.jar" "$ANDROID_JAR:$jna_jar:$android_cp" \
  "$target_dir/bindings/kotlin"
KOTLINC_FLAGS="$kotlin_android -Xplugin=$KOTLIN_LIB/compose-compiler-plugin.jar" kotlinc_cached "$build/ui.jar" \
  "$ANDROID_JAR:$build/core.jar:$jna_jar:$android_cp" android/ui/src/main/kotlin
KOTLINC_FLAGS="$kotlin_android -Xplugin=$KOTLIN_LIB/compose-compiler-plugin.jar" kotlinc_cached "$build/app.jar" \
  "$ANDROID_JAR:$build/ui.jar:$build/core.jar:$build/res/r.jar:$jna_jar:$android_cp" android/app/src/main/kotlin

[ "$compile_only" -eq 1 ] && exit 0

# --- dex -----------------------------------------------------------------------------------
d8() { java -cp "$D8_JAR" com.android.tools.r8.D8 --min-api "$MIN_SDK" --lib "$ANDROID_JAR" "$@"; }
# The libraries once per lock list and compiler (their dex is the slow part), the app's own
# classes each build.
libs_dex="$HARNESS_TOOLS_DIR/android-dex-$(echo "$android_cp $KOTLIN_VERSION" | sha256sum | cut -c1-12).zip"
if [ ! -f "$libs_dex" ]; then
  echo "dexing the libraries with d8 (once per lock list)"
  IFS=: read -r -a lib_jars <<<"$android_cp"
  d8 --release --intermediate --output "$libs_dex.tmp.zip" "${lib_jars[@]}" "$jna_jar" "$KOTLIN_LIB/kotlin-stdlib.jar" \
    2>&1 | grep -v '^Warning' >&2 || true
  mv "$libs_dex.tmp.zip" "$libs_dex"
fi
rm -rf "$build/dex"
mkdir -p "$build/dex"
echo "dexing the app with d8"
d8 --release --output "$build/dex" "$libs_dex" "$build/core.jar" "$build/ui.jar" "$build/app.jar" "$build/res/r.jar"

# --- native libraries ----------------------------------------------------------------------
# JNA's dispatcher from its AAR, and the core for the same ABIs: phones' arm64-v8a and
# emulators' x86_64 (PKU_ANDROID_ABIS narrows it, e.g. to arm64-v8a alone in scripts/test.sh:
# each is a release build with LTO unless --test-profile).
read -r -a ABIS <<<"${PKU_ANDROID_ABIS:-arm64-v8a x86_64}"
source scripts/lib/android-core-lib.sh
rm -rf "$build/lib"
started_lib=$SECONDS
echo "building libharness_ffi.so ($CORE_PROFILE profile) for ${ABIS[*]}"
build_core_libraries "$build/jniLibs" "${ABIS[@]}"
echo "  libharness_ffi.so: $((SECONDS - started_lib)) s"
for abi in "${ABIS[@]}"; do
  mkdir -p "$build/lib/$abi"
  cp "$(android_artifact net.java.dev.jna:jna:5.13.0)/jni/$abi/libjnidispatch.so" "$build/lib/$abi/"
  [ -f "$build/jniLibs/$abi/libharness_ffi.so" ] && cp "$build/jniLibs/$abi/libharness_ffi.so" "$build/lib/$abi/"
done

# --- package, align, sign ------------------------------------------------------------------
# The test profile's APK beside the shipped build's, never in its place.
apk="$out/pku-harness-debug.apk"
[ "$CORE_PROFILE" = release ] || apk="$out/pku-harness-debug-$CORE_PROFILE.apk"
unsigned="$build/unsigned.apk"
cp "$build/res/resources.apk" "$unsigned"
(cd "$build/dex" && zip -q -X "$unsigned" classes*.dex)
(cd "$build" && zip -q -r -X "$unsigned" lib)
"$ZIPALIGN" -f -p 4 "$unsigned" "$build/aligned.apk"
# The debug key: one per machine, kept with the caches, so that a rebuilt APK installs over the
# last one (adb install -r) instead of being refused for another signature.
keystore="$HARNESS_TOOLS_DIR/android-debug.keystore"
if [ ! -f "$keystore" ]; then
  keytool -genkeypair -keystore "$keystore" -storepass android -keypass android -alias androiddebugkey \
    -keyalg RSA -keysize 2048 -validity 10000 -dname "CN=Android Debug,O=Android,C=US" >/dev/null 2>&1
fi
"$APKSIGNER" sign --ks "$keystore" --ks-pass pass:android --key-pass pass:android --ks-key-alias androiddebugkey \
  --min-sdk-version "$MIN_SDK" --out "$apk" "$build/aligned.apk"
rm -f "$apk.idsig"

# --- checks --------------------------------------------------------------------------------
"$APKSIGNER" verify --min-sdk-version "$MIN_SDK" "$apk"
badging="$("$AAPT2" dump badging "$apk" 2>/dev/null)"
launcher="$(sed -n "s/^launchable-activity: name='\([^']*\)'.*/\1/p" <<<"$badging")"
if [ "$launcher" != "$NAMESPACE.MainActivity" ]; then
  echo "build-android-app.sh: the APK's badging names no launcher activity $NAMESPACE.MainActivity (got: '$launcher')" >&2
  exit 1
fi
sed -n "1p;/^sdkVersion/p;/^targetSdkVersion/p;/^launchable-activity/p;/^native-code/p" <<<"$badging"
size=$(stat -c %s "$apk")
echo "APK: $apk, $size bytes ($(awk "BEGIN{printf \"%.2f\", $size/1048576}") MiB), signed with $keystore"
unzip -v "$apk" | awk '/lib\/.*\.so$/ { printf "  %-36s %10d bytes, %10d compressed\n", $8, $1, $3 }'
echo "built in $((SECONDS - started)) s"
if [ -n "$CORE_LIB_MISSING" ]; then
  cat >&2 <<MSG
************************************************************************************************
build-android-app.sh: THE APK HOLDS NO CORE LIBRARY (libharness_ffi.so): it installs, and the app
stops at its first call into the core. Why: $CORE_LIB_MISSING
Set ANDROID_NDK_HOME to an Android NDK (r27 or later) and install cargo-ndk to build it.
************************************************************************************************
MSG
  [ "$require_native" -eq 1 ] && exit 1
else
  echo "core library, linked with $CORE_LIB_HOW"
fi
