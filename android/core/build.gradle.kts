// The Kotlin layer over the Rust core: the generated UniFFI bindings (package edu.pku.harness)
// and the libraries built by scripts/build-android.sh.
//
//   scripts/build-android.sh      # .so files into core/src/main/jniLibs, bindings into core/build/generated/uniffi
//   cargo build -p harness-ffi    # the host library the unit tests load (target/debug)
//   ./gradlew :core:testDebugUnitTest
plugins {
    id("com.android.library")
    id("org.jetbrains.kotlin.android")
}

android {
    namespace = "edu.pku.harness"
    compileSdk = 35

    defaultConfig {
        // UniFFI's android_cleaner uses SystemCleaner from API 34 and JNA's cleaner below it.
        minSdk = 26
    }

    // Written by scripts/build-android.sh (`./gradlew clean` removes them: run it again).
    sourceSets["main"].kotlin.srcDir("build/generated/uniffi/kotlin")
    // The host unit tests stay where scripts/test-kotlin-host.sh compiles them from.
    sourceSets["test"].kotlin.srcDir("../src/test/kotlin")

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }

    testOptions {
        // The unit tests run on the host JVM against the host build of the library.
        unitTests.isReturnDefaultValues = true
        unitTests.all {
            it.systemProperty("jna.library.path", rootDir.resolve("../target/debug").absolutePath)
        }
    }
}

kotlin {
    jvmToolchain(17)
}

dependencies {
    // api: the generated classes extend JNA's and expose coroutines in their signatures, so the
    // modules above compile against both.
    api("net.java.dev.jna:jna:5.13.0@aar")
    api("org.jetbrains.kotlinx:kotlinx-coroutines-android:1.7.3")
    implementation("androidx.annotation:annotation:1.8.1")

    // On the host JVM the unit tests need JNA's jar (with desktop natives), not the AAR.
    testImplementation("net.java.dev.jna:jna:5.13.0")
    testImplementation("junit:junit:4.13.2")
    testImplementation("org.jetbrains.kotlin:kotlin-test-junit:2.4.20")
    testImplementation("org.jetbrains.kotlinx:kotlinx-coroutines-core:1.7.3")
}
