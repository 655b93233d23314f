package edu.pku.harness.app

import android.Manifest
import android.content.pm.PackageManager
import android.os.Build
import androidx.core.content.ContextCompat
import androidx.test.core.app.ActivityScenario
import androidx.test.ext.junit.runners.AndroidJUnit4
import androidx.test.platform.app.InstrumentationRegistry
import androidx.test.uiautomator.By
import androidx.test.uiautomator.UiDevice
import androidx.test.uiautomator.Until
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.Assume.assumeFalse
import org.junit.Assume.assumeTrue
import org.junit.Test
import org.junit.runner.RunWith
import kotlin.test.assertEquals
import kotlin.test.assertNotNull

private const val PERMISSION_CONTROLLER = "com.android.permissioncontroller"

/**
 * The notification permission through the phone's own dialog, on an install that has not granted
 * it (scripts/test-android-emulator.sh); the journeys of src/sharedTest cover the rest.
 */
@RunWith(AndroidJUnit4::class)
class NotificationsTest {
    private val instrumentation = InstrumentationRegistry.getInstrumentation()
    private val context = instrumentation.targetContext
    private val app = context.applicationContext as HarnessApplication

    private fun notificationsGranted() =
        ContextCompat.checkSelfPermission(context, Manifest.permission.POST_NOTIFICATIONS) == PackageManager.PERMISSION_GRANTED

    @Test fun allowing_the_system_dialog_reports_notifications_granted() {
        assumeTrue("no notification permission dialog before Android 13", Build.VERSION.SDK_INT >= Build.VERSION_CODES.TIRAMISU)
        // connectedAndroidTest grants every runtime permission at install, and revoking one kills
        // this process: scripts/test-android-emulator.sh runs this test again on an install
        // that has not granted it.
        assumeFalse("POST_NOTIFICATIONS is granted already (installed with every permission)", notificationsGranted())
        assertEquals(PermissionState.UNKNOWN, app.platform.permissionState(Permission.NOTIFICATIONS))

        ActivityScenario.launch(MainActivity::class.java).use { scenario ->
            lateinit var activity: MainActivity
            scenario.onActivity { activity = it }
            // What the consent screen's button does on a tap.
            val asked = CoroutineScope(Dispatchers.Main).async { activity.phone.requestPermission(Permission.NOTIFICATIONS) }

            val device = UiDevice.getInstance(instrumentation)
            val allow = device.wait(Until.findObject(By.res(PERMISSION_CONTROLLER, "permission_allow_button")), 10_000)
            assertNotNull(allow, "the system's notification permission dialog")
            allow.click()

            val state = runBlocking { withTimeout(10_000) { asked.await() } }
            assertEquals(PermissionState.GRANTED, state)
            assertEquals(PermissionState.GRANTED, app.platform.permissionState(Permission.NOTIFICATIONS))
            // The core heard it too.
            val row = app.harness.consentScreen().permissions.single { it.permission == Permission.NOTIFICATIONS }
            assertEquals(PermissionState.GRANTED, row.state)
        }
    }
}
