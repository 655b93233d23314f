// The Android shell: the app (:app), its screens (:ui) and the Kotlin layer over the Rust core
// (:core). The plugin versions are pinned here, once, and applied in each module.
plugins {
    id("com.android.application") version "8.7.3" apply false
    id("com.android.library") version "8.7.3" apply false
    id("org.jetbrains.kotlin.android") version "2.4.20" apply false
    id("org.jetbrains.kotlin.plugin.compose") version "2.4.20" apply false
}

// The POMs of the Compose 1.7.6 line ask for lifecycle and collection versions the Maven
// registry does not serve; every module takes the ones the lock list holds
// (android/compose-robolectric.lock.tsv, which scripts/build-android-app.sh builds from).
subprojects {
    configurations.configureEach {
        resolutionStrategy.eachDependency {
            when (requested.group) {
                "androidx.lifecycle" -> useVersion("2.8.7")
                "androidx.collection" -> useVersion("1.4.4")
            }
        }
    }
}
