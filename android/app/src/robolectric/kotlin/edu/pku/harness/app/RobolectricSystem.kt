package edu.pku.harness.app

import android.app.Activity
import android.app.AlarmManager
import android.content.Intent
import android.content.pm.PackageManager
import android.os.Looper
import android.os.SystemClock
import androidx.compose.runtime.snapshots.Snapshot
import androidx.test.core.app.ApplicationProvider
import org.robolectric.Shadows.shadowOf
import org.robolectric.shadows.ShadowAlarmManager
import edu.pku.harness.DevelopmentOptions
import edu.pku.harness.Harness
import javax.crypto.KeyGenerator
import javax.crypto.SecretKey

/**
 * The app's own Application with its secrets sealed by a software AES-256 key: Robolectric has
 * no AndroidKeyStore provider. The only part of the app the Robolectric tests replace
 * (robolectric.properties names it); the instrumented tests run the Keystore's key.
 */
open class SoftwareKeyApplication : HarnessApplication() {
    override fun sealingKey(): SealingKey = SealingKey { softwareKey }

    /** The journeys' sample plugins: the host library the tests load is built for development. */
    override fun openHarness(dataDir: String, platform: AndroidPlatform): Harness =
        Harness.openForDevelopment(dataDir, platform, DevelopmentOptions(samplePlugins = true, campusOrigin = null))

    /**
     * Robolectric ends every test by calling this, then empties the main looper's queue. A
     * Compose state write the test left unapplied has its apply queued there, through the
     * process's one AndroidUiDispatcher, which marks a dispatch as scheduled until it runs: an
     * emptied queue left it marked for good, and no state write was applied in any later test
     * ("Compose did not get idle" from the next test's start on). So the writes are applied
     * here first, while the queue still holds their dispatch.
     */
    override fun onTerminate() {
        super.onTerminate()
        val looper = shadowOf(Looper.getMainLooper())
        // Bounded: a turn still running writes state on its own; what it writes after this
        // is applied during the next test, when the looper runs.
        var rounds = 0
        while ((Snapshot.current.hasPendingChanges() || !looper.isIdle) && rounds++ < 1_000) looper.idle()
    }

    private companion object {
        val softwareKey: SecretKey = KeyGenerator.getInstance("AES").apply { init(256) }.generateKey()
    }
}

/** [TestSystem] through Robolectric's shadows of Android's own framework code. */
class RobolectricSystem : TestSystem {
    private val app get() = ApplicationProvider.getApplicationContext<HarnessApplication>()

    override val answersSystemScreens = true

    override fun answerPermissionDialog(activity: Activity, grant: Boolean): Boolean {
        val request = shadowOf(activity).lastRequestedPermission ?: return false
        if (grant) shadowOf(app).grantPermissions(*request.requestedPermissions)
        val results = IntArray(request.requestedPermissions.size) {
            if (grant) PackageManager.PERMISSION_GRANTED else PackageManager.PERMISSION_DENIED
        }
        @Suppress("DEPRECATION")
        activity.onRequestPermissionsResult(request.requestCode, request.requestedPermissions, results)
        return true
    }

    override fun grantNotifications() = shadowOf(app).grantPermissions(android.Manifest.permission.POST_NOTIFICATIONS)

    override fun requestedPermissions(activity: Activity): List<String> =
        shadowOf(activity).lastRequestedPermission?.requestedPermissions?.toList().orEmpty()

    override fun allowExactAlarms(allowed: Boolean): Boolean {
        ShadowAlarmManager.setCanScheduleExactAlarms(allowed)
        return true
    }

    override fun nextAlarm(): SystemAlarm? {
        val alarm = shadowOf(app.getSystemService(AlarmManager::class.java)).peekNextScheduledAlarm() ?: return null
        return SystemAlarm(alarm.triggerAtMs, alarm.windowLengthMs == ShadowAlarmManager.WINDOW_EXACT)
    }

    override fun answerActivityForResult(activity: Activity, data: Intent?): Intent? {
        val started = shadowOf(activity).nextStartedActivityForResult ?: return null
        shadowOf(activity).receiveResult(started.intent, if (data == null) Activity.RESULT_CANCELED else Activity.RESULT_OK, data)
        return started.intent
    }

    override fun nextStartedActivity(activity: Activity): Intent? = shadowOf(activity).nextStartedActivity

    override fun setWallClock(epochMs: Long): Boolean = SystemClock.setCurrentTimeMillis(epochMs)

    override fun idleMainThread() = shadowOf(Looper.getMainLooper()).idle()
}
