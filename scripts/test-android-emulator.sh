#!/usr/bin/env bash
# The Android app's instrumented tests (android/app/src/androidTest) on a running emulator or a
# connected phone: builds the core for Android (scripts/build-android.sh), runs
# `./gradlew :app:connectedDebugAndroidTest`, then the notification-dialog test once more on a
# fresh install, since connectedAndroidTest grants every runtime permission at install and the
# dialog only shows while the permission is not granted.
#
# Needs an Android SDK (ANDROID_HOME or ANDROID_SDK_ROOT) with platform-tools, an emulator or
# phone listed by `adb devices`, Gradle (or android/gradlew), and what build-android.sh needs
# (ANDROID_NDK_HOME, cargo-ndk). When one is missing it says which and how to get it, and exits
# 2 before building anything. Not part of scripts/test.sh: the development machine has no SDK.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=0
need() {
  echo "test-android-emulator.sh: $*" >&2
  missing=1
}

sdk="${ANDROID_HOME:-${ANDROID_SDK_ROOT:-}}"
adb=""
if [ -z "$sdk" ]; then
  need "ANDROID_HOME (or ANDROID_SDK_ROOT) is not set: install Android Studio (https://developer.android.com/studio) with the SDK for API 35, and set ANDROID_HOME to the SDK's directory (Android Studio → Settings → Languages & Frameworks → Android SDK shows it)"
elif [ ! -x "$sdk/platform-tools/adb" ]; then
  need "$sdk/platform-tools/adb is missing: install the SDK Platform-Tools (Android Studio's SDK Manager → SDK Tools, or: sdkmanager \"platform-tools\")"
else
  adb="$sdk/platform-tools/adb"
fi

if [ -n "$adb" ]; then
  devices="$("$adb" devices | awk 'NR > 1 && $2 == "device" { print $1 }')"
  if [ -z "$devices" ]; then
    need "no emulator or phone is listed by 'adb devices' as ready: start one (Android Studio → Device Manager, or: $sdk/emulator/emulator -avd <name>; create an API 35 x86_64 image with sdkmanager \"system-images;android-35;google_apis;x86_64\" and avdmanager create avd), or connect a phone with USB debugging on"
  elif [ "$(printf '%s\n' "$devices" | wc -l)" -gt 1 ] && [ -z "${ANDROID_SERIAL:-}" ]; then
    need "more than one device is ready ($(printf '%s ' $devices)): set ANDROID_SERIAL to the one to test on"
  fi
fi

gradle=""
if [ -x android/gradlew ]; then
  gradle="./gradlew"
elif command -v gradle >/dev/null 2>&1; then
  gradle="gradle"
else
  need "neither android/gradlew nor gradle is found: install Gradle 8.9 or later (https://gradle.org/install), or open android/ in Android Studio once and run 'gradle wrapper' there to create android/gradlew"
fi

if [ -z "${ANDROID_NDK_HOME:-}" ]; then
  need "ANDROID_NDK_HOME is not set: install the NDK r27 or later (Android Studio's SDK Manager → SDK Tools → NDK, or: sdkmanager \"ndk;27.2.12479018\") and set ANDROID_NDK_HOME to its directory"
fi
if ! command -v cargo-ndk >/dev/null 2>&1; then
  need "cargo-ndk is not installed: run cargo install cargo-ndk"
fi

[ "$missing" -eq 0 ] || exit 2

scripts/build-android.sh

cd android
export ANDROID_HOME="$sdk"
"$gradle" :app:connectedDebugAndroidTest

# The dialog test, on an install that has not granted POST_NOTIFICATIONS: installDebug does not
# grant runtime permissions, and the uninstall clears any earlier answer.
app_id=edu.pku.harness
"$adb" uninstall "$app_id" >/dev/null 2>&1 || true
"$adb" uninstall "$app_id.test" >/dev/null 2>&1 || true
"$gradle" :app:installDebug :app:installDebugAndroidTest
dialog_test="edu.pku.harness.app.NotificationsTest#allowing_the_system_dialog_reports_notifications_granted"
# -r: the raw status lines, whose codes tell a pass (0) from a failure (-1, -2), an ignored test
# (-3) and a skipped assumption (-4); the plain report says "OK" for all but failures.
result="$("$adb" shell am instrument -w -r -e class "$dialog_test" "$app_id.test/androidx.test.runner.AndroidJUnitRunner")"
echo "$result"
"$adb" uninstall "$app_id.test" >/dev/null 2>&1 || true
"$adb" uninstall "$app_id" >/dev/null 2>&1 || true
if ! grep -q "INSTRUMENTATION_STATUS_CODE: 0" <<<"$result" || grep -q "INSTRUMENTATION_STATUS_CODE: -[1-4]" <<<"$result"; then
  echo "test-android-emulator.sh: the notification dialog test did not pass (see its report above)" >&2
  exit 1
fi
echo "instrumented tests passed, the notification dialog test on a fresh install included"
