// The Android app: one activity showing the screens of :ui, the Platform the core calls
// (approval sheet, keystore, notifications, alarms, screens), and the receivers that run due
// jobs when the alarm fires and re-arm it after a reboot or a clock change.
//
//   scripts/build-android.sh                  # the core's .so files and bindings, first
//   ./gradlew :app:installDebug               # onto a device or emulator
//   scripts/test-android-emulator.sh          # the instrumented tests (src/androidTest)
plugins {
    id("com.android.application")
    id("org.jetbrains.kotlin.android")
    id("org.jetbrains.kotlin.plugin.compose")
}

android {
    namespace = "edu.pku.harness.app"
    compileSdk = 35

    defaultConfig {
        applicationId = "edu.pku.harness"
        minSdk = 26
        targetSdk = 35
        versionCode = 1
        versionName = "0.1.0"
        testInstrumentationRunner = "androidx.test.runner.AndroidJUnitRunner"
    }

    sourceSets["main"].kotlin.srcDir("src/main/kotlin")
    // The journeys (src/sharedTest) run both ways: under Robolectric as unit tests, with
    // src/robolectric's system and software sealing key, and on a phone as instrumented tests.
    // scripts/test-android-robolectric.sh runs the same unit tests without Gradle.
    sourceSets["test"].kotlin.srcDirs("src/test/kotlin", "src/sharedTest/kotlin", "src/robolectric/kotlin")
    sourceSets["test"].resources.srcDir("src/robolectric/resources")
    sourceSets["androidTest"].kotlin.srcDirs("src/androidTest/kotlin", "src/sharedTest/kotlin")

    buildTypes {
        release {
            // JNA and the generated bindings are reached by reflection and by name from native
            // code: shrinking would need keep rules for both, which nobody has tested yet.
            isMinifyEnabled = false
        }
    }

    buildFeatures {
        compose = true
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }

    testOptions {
        // Robolectric reads the merged manifest and the resource APK.
        unitTests.isIncludeAndroidResources = true
        unitTests.all {
            // The host build of the core (cargo build -p harness-ffi), loaded by JNA.
            it.systemProperty("jna.library.path", rootDir.resolve("../target/debug").absolutePath)
            // Android's own graphics, as scripts/test-android-robolectric.sh runs them: with
            // Robolectric's legacy shadows taps on the approval sheet never reach its buttons.
            it.systemProperty("robolectric.graphicsMode", "NATIVE")
        }
    }
}

kotlin {
    jvmToolchain(17)
}

dependencies {
    implementation(project(":ui"))
    implementation(project(":core"))
    implementation(platform("androidx.compose:compose-bom:2024.12.01"))
    implementation("androidx.compose.ui:ui")
    implementation("androidx.compose.material3:material3")
    implementation("androidx.activity:activity-compose:1.10.1")
    implementation("androidx.core:core-ktx:1.16.0")
    // The 扫码加入 scanner's QR decoder (PairingScanActivity, QrFrames.kt).
    implementation("com.google.zxing:core:3.5.3")

    // The versions of android/compose-robolectric.lock.tsv, which the Gradle-free build uses.
    // SecretFilesTest and DocumentTextTest: plain JVM; the journeys: Robolectric.
    testImplementation("junit:junit:4.13.2")
    testImplementation("org.jetbrains.kotlin:kotlin-test-junit:2.4.20")
    testImplementation("org.robolectric:robolectric:4.14.1")
    testImplementation(platform("androidx.compose:compose-bom:2024.12.01"))
    testImplementation("androidx.compose.ui:ui-test-junit4")
    testImplementation("androidx.test:core:1.5.0")
    testImplementation("androidx.test.ext:junit:1.1.5")
    // On the host JVM JNA needs its jar (with desktop natives), not the AAR.
    testImplementation("net.java.dev.jna:jna:5.13.0")

    androidTestImplementation(platform("androidx.compose:compose-bom:2024.12.01"))
    androidTestImplementation("androidx.compose.ui:ui-test-junit4")
    debugImplementation("androidx.compose.ui:ui-test-manifest")
    androidTestImplementation("androidx.test:runner:1.5.0")
    androidTestImplementation("androidx.test:core:1.5.0")
    androidTestImplementation("androidx.test.ext:junit:1.1.5")
    // The phone's own permission dialog (NotificationsTest, DeviceSystem); not in the lock
    // list: nothing here runs it.
    androidTestImplementation("androidx.test.uiautomator:uiautomator:2.3.0")
    androidTestImplementation("org.jetbrains.kotlin:kotlin-test-junit:2.4.20")
}
