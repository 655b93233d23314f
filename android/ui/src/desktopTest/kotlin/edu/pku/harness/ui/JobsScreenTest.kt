package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.SkikoComposeUiTest
import androidx.compose.ui.test.assert
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import androidx.compose.ui.test.performTextInput
import edu.pku.harness.core.Language
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.Route
import kotlin.test.assertEquals
import kotlin.test.assertTrue
import org.junit.Test

private const val DAY_MS = 24 * 3_600_000L

/** The words of the jobs screen in each language, as the core writes them. */
private class JobWords(language: Language) {
    private val zh = language == Language.ZH
    val off = if (zh) "通知已关闭：任务的提醒不会显示，也不会记为已提醒。"
        else "Notifications are off: a job's notification is not shown, and is not recorded as notified."
    val notice = if (zh) "提醒不会显示：通知已关闭" else "Its notification will not be shown: notifications are off"
    val notShown = if (zh) "条件满足，但没有显示提醒：通知已关闭"
        else "Condition met, but the notification was not shown: notifications are off"
    val notified = if (zh) "已提醒" else "Notified"
    val noName = if (zh) "请修改「名称」：写一个 1 到 100 个字的名称"
        else "Change “Name”: give it a name of 1 to 100 characters"
    /** The notification's words the core writes for 校园卡余额 · 余额 · 低于 · 50. */
    val title = if (zh) "校园卡余额" else "Card balance"
    val body = if (zh) "校园卡余额低于 50 元：现在 {余额} 元" else "Card balance is below 50 yuan: now {Balance} yuan"
    val notification = if (zh) "校园卡余额低于 50 元：现在 42.5 元" else "Card balance is below 50 yuan: now 42.5 yuan"
    val summary = if (zh) "每天 09:00 检查校园卡余额，校园卡余额低于 50 元时提醒"
        else "Every day at 09:00: check Card balance, notify when Card balance is below 50 yuan"
}

/**
 * Opens the jobs screen and builds a daily balance check below 50 yuan from the form's choices
 * (issue 37.3): watch 校园卡余额, its 余额, 低于, 50 in 元 — no field or template typed; the
 * notification's words are the core's, shown in the form.
 */
@OptIn(ExperimentalTestApi::class)
private fun SkikoComposeUiTest.fillTheForm(app: App, name: String) {
    app.navigator.open(Route.JOBS)
    waitUntil("the jobs screen", 10_000) { app.models.jobs.model != null }
    val form = app.models.jobs.model!!.form
    assertEquals(edu.pku.harness.core.JobKind.REMINDER, form.kinds.first().kind, "a reminder is offered first")
    onNodeWithTag(JobTags.kind(1)).performScrollTo().performClick()
    val wallet = form.sources.indexOfFirst { it.plugin == "wallet" }
    assertTrue(wallet >= 0, "the card balance is offered")
    onNodeWithTag(JobTags.source(wallet)).performScrollTo().performClick()
    val balance = form.sources[wallet].fields.indexOfFirst { it.key == "balanceYuan" }
    assertTrue(balance >= 0, "its balance is offered by its words")
    onNodeWithTag(JobTags.field(balance)).performScrollTo().performClick()
    if (name.isNotEmpty()) onNodeWithTag(JobTags.NAME).performScrollTo().performTextInput(name)
    onNodeWithTag(JobTags.schedule(0)).performScrollTo().performClick()
    onNodeWithTag(JobTags.WHEN).performScrollTo().performTextInput("09:00")
    onNodeWithTag(JobTags.comparison(0)).performScrollTo().performClick()
    onNodeWithTag(JobTags.VALUE).performScrollTo().performTextInput("50")
}

/** The jobs screen's form and its notifications note, through the real library. */
@OptIn(ExperimentalTestApi::class)
class JobsScreenTest {
    @Test fun a_job_added_with_notifications_off_says_so_and_its_run_is_not_recorded_as_notified() {
        for (language in listOf(Language.ZH, Language.EN)) App(language).use { app ->
            val words = JobWords(language)
            app.platform.permissions[Permission.NOTIFICATIONS] = PermissionState.DENIED
            app.harness.reportPermission(Permission.NOTIFICATIONS, PermissionState.DENIED)
            runPhoneTest {
                show(app)
                fillTheForm(app, "余额提醒")
                onNodeWithTag(JobTags.ADD).performScrollTo().performClick()
                waitUntil("the job", 10_000) { app.models.jobs.model?.jobs?.size == 1 }
                val id = app.models.jobs.model!!.jobs.single().id
                onNodeWithTag(JobTags.NOTIFICATIONS_NOTE).performScrollTo().assertTextEquals(words.off)
                onNodeWithTag(JobTags.notice(id)).performScrollTo().assertTextEquals(words.notice)
                saveScreenshot("jobs-added-notifications-off", language)

                val runs = kotlinx.coroutines.runBlocking { app.harness.runDue(System.currentTimeMillis() + 2 * DAY_MS) }
                assertEquals(1, runs.size)
                assertTrue(runs.single().outcomeJson.contains("\"status\":\"notShown\""), runs.single().outcomeJson)
                assertEquals(emptyList(), app.platform.notifications.toList())
                app.models.jobs.refresh()
                waitUntil("the run's outcome", 10_000) { app.models.jobs.model?.jobs?.single()?.lastOutcome == words.notShown }
                onNodeWithTag(JobTags.outcome(id)).performScrollTo().assertTextEquals(words.notShown)
                saveScreenshot("jobs-not-shown", language)

                // The note's tap opens the permissions screen.
                onNodeWithTag(JobTags.NOTIFICATIONS_FIX).performScrollTo().performClick()
                waitUntil("the permissions screen", 10_000) { app.navigator.route.value == Route.CONSENT }
            }
        }
    }

    @Test fun with_notifications_on_a_job_from_the_form_notifies_and_a_refused_one_names_the_field() {
        for (language in listOf(Language.ZH, Language.EN)) App(language).use { app ->
            val words = JobWords(language)
            app.platform.permissions[Permission.NOTIFICATIONS] = PermissionState.GRANTED
            app.harness.reportPermission(Permission.NOTIFICATIONS, PermissionState.GRANTED)
            runPhoneTest {
                show(app)
                fillTheForm(app, "")
                onNodeWithTag(JobTags.TITLE).performScrollTo().assert(hasText(words.title))
                onNodeWithTag(JobTags.BODY).performScrollTo().assert(hasText(words.body))
                saveScreenshot("jobs-form", language)
                onNodeWithTag(JobTags.ADD).performScrollTo().performClick()
                waitUntil("the refusal", 10_000) { app.models.jobs.message != null }
                assertEquals(words.noName, app.models.jobs.message)
                onNodeWithTag(MESSAGE_TAG).assertTextEquals(words.noName)
                assertEquals(emptyList(), app.models.jobs.model!!.jobs)
                saveScreenshot("jobs-refused", language)

                onNodeWithTag(JobTags.NAME).performScrollTo().performTextInput("余额提醒")
                onNodeWithTag(JobTags.ADD).performScrollTo().performClick()
                waitUntil("the job", 10_000) { app.models.jobs.model?.jobs?.size == 1 }
                val row = app.models.jobs.model!!.jobs.single()
                assertEquals(words.summary, row.summary)
                onNodeWithTag(JobTags.summary(row.id)).performScrollTo().assertTextEquals(words.summary)
                saveScreenshot("jobs-card", language)
                assertEquals(null, row.notice)
                assertEquals(null, app.models.jobs.model!!.notificationsNote)
                kotlinx.coroutines.runBlocking { app.harness.runDue(System.currentTimeMillis() + 2 * DAY_MS) }
                assertEquals(listOf(words.title to words.notification), app.platform.notifications.map { it.title to it.body })
                app.models.jobs.refresh()
                waitUntil("the run's outcome", 10_000) { app.models.jobs.model?.jobs?.single()?.lastOutcome == words.notified }
                onNodeWithTag(JobTags.outcome(row.id)).performScrollTo().assertTextEquals(words.notified)
            }
        }
    }
}
