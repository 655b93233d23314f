// The Android shell's Gradle project. Gradle cannot run on the development machine that built
// this; scripts/test-kotlin-host.sh compiles and runs the same unit tests with kotlinc on the
// host JVM instead, and scripts/test-android-emulator.sh runs the instrumented tests where an
// Android SDK and an emulator are at hand.
//
//   :core  the generated UniFFI bindings (package edu.pku.harness) and libharness_ffi.so
//   :ui    the screens (Compose, Material 3), shared with a desktop test build
//   :app   the application: the Platform, the activity, the alarm and boot receivers
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}

dependencyResolutionManagement {
    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)
    repositories {
        google()
        mavenCentral()
    }
}

rootProject.name = "pku-harness"
include(":core", ":ui", ":app")
