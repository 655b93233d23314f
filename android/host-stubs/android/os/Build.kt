// Host-only stand-in for the part of android.os.Build that UniFFI's android_cleaner code reads,
// so that the host tests compile the exact Kotlin that ships. Never packaged into the app.
package android.os

object Build {
    object VERSION {
        // API 34: the host tests take the same SystemCleaner path as current phones.
        @JvmField val SDK_INT: Int = 34
    }

    object VERSION_CODES {
        const val UPSIDE_DOWN_CAKE: Int = 34
    }
}
