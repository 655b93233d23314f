#!/usr/bin/env bash
# The shared Compose screens of android/ui under test on the desktop JVM, against the real
# library: builds the cdylib (debug) and the bindings as scripts/test-kotlin-host.sh does,
# compiles android/ui/src/main with Compose Multiplatform for desktop (the same sources the app
# compiles with androidx Compose) and the tests of android/ui/src/desktopTest, and runs them
# through JUnit 4, headless: Skia renders offscreen, so no display is needed. Each screen is
# saved as target/screenshots/<screen>-<lang>.png. Installs what it needs when missing (the
# Kotlin compiler from npm, the Compose jars from Maven Central, Debian's JNA, JUnit and a CJK
# font). Ends with the line `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/host-tools.sh
source scripts/lib/compose-tools.sh

require_command cargo "install Rust with rustup (https://rustup.rs)"
ensure_kotlinc
ensure_host_jars
ensure_compose_jars

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
scripts/gen-bindings.sh "$target_dir/bindings" >/dev/null

build="$target_dir/compose-desktop"
# The bindings against Compose's coroutines (1.8.0, as the kotlinc's own), not a second copy.
kotlinc_cached "$build/bindings.jar" "$JNA_JAR:$COMPOSE_CP" "$target_dir/bindings/kotlin" android/host-stubs

KOTLINC_FLAGS="-Xplugin=$COMPOSE_PLUGIN" kotlinc_cached "$build/ui.jar" "$build/bindings.jar:$COMPOSE_CP" \
  android/ui/src/main/kotlin
# The tests share the host tests' scripted Platform, model server and remote servers, and their
# runner.
KOTLINC_FLAGS="-Xplugin=$COMPOSE_PLUGIN" kotlinc_cached "$build/tests.jar" \
  "$build/ui.jar:$build/bindings.jar:$JNA_JAR:$COMPOSE_CP:$KOTLIN_LIB/kotlin-test.jar:$KOTLIN_LIB/kotlin-test-junit.jar" \
  android/ui/src/desktopTest/kotlin android/src/test/kotlin/edu/pku/harness/Support.kt \
  android/src/test/kotlin/edu/pku/harness/ScriptedModel.kt \
  android/src/test/kotlin/edu/pku/harness/RemoteServers.kt android/host-runner

# The 云端 screen's test runs a PKU harness Cloud server of its own: the real binary.
cargo build -p harness-cloud --bin harness-cloud

screenshots="$target_dir/screenshots"
# Only this run's screens: a screen a test no longer saves must not linger.
rm -rf "$screenshots"
mkdir -p "$screenshots"
# The host stand-in for android.os.Build makes kotlinx-coroutines take the JVM for Android and
# look for Android's Main dispatcher only; its plain service lookup finds Swing's (the EDT).
exec java -Djava.awt.headless=true -Djna.library.path="$target_dir/debug" \
  -Dkotlinx.coroutines.fast.service.loader=false \
  -Dpku.screenshots="$screenshots" \
  -Dpku.cloud.bin="$target_dir/debug/harness-cloud" \
  -cp "$build/tests.jar:$build/ui.jar:$build/bindings.jar:$JNA_JAR:$COMPOSE_CP:$KOTLIN_LIB/kotlin-test.jar:$KOTLIN_LIB/kotlin-test-junit.jar" \
  edu.pku.harness.host.RunHostTestsKt "$build/tests.jar"
