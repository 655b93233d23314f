// The app's screens (Compose, Material 3). The same sources compile for the desktop JVM in
// scripts/test-compose-desktop.sh (android/ui/desktop), which is where they are tested here.
plugins {
    id("com.android.library")
    id("org.jetbrains.kotlin.android")
    id("org.jetbrains.kotlin.plugin.compose")
}

android {
    namespace = "edu.pku.harness.ui"
    compileSdk = 35

    defaultConfig {
        minSdk = 26
    }

    sourceSets["main"].kotlin.srcDir("src/main/kotlin")

    buildFeatures {
        compose = true
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
}

kotlin {
    jvmToolchain(17)
}

dependencies {
    // Compose 1.7.6 and Material 3 1.3.1 (BOM 2024.12.01): the newest line every file of which
    // the Maven registry serves, so that scripts/build-android-app.sh compiles these same
    // sources against the same versions (android/compose-robolectric.lock.tsv). The desktop
    // build (android/ui/desktop/pom.xml) uses Compose Multiplatform, whose API is the same.
    val composeBom = platform("androidx.compose:compose-bom:2024.12.01")
    api(composeBom)
    api(project(":core"))
    api("androidx.compose.runtime:runtime")
    api("androidx.compose.ui:ui")
    api("androidx.compose.foundation:foundation")
    api("androidx.compose.material3:material3")
    implementation("androidx.compose.ui:ui-tooling-preview")
    debugImplementation("androidx.compose.ui:ui-tooling")
}
