// The Android shell's Gradle project (the Kotlin side of the core). Gradle cannot run on the
// development machine that built this; scripts/test-kotlin-host.sh compiles and runs the same
// unit tests with kotlinc on the host JVM instead.
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}

dependencyResolutionManagement {
    repositories {
        google()
        mavenCentral()
    }
}

rootProject.name = "pku-harness"
