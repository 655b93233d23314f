#!/usr/bin/env bash
# The app's journeys (android/app/src/sharedTest, the same sources the instrumented tests run on
# a phone) under Robolectric 4.14.1 on the host: Android 14's own framework code, the app's
# Application, activity and receivers compiled by scripts/build-android-app.sh --compile-only,
# the real core library (target/debug/libharness_ffi.so, loaded by JNA) and a scripted model
# server on 127.0.0.1. Offline: the framework jar Robolectric runs comes from the lock list
# (android/compose-robolectric.lock.tsv), cached under ~/.cache/pku-harness. Runs on Java 17
# (Robolectric 4.14's ASM cannot read newer class files). Ends with JUnit's count and the line
# `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/host-tools.sh
source scripts/lib/android-tools.sh

require_command cargo "install Rust with rustup (https://rustup.rs)"
scripts/build-android-app.sh --compile-only
ensure_kotlinc
ensure_android_artifacts
ensure_android_build_tools
ensure_host_jars
ensure_java17

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
out="$target_dir/android"
build="$out/build"
tests="$out/robolectric"
mkdir -p "$tests"

# Robolectric looks its framework jars up by Maven's file name in robolectric.dependency.dir:
# SDK 34's, which the tests run on (robolectric.properties), and SDK 35's, the newest it knows,
# which it loads the app's resources with.
deps="$HARNESS_TOOLS_DIR/robolectric-deps"
mkdir -p "$deps"
for version in 14-robolectric-10818077-i7 15-robolectric-12650502-i7; do
  ln -sf "$(android_artifact "org.robolectric:android-all-instrumented:$version")" "$deps/android-all-instrumented-$version.jar"
done

# What AGP writes for unit tests with includeAndroidResources: the merged manifest and the
# resource APK of the app (with ui-test-manifest's activity), from build-android-app.sh.
config="$tests/config"
mkdir -p "$config/com/android/tools"
cat >"$config/com/android/tools/test_config.properties" <<EOF
android_merged_manifest=$out/app-test/AndroidManifest.xml
android_resource_apk=$out/app-test/resources.apk
android_custom_package=edu.pku.harness.app
EOF

app_cp="$build/app.jar:$build/ui.jar:$build/core.jar:$out/app-test/r.jar"
# The host's JNA (its desktop natives load target/debug's library), not the AAR's classes.
libs_cp="$(android_classpath all):$JNA_JAR:$KOTLIN_LIB/kotlin-stdlib.jar:$KOTLIN_LIB/kotlin-test.jar:$KOTLIN_LIB/kotlin-test-junit.jar"
KOTLINC_FLAGS="-no-reflect -Xplugin=$KOTLIN_LIB/compose-compiler-plugin.jar" kotlinc_cached "$tests/tests.jar" \
  "$ANDROID_JAR:$app_cp:$libs_cp" android/app/src/sharedTest/kotlin android/app/src/robolectric/kotlin android/host-runner

started=$SECONDS
status=0
# Native graphics (Android's own Canvas, text layout and RenderNode, from nativeruntime in the
# lock list), not Robolectric's legacy shadows of them: with the legacy ones a tap on the
# approval sheet's answer buttons hit the button's bounds and still never reached its onClick
# (the same button in a plainer layout took it), and text measured ~3 px per character.
# Android 14's SystemCleaner (UniFFI's cleaner from API 33 on) is the JDK's internal one.
"$JAVA17" -Xmx3g --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED \
  -Drobolectric.offline=true -Drobolectric.graphicsMode=NATIVE -Drobolectric.dependency.dir="$deps" \
  -Djna.library.path="$target_dir/debug" -Dpku.tests.timeout=900 -Dpku.tests.only="${PKU_TESTS_ONLY:-}" \
  -cp "$tests/tests.jar:$config:$PWD/android/app/src/robolectric/resources:$app_cp:$libs_cp:$ANDROID_JAR" \
  edu.pku.harness.host.RunHostTestsKt "$tests/tests.jar" || status=$?
echo "Robolectric run: $((SECONDS - started)) s"
exit "$status"
