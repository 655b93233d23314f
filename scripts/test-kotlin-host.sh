#!/usr/bin/env bash
# The Kotlin tests of android/src/test on the host JVM against the real library: builds the
# cdylib (debug), generates the bindings, compiles them with kotlinc together with the tests,
# and runs them through JUnit 4 with JNA loading target/debug/libharness_ffi.so; with them, the
# app's plain-JVM parts (secret file format, document reader, the scanner's QR decoding with
# ZXing) and their tests in android/app/src/test. Installs what it needs when missing
# (kotlin-compiler from npm, Debian's libjna-java and junit4, the app's locked ZXing jar from
# Maven Central, fetched with the rest of android/compose-robolectric.lock.tsv). Ends with the line `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/host-tools.sh
source scripts/lib/android-tools.sh

require_command cargo "install Rust with rustup (https://rustup.rs)"
ensure_kotlinc
ensure_host_jars
ensure_android_artifacts
zxing_jar="$(android_artifact com.google.zxing:core:3.5.3)"

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
scripts/gen-bindings.sh "$target_dir/bindings" >/dev/null

build="$target_dir/kotlin-host"
runtime_cp="$JNA_JAR:$KOTLIN_LIB/kotlinx-coroutines-core-jvm.jar:$KOTLIN_LIB/kotlin-stdlib.jar"
test_cp="$runtime_cp:$zxing_jar:$KOTLIN_LIB/kotlin-test.jar:$KOTLIN_LIB/kotlin-test-junit.jar:$JUNIT_JARS"

# The generated bindings exactly as they ship (android_cleaner included), with host stand-ins
# for the three Android classes they name.
kotlinc_cached "$build/bindings.jar" "$runtime_cp" "$target_dir/bindings/kotlin" android/host-stubs
# The app's parts that need no Android, with their tests (Gradle: :app:testDebugUnitTest).
app_main=android/app/src/main/kotlin/edu/pku/harness/app
kotlinc_cached "$build/tests.jar" "$build/bindings.jar:$test_cp" android/src/test/kotlin android/host-runner \
  "$app_main/SecretFiles.kt" "$app_main/DocumentBytes.kt" "$app_main/QrFrames.kt" android/app/src/test/kotlin

# pku.test.plugins: the SDK's test plugins, whose bundles TypeScriptPluginTest runs.
exec java -Djna.library.path="$target_dir/debug" -Dpku.test.plugins="$PWD/sdk/test-plugins" -cp "$build/bindings.jar:$build/tests.jar:$test_cp" \
  edu.pku.harness.host.RunHostTestsKt "$build/tests.jar"
