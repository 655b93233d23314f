package edu.pku.harness.app

import android.Manifest
import android.app.Activity
import android.content.Intent
import androidx.test.platform.app.InstrumentationRegistry
import androidx.test.uiautomator.By
import androidx.test.uiautomator.UiDevice
import androidx.test.uiautomator.Until

/**
 * [TestSystem] on a phone or an emulator: the permission dialog is the system's own, answered
 * with UiAutomator; what a test cannot set on a phone (exact alarms allowed, the wall clock, a
 * picker's answer) reports false or null, and the journeys that need it are skipped
 * (src/sharedTest; they run under Robolectric, scripts/test-android-robolectric.sh).
 */
class DeviceSystem : TestSystem {
    private val instrumentation = InstrumentationRegistry.getInstrumentation()
    private val context = instrumentation.targetContext
    private val device = UiDevice.getInstance(instrumentation)

    override val answersSystemScreens = false

    private fun dialogButton(id: String) =
        device.wait(Until.findObject(By.res(PERMISSION_CONTROLLER, id)), 10_000)

    override fun answerPermissionDialog(activity: Activity, grant: Boolean): Boolean {
        val button = dialogButton(if (grant) "permission_allow_button" else "permission_deny_button") ?: return false
        button.click()
        return true
    }

    override fun grantNotifications() =
        instrumentation.uiAutomation.grantRuntimePermission(context.packageName, Manifest.permission.POST_NOTIFICATIONS)

    override fun requestedPermissions(activity: Activity): List<String> =
        if (device.hasObject(By.pkg(PERMISSION_CONTROLLER))) listOf(Manifest.permission.POST_NOTIFICATIONS) else emptyList()

    override fun allowExactAlarms(allowed: Boolean) = false

    /** The app's own record of what it armed, while the system still holds its PendingIntent. */
    override fun nextAlarm(): SystemAlarm? {
        if (WakeAlarms.existingWakeIntent(context) == null) return null
        val armed = WakeAlarms(context).armed() ?: return null
        return SystemAlarm(armed.atEpochMs, armed.api == AlarmApi.EXACT)
    }

    override fun answerActivityForResult(activity: Activity, data: Intent?): Intent? = null

    override fun nextStartedActivity(activity: Activity): Intent? = null

    override fun setWallClock(epochMs: Long) = false

    override fun idleMainThread() = instrumentation.waitForIdleSync()

    private companion object {
        const val PERMISSION_CONTROLLER = "com.android.permissioncontroller"
    }
}
