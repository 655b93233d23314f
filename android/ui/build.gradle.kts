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
    // Compose 1.8.2 and Material 3 1.3.2: the Jetpack releases the desktop build's Compose
    // Multiplatform 1.8.2 (android/ui/desktop/pom.xml) is built from.
    val composeBom = platform("androidx.compose:compose-bom:2025.05.01")
    api(composeBom)
    api(project(":core"))
    api("androidx.compose.runtime:runtime")
    api("androidx.compose.ui:ui")
    api("androidx.compose.foundation:foundation")
    api("androidx.compose.material3:material3")
    implementation("androidx.compose.ui:ui-tooling-preview")
    debugImplementation("androidx.compose.ui:ui-tooling")
}
