package edu.pku.harness.app

import android.Manifest
import android.app.Notification
import android.app.NotificationManager
import android.content.Intent
import android.provider.Settings
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.hasAnyAncestor
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.junit4.createEmptyComposeRule
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import androidx.compose.ui.test.performTextInput
import androidx.test.ext.junit.runners.AndroidJUnit4
import edu.pku.harness.core.Action
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.Route
import edu.pku.harness.ui.ChatTags
import edu.pku.harness.ui.MESSAGE_TAG
import edu.pku.harness.ui.ScreenTags
import org.junit.After
import org.junit.Assume.assumeTrue
import org.junit.Rule
import org.junit.Test
import org.junit.runner.RunWith
import java.time.Instant
import java.time.ZoneOffset
import java.time.format.DateTimeFormatter
import java.time.temporal.ChronoUnit
import kotlin.test.assertEquals
import kotlin.test.assertNotNull
import kotlin.test.assertNull
import kotlin.test.assertTrue

private fun JourneyApp.notificationsRow() =
    harness.consentScreen().permissions.single { it.permission == Permission.NOTIFICATIONS }

/** The notification permission: asked only from a tap, answered in the system's dialog. */
@RunWith(AndroidJUnit4::class)
class NotificationPermissionJourneysTest {
    @get:Rule val compose = createEmptyComposeRule()

    /** The app on its consent screen; the permission's button (its `fix`) tapped once. */
    private fun tapTheNotificationsButton(app: JourneyApp, label: String) {
        app.app.navigator.open(Route.CONSENT)
        compose.await(10_000) {
            compose.onAllNodes(hasText(label) and hasAnyAncestor(hasTestTag(ScreenTags.permission("notifications"))))
                .fetchSemanticsNodes().isNotEmpty()
        }
        compose.onNode(hasText(label) and hasAnyAncestor(hasTestTag(ScreenTags.permission("notifications"))))
            .performScrollTo().performClick()
    }

    @Test fun nothing_asks_for_notifications_until_the_student_taps() {
        val app = JourneyApp()
        val scenario = app.launch()
        compose.waitForTheChat()
        assertEquals(emptyList(), app.system.requestedPermissions(scenario.activity()))
        assertEquals(PermissionState.UNKNOWN, app.platform().permissionState(Permission.NOTIFICATIONS))
        val ask = assertNotNull(app.notificationsRow().fix)
        assertEquals(Action.RequestPermission(Permission.NOTIFICATIONS), ask.action)
    }

    @Test fun a_tap_asks_and_granting_in_the_dialog_reports_granted_to_the_core() {
        val app = JourneyApp()
        val scenario = app.launch()
        tapTheNotificationsButton(app, app.notificationsRow().fix!!.label)
        waitFor("the system's dialog") { app.system.requestedPermissions(scenario.activity()).isNotEmpty() }
        assertEquals(listOf(Manifest.permission.POST_NOTIFICATIONS), app.system.requestedPermissions(scenario.activity()))
        assertTrue(app.system.answerPermissionDialog(scenario.activity(), grant = true))
        waitFor("the core to hear the grant") { app.notificationsRow().state == PermissionState.GRANTED }
        assertEquals(PermissionState.GRANTED, app.platform().permissionState(Permission.NOTIFICATIONS))
    }

    @Test fun a_denial_is_reported_and_the_consent_screen_then_opens_the_settings_page() {
        val app = JourneyApp()
        val scenario = app.launch()
        tapTheNotificationsButton(app, app.notificationsRow().fix!!.label)
        waitFor("the system's dialog") { app.system.requestedPermissions(scenario.activity()).isNotEmpty() }
        assertTrue(app.system.answerPermissionDialog(scenario.activity(), grant = false))
        waitFor("the core to hear the denial") { app.notificationsRow().state == PermissionState.DENIED }

        // Asked once and refused: the next step is the system settings, not the dialog again.
        val settings = assertNotNull(app.notificationsRow().fix)
        assertEquals(Action.OpenPermissionSettings(Permission.NOTIFICATIONS), settings.action)
        compose.await(10_000) {
            compose.onAllNodes(hasText(settings.label) and hasAnyAncestor(hasTestTag(ScreenTags.permission("notifications"))))
                .fetchSemanticsNodes().isNotEmpty()
        }
        assumeTrue("the settings page is the phone's own screen here", app.system.answersSystemScreens)
        tapTheNotificationsButton(app, settings.label)
        var opened: Intent? = null
        waitFor("the settings page") {
            // The screens started so far: the permission dialog's request first, then this one.
            while (opened == null) {
                val next = app.system.nextStartedActivity(scenario.activity()) ?: break
                if (next.action == Settings.ACTION_APP_NOTIFICATION_SETTINGS) opened = next
            }
            opened != null
        }
        assertEquals(Settings.ACTION_APP_NOTIFICATION_SETTINGS, opened!!.action)
        assertEquals(app.app.packageName, opened!!.getStringExtra(Settings.EXTRA_APP_PACKAGE))
    }
}

/** The core's wake-up through AlarmManager: exact only when the system allows it. */
@RunWith(AndroidJUnit4::class)
class WakeAlarmJourneysTest {
    private val inAnHour = System.currentTimeMillis() + 3_600_000

    @After fun cancel() = WakeAlarms(androidx.test.core.app.ApplicationProvider.getApplicationContext()).cancel()

    @Test fun an_exact_wake_up_is_set_exact_when_the_system_allows_exact_alarms() {
        val app = JourneyApp()
        assumeTrue("this system cannot be told to allow exact alarms", app.system.allowExactAlarms(true))
        app.platform().armWakeUp(inAnHour, true)
        assertEquals(SystemAlarm(inAnHour, exact = true), app.system.nextAlarm())
        assertEquals(ArmedWakeUp(inAnHour, AlarmApi.EXACT), app.platform().alarms.armed())
        assertEquals(PermissionState.GRANTED, app.platform().permissionState(Permission.EXACT_ALARM))
    }

    @Test fun an_exact_wake_up_falls_back_to_an_inexact_alarm_when_exact_alarms_are_not_allowed() {
        val app = JourneyApp()
        assumeTrue("this system cannot be told to refuse exact alarms", app.system.allowExactAlarms(false))
        app.platform().armWakeUp(inAnHour, true)
        assertEquals(SystemAlarm(inAnHour, exact = false), app.system.nextAlarm())
        assertEquals(ArmedWakeUp(inAnHour, AlarmApi.INEXACT), app.platform().alarms.armed())
        assertEquals(PermissionState.DENIED, app.platform().permissionState(Permission.EXACT_ALARM))
    }

    @Test fun an_inexact_wake_up_stays_inexact_even_when_exact_alarms_are_allowed() {
        val app = JourneyApp()
        assumeTrue(app.system.allowExactAlarms(true))
        app.platform().armWakeUp(inAnHour, false)
        assertEquals(SystemAlarm(inAnHour, exact = false), app.system.nextAlarm())
    }

    @Test fun cancelling_the_wake_up_removes_the_alarm() {
        val app = JourneyApp()
        app.platform().armWakeUp(inAnHour, false)
        assertNotNull(app.system.nextAlarm())
        app.platform().cancelWakeUp()
        assertNull(app.system.nextAlarm())
        assertNull(app.platform().alarms.armed())
        assertNull(WakeAlarms.existingWakeIntent(app.app), "the PendingIntent is gone")
    }

    @Test fun a_new_job_arms_the_wake_up_for_its_first_run() {
        val app = JourneyApp()
        val before = System.currentTimeMillis()
        app.harness.addJob(everyMinutesJob(30))
        val at = assertNotNull(app.system.nextAlarm(), "an alarm armed").atEpochMs
        assertTrue(at in before + 29 * 60_000..System.currentTimeMillis() + 30 * 60_000, "armed for ${at - before} ms from now")
        assertEquals(at, app.platform().alarms.armed()?.atEpochMs)
    }
}

/** A job checking the campus card every [minutes] minutes (a read tool: no approval needed). */
fun everyMinutesJob(minutes: Int) = """{"name":"校园卡余额","schedule":{"everyMinutes":$minutes},"timeZone":"UTC",
    "check":{"tool":"wallet.cardBalance","when":{"path":"balanceYuan","op":"lt","value":50},
    "notify":{"title":"校园卡余额不足","body":"余额还剩 {balanceYuan} 元"}}}"""

/** The receivers: the alarm's, and those that re-arm it after what loses or shifts it. */
@RunWith(AndroidJUnit4::class)
class ReceiverJourneysTest {
    /**
     * A job that fell due while nothing woke the app (the phone was off, or the clock jumped past
     * it), then [action] broadcast: the receiver runs it (its notification is posted) and the
     * core arms the wake-up for the job's next run.
     */
    private fun runsTheDueJobAndRearmsAfter(action: String) {
        val app = JourneyApp()
        app.system.grantNotifications()
        val job = app.harness.addJob(everyMinutesJob(1))
        val first = assertNotNull(app.system.nextAlarm(), "the job's wake-up").atEpochMs
        // The alarm never fires here: only the broadcast below can run the job.
        Thread.sleep(maxOf(0, first - System.currentTimeMillis()) + 500)

        app.app.sendBroadcast(Intent(action).setClass(app.app, RearmReceiver::class.java))
        val manager = app.app.getSystemService(NotificationManager::class.java)
        waitFor("the job's notification after $action", 30_000) { manager.activeNotifications.any { it.tag == "job-$job" } }
        waitFor("the next wake-up armed after $action") { (app.system.nextAlarm()?.atEpochMs ?: 0) > first }
        val next = app.system.nextAlarm()!!.atEpochMs
        assertTrue(next - first in 59_000..121_000, "the next run a minute on, not ${next - first} ms")
    }

    @Test fun after_a_reboot_the_missed_job_runs_and_the_wake_up_is_armed_again() =
        runsTheDueJobAndRearmsAfter(Intent.ACTION_BOOT_COMPLETED)

    @Test fun after_the_clock_is_set_the_due_job_runs_and_the_wake_up_is_armed_again() =
        runsTheDueJobAndRearmsAfter(Intent.ACTION_TIME_CHANGED)

    @Test fun after_the_time_zone_changes_the_due_job_runs_and_the_wake_up_is_armed_again() =
        runsTheDueJobAndRearmsAfter(Intent.ACTION_TIMEZONE_CHANGED)

    @Test fun the_rearm_receiver_ignores_any_other_broadcast() {
        val app = JourneyApp()
        app.harness.addJob(everyMinutesJob(30))
        app.platform().alarms.cancel()
        app.app.sendBroadcast(Intent("edu.pku.harness.action.SOMETHING_ELSE").setClass(app.app, RearmReceiver::class.java))
        // Given time to go wrong: nothing arms the alarm.
        repeat(10) { app.system.idleMainThread(); Thread.sleep(50) }
        assertNull(app.system.nextAlarm())
    }

    @Test fun the_wake_up_runs_the_due_job_and_its_notification_is_posted_on_the_jobs_channel() {
        val app = JourneyApp()
        app.system.grantNotifications()
        // What the app reports when it comes to the front: the core posts a check's notification
        // only while notifications are on.
        app.harness.reportPermission(Permission.NOTIFICATIONS, app.platform().permissionState(Permission.NOTIFICATIONS))
        // The earliest a one-shot job may be: the next whole minute, at least 5 s away.
        val at = Instant.now().plusSeconds(5).plus(1, ChronoUnit.MINUTES).truncatedTo(ChronoUnit.MINUTES)
        val local = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC).format(at)
        val job = app.harness.addJob(
            """{"name":"校园卡余额低于 50 元","schedule":{"at":"$local"},"timeZone":"UTC",
            "check":{"tool":"wallet.cardBalance","when":{"path":"balanceYuan","op":"lt","value":50},
            "notify":{"title":"校园卡余额不足","body":"余额还剩 {balanceYuan} 元"}}}""",
        )
        assertEquals(at.toEpochMilli(), app.system.nextAlarm()?.atEpochMs, "the core armed the wake-up for it")
        Thread.sleep(maxOf(0, at.toEpochMilli() - System.currentTimeMillis()) + 500)

        // What the alarm's PendingIntent delivers.
        app.app.sendBroadcast(Intent(app.app, WakeReceiver::class.java).setAction(WakeReceiver.ACTION))
        val manager = app.app.getSystemService(NotificationManager::class.java)
        val tag = "job-$job"
        waitFor("the job's notification, tag $tag", 30_000) { manager.activeNotifications.any { it.tag == tag } }
        val posted = manager.activeNotifications.single { it.tag == tag }
        assertEquals(tag.hashCode(), posted.id)
        assertEquals(JobNotifications.CHANNEL, posted.notification.channelId)
        assertEquals("校园卡余额不足", posted.notification.extras.getCharSequence(Notification.EXTRA_TITLE).toString())
        assertEquals("余额还剩 42.5 元", posted.notification.extras.getCharSequence(Notification.EXTRA_TEXT).toString())
        assertNotNull(manager.getNotificationChannel(JobNotifications.CHANNEL), "the jobs channel exists")
        // The one-shot job is done: nothing is left to wake up for.
        waitFor("the wake-up cancelled") { app.system.nextAlarm() == null }
    }
}

/** The document picker (the Storage Access Framework), its answer attached or refused by the core. */
@RunWith(AndroidJUnit4::class)
class DocumentJourneysTest {
    @get:Rule val compose = createEmptyComposeRule()

    private fun pick(app: JourneyApp, name: String, bytes: ByteArray): Intent {
        assumeTrue("the picker is the phone's own screen here", app.system.answersSystemScreens)
        val scenario = app.launch()
        compose.waitForTheChat()
        compose.onNodeWithTag(ChatTags.ATTACH).performClick()
        var picker: Intent? = null
        val uri = documentUri(app.app, name, bytes)
        waitFor("the document picker") {
            picker = app.system.answerActivityForResult(scenario.activity(), Intent().setData(uri))
            picker != null
        }
        return picker!!
    }

    @Test fun a_picked_markdown_file_is_attached_to_the_conversation() {
        val app = JourneyApp()
        val picker = pick(app, "notes.md", "# 高数\n第三章".toByteArray())
        assertEquals(Intent.ACTION_OPEN_DOCUMENT, picker.action)
        assertEquals(AndroidPhoneActions.DOCUMENT_TYPES.toList(), picker.getStringArrayExtra(Intent.EXTRA_MIME_TYPES)?.toList())
        compose.await(15_000) { app.chat().documents == listOf("notes.md") }
        compose.await { compose.onAllNodes(hasTestTag(ChatTags.DOCUMENTS) and hasText("notes.md", substring = true)).fetchSemanticsNodes().isNotEmpty() }
    }

    @Test fun a_picked_pdf_that_does_not_parse_is_refused_with_the_cores_words_and_nothing_is_attached() {
        val app = JourneyApp()
        pick(app, "课表.pdf", "%PDF-1.7".toByteArray())
        val refusal = "文件“课表.pdf”不是能读取的 PDF，没有添加"
        compose.await(15_000) { compose.onAllNodes(hasText(refusal)).fetchSemanticsNodes().isNotEmpty() }
        compose.onNodeWithTag(MESSAGE_TAG).assertTextEquals(refusal)
        assertEquals(emptyList(), app.chat().documents)
    }

    @Test fun a_picked_file_over_16_mib_is_refused_before_it_is_read_whole() {
        val app = JourneyApp()
        pick(app, "big.md", ByteArray(MAX_DOCUMENT_BYTES + 1) { 'a'.code.toByte() })
        val refusal = "\"big.md\" is larger than 16 MiB; pick a smaller file"
        compose.await(15_000) { compose.onAllNodes(hasText(refusal, substring = true)).fetchSemanticsNodes().isNotEmpty() }
        assertEquals(emptyList(), app.chat().documents)
    }
}

/** Secrets through the Platform: sealed by the app's key, never plaintext on the app's disk. */
@RunWith(AndroidJUnit4::class)
class SecretJourneysTest {
    @Test fun a_secret_the_core_stores_is_sealed_and_no_file_of_the_app_holds_its_plaintext() {
        val app = JourneyApp()
        val value = "sk-journey-0042-secret"
        app.platform().writeSecret("model.apiKey", value)
        assertEquals(value, app.platform().readSecret("model.apiKey"))
        // Everything the app wrote: its files, its no-backup files, its databases and prefs.
        val dataDir = app.app.filesDir.parentFile!!
        val files = dataDir.walkTopDown().filter { it.isFile }.toList()
        assertTrue(files.any { it.parentFile?.name == "secrets" }, "a sealed secret file in $files")
        for (file in files) {
            val bytes = String(file.readBytes(), Charsets.ISO_8859_1)
            assertTrue(!bytes.contains(value), "plaintext of the secret in $file")
            assertTrue(!bytes.contains("model.apiKey"), "the secret's name in $file")
        }
    }

    @Test fun a_secret_deleted_through_the_platform_leaves_no_file() {
        val app = JourneyApp()
        app.platform().writeSecret("campus.token", "t-1")
        val file = app.app.secrets.fileFor("campus.token")
        assertTrue(file.exists())
        app.platform().writeSecret("campus.token", null)
        assertTrue(!file.exists())
        assertNull(app.platform().readSecret("campus.token"))
    }
}

/** A screen the core asks the app to open (the settings plugin's openScreen tool). */
@RunWith(AndroidJUnit4::class)
class OpenScreenJourneysTest {
    @get:Rule val compose = createEmptyComposeRule()

    @Test fun the_model_opening_the_api_keys_screen_shows_the_model_page() {
        ScriptedModelServer(callOf("settings__openScreen", """{"screen":"api-keys"}"""), answerOf("已打开设置。")).use { model ->
            val app = JourneyApp(model)
            app.launch()
            compose.waitForTheChat()
            compose.onNodeWithTag(ChatTags.DRAFT).performTextInput("帮我打开 API 密钥设置")
            compose.onNodeWithTag(ChatTags.SEND).performClick()
            compose.await(15_000) { app.app.navigator.route.value == Route.MODEL }
            // The model page's endpoint field is on screen (read without waiting for the screen to
            // be idle: the running turn's progress indicator never is).
            compose.await(15_000) { compose.onAllNodes(hasTestTag(ScreenTags.ENDPOINT)).fetchSemanticsNodes().isNotEmpty() }
        }
    }

    @Test fun a_route_the_app_lacks_opens_nothing() {
        val app = JourneyApp()
        app.launch()
        app.platform().openScreen("no-such-screen")
        compose.waitForIdle()
        assertEquals(Route.CHAT, app.app.navigator.route.value)
    }
}
