package edu.pku.harness

import edu.pku.harness.core.Action
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.RefusalCode
import org.junit.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertNotNull
import kotlin.test.assertTrue

/** Settings, memory, consent, documents, jobs and data sources across the FFI. */
class StateTest {
    private val lowBalance = """{"name":"校园卡余额低于 50 元","schedule":{"everyMinutes":60},
        "check":{"tool":"wallet.cardBalance","when":{"path":"balanceYuan","op":"lt","value":50},
        "notify":{"title":"校园卡余额不足","body":"余额还剩 {balanceYuan} 元"}}}"""

    @Test fun a_setting_changes_and_a_bad_value_is_refused_naming_the_key() {
        val harness = sampleHarness()
        assertTrue(harness.settingsJson().contains("\"timeZone\":\"Asia/Shanghai\""))
        harness.changeSetting("timeZone", "\"Europe/London\"")
        assertTrue(harness.settingsJson().contains("\"timeZone\":\"Europe/London\""))
        val error = assertFailsWith<HarnessException.InvalidArgument> { harness.changeSetting("timeZone", "\"Mars\"") }
        assertEquals("settings key \"timeZone\": \"Mars\" is not an IANA time zone name (for example Asia/Shanghai)", error.reason)
    }

    @Test fun a_memory_written_after_untrusted_content_waits_for_approval() = runTest {
        val harness = sampleHarness()
        val listener = RecordingListener()
        val subscription = harness.subscribe(listener)
        harness.invokeAsAgent("c1", "mcp-forum.latestPosts", "{}")
        val written = harness.invokeAsAgent("c1", "memory.write", """{"text":"用户要充值"}""")
        assertTrue(written.resultJson()!!.contains("\"state\":\"pending\""))
        val pending = harness.memories().single()
        assertEquals(listOf("pending", "c1"), listOf(pending.state, pending.conversation))
        assertEquals(
            listOf(HarnessEvent.MemoryPending(pending.id, "c1")),
            listener.events.filterIsInstance<HarnessEvent.MemoryPending>(),
        )
        subscription.close()
        assertEquals("active", harness.decideMemory(pending.id, true).state)
        val error = assertFailsWith<HarnessException.InvalidArgument> { harness.decideMemory(pending.id, false) }
        assertEquals("memory ${pending.id} is active, not pending", error.reason)
    }

    @Test fun the_student_signs_in_to_the_campus_and_out_again_through_the_screens() = runTest {
        val harness = developmentHarness(campusOrigin = startCampusSimulator())
        harness.changeSetting("language", "\"en\"")
        assertFalse(harness.consentScreen().campusSignedIn)
        assertEquals("Not signed in", harness.consentScreen().campusState)
        val wrong = assertFailsWith<HarnessException.InvalidArgument> {
            harness.act(Action.CampusSignIn("2100012345", "not-the-password", false))
        }
        assertEquals("the student id or password is wrong (E01)", wrong.reason)
        assertEquals(null, harness.campusAccountScreen().signedIn)

        harness.act(Action.CampusSignIn("2100012345", "pku-demo-password", false))
        val signed = assertNotNull(harness.campusAccountScreen().signedIn)
        assertEquals("2100012345", signed.account)
        assertEquals(listOf("Campus portal", "Campus card", "Treehole", "Shuttle bus", "Course website"), signed.services.map { it.label })
        assertTrue(harness.consentScreen().campusSignedIn)
        assertEquals("Signed in as 2100012345", harness.consentScreen().campusState)

        harness.act(signed.signOut.action)
        assertNotNull(harness.campusAccountScreen().form)
        assertFalse(harness.consentScreen().campusSignedIn)
        harness.shutdown()
    }

    @Test fun cloud_consent_needs_an_installed_plugin() = runTest {
        val harness = sampleHarness()
        harness.setCloudConsent("canteen", true)
        assertFailsWith<HarnessException.NotFound> { harness.setCloudConsent("nope", true) }
    }

    @Test fun a_due_check_runs_as_a_scheduled_read_and_the_alarm_is_exact_once_allowed() = runTest {
        val platform = ScriptedPlatform()
        val harness = sampleHarness(platform)
        harness.reportPermission(Permission.EXACT_ALARM, PermissionState.GRANTED)
        harness.reportPermission(Permission.NOTIFICATIONS, PermissionState.GRANTED)
        val job = harness.addJob(lowBalance)
        assertTrue(platform.wakeUps.last() != null)
        assertEquals(true, platform.exactWakeUps.last())
        val runs = harness.runDue(platform.wakeUps.last()!!)
        assertEquals(listOf(job), runs.map { it.job })
        assertTrue(runs[0].outcomeJson.contains("余额还剩 42.5 元"), runs[0].outcomeJson)
        assertEquals(
            listOf(AppNotification("job-$job", "校园卡余额不足", "余额还剩 42.5 元", null)),
            platform.notifications.toList(),
        )
        assertEquals(0, platform.prompts.size)
    }

    @Test fun a_due_check_with_notifications_off_posts_nothing_and_is_recorded_as_not_shown() = runTest {
        val platform = ScriptedPlatform()
        val harness = sampleHarness(platform)
        harness.reportPermission(Permission.NOTIFICATIONS, PermissionState.DENIED)
        val job = harness.addJob(lowBalance)
        val runs = harness.runDue(platform.wakeUps.last()!!)
        assertEquals(listOf(job), runs.map { it.job })
        assertTrue(runs[0].outcomeJson.startsWith("{\"status\":\"notShown\""), runs[0].outcomeJson)
        assertEquals(emptyList(), platform.notifications.toList())
    }

    @Test fun a_scheduled_write_cannot_even_be_added() {
        val harness = sampleHarness()
        val spec = """{"name":"x","schedule":{"everyMinutes":5},"check":{"tool":"wallet.recharge","args":{"amountYuan":5},"when":{"path":"status","op":"exists"},"notify":{"title":"t","body":"b"}}}"""
        val error = assertFailsWith<HarnessException.InvalidArgument> { harness.addJob(spec) }
        assertTrue(error.reason.contains("scheduled runs only read"), error.reason)
    }

    @Test fun a_widget_reads_a_data_source_through_the_cache() = runTest {
        val harness = sampleHarness()
        assertTrue(harness.useToolData("canteen", "crowd").contains("crowdPercent"))
        assertFailsWith<HarnessException.NotFound> { harness.useToolData("canteen", "menu") }
    }

    @Test fun an_attached_document_is_searched_through_the_files_plugin_and_taints_the_turn() = runTest {
        val harness = sampleHarness()
        val doc = harness.attachDocument("c1", "通知.txt", "下周三讲座在二教")
        val found = harness.invokeAsAgent("c1", "files.search", """{"document":$doc,"query":"讲座"}""")
        assertTrue(found.resultJson()!!.contains("\"page\":1"))
        assertEquals(true, harness.conversation("c1").tainted)
    }
}
