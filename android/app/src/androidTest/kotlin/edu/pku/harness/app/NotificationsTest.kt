package edu.pku.harness.app

import android.Manifest
import android.app.Notification
import android.app.NotificationManager
import android.content.Intent
import android.content.pm.PackageManager
import android.os.Build
import androidx.core.content.ContextCompat
import androidx.test.core.app.ActivityScenario
import androidx.test.ext.junit.runners.AndroidJUnit4
import androidx.test.platform.app.InstrumentationRegistry
import androidx.test.uiautomator.By
import androidx.test.uiautomator.UiDevice
import androidx.test.uiautomator.Until
import edu.pku.harness.Consent
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
import java.time.Instant
import java.time.ZoneOffset
import java.time.format.DateTimeFormatter
import java.time.temporal.ChronoUnit
import kotlin.test.assertEquals
import kotlin.test.assertNotNull

private const val PERMISSION_CONTROLLER = "com.android.permissioncontroller"

/** The notification permission through the system's own dialog, and a wake-up's notification. */
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

    @Test fun the_wake_up_runs_a_due_job_and_the_core_posts_its_notification() {
        if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.TIRAMISU && !notificationsGranted()) {
            instrumentation.uiAutomation.grantRuntimePermission(context.packageName, Manifest.permission.POST_NOTIFICATIONS)
        }
        val harness = app.harness
        harness.setConsent(Consent(termsAccepted = true, met = listOf("campus-session")))
        // The earliest a one-shot job may be: the next whole minute, at least 5 s away.
        val at = Instant.now().plusSeconds(5).plus(1, ChronoUnit.MINUTES).truncatedTo(ChronoUnit.MINUTES)
        val local = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC).format(at)
        val job = harness.addJob(
            """{"name":"校园卡余额低于 50 元","schedule":{"at":"$local"},"timeZone":"UTC",
            "check":{"tool":"wallet.cardBalance","when":{"path":"balanceYuan","op":"lt","value":50},
            "notify":{"title":"校园卡余额不足","body":"余额还剩 {balanceYuan} 元"}}}""",
        )
        // The core armed the alarm for it. Cancel that alarm, so that only the broadcast below
        // can run the job.
        assertNotNull(app.platform.alarms.armed(), "the core armed a wake-up")
        app.platform.alarms.cancel()
        Thread.sleep(maxOf(0, at.toEpochMilli() - System.currentTimeMillis()) + 1_000)

        context.sendBroadcast(Intent(context, WakeReceiver::class.java).setAction(WakeReceiver.ACTION))

        val manager = context.getSystemService(NotificationManager::class.java)
        val tag = "job-$job"
        val deadline = System.currentTimeMillis() + 20_000
        var posted = manager.activeNotifications.firstOrNull { it.tag == tag }
        while (posted == null && System.currentTimeMillis() < deadline) {
            Thread.sleep(200)
            posted = manager.activeNotifications.firstOrNull { it.tag == tag }
        }
        assertNotNull(posted, "the job's notification, tag $tag")
        assertEquals(tag.hashCode(), posted.id)
        assertEquals(JobNotifications.CHANNEL, posted.notification.channelId)
        assertEquals("校园卡余额不足", posted.notification.extras.getCharSequence(Notification.EXTRA_TITLE).toString())
        assertEquals("余额还剩 42.5 元", posted.notification.extras.getCharSequence(Notification.EXTRA_TEXT).toString())
        manager.cancel(tag, tag.hashCode())
    }
}
