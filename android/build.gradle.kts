// The Android shell: the app (:app), its screens (:ui) and the Kotlin layer over the Rust core
// (:core). The plugin versions are pinned here, once, and applied in each module.
plugins {
    id("com.android.application") version "8.7.3" apply false
    id("com.android.library") version "8.7.3" apply false
    id("org.jetbrains.kotlin.android") version "2.4.20" apply false
    id("org.jetbrains.kotlin.plugin.compose") version "2.4.20" apply false
}
