// Host-only stand-in for androidx.annotation.RequiresApi. Never packaged into the app.
package androidx.annotation

@Retention(AnnotationRetention.BINARY)
annotation class RequiresApi(val value: Int = 1, val api: Int = 1)
