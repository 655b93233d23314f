// Host-only stand-in for android.system.SystemCleaner (API 33+), which hands out one shared
// java.lang.ref.Cleaner; this one does the same. Never packaged into the app.
package android.system

object SystemCleaner {
    private val shared: java.lang.ref.Cleaner = java.lang.ref.Cleaner.create()

    @JvmStatic fun cleaner(): java.lang.ref.Cleaner = shared
}
