package edu.pku.harness

import edu.pku.harness.core.Actor
import edu.pku.harness.core.Answer
import edu.pku.harness.core.ConversationSettings
import edu.pku.harness.core.Effect
import edu.pku.harness.core.Mode
import edu.pku.harness.core.ModeSource
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.Preset
import edu.pku.harness.core.RefusalCode
import org.junit.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.fail

/** Opening, closing, and use after close. */
class LifecycleTest {
    @Test fun open_refuses_an_empty_data_directory() {
        val error = assertFailsWith<HarnessException.InvalidArgument> { Harness.open("", ScriptedPlatform()) }
        assertEquals("data_dir: must not be empty", error.reason)
    }

    @Test fun a_mode_set_before_shutdown_is_kept_when_the_data_directory_is_reopened() = runTest {
        val dir = newDataDir()
        val first = developmentHarness(dir)
        first.installSamplePlugins()
        first.setConsent(Consent(termsAccepted = true, met = emptyList()))
        first.setMode("wallet", Effect.MONEY, Mode.OFF)
        first.openConversation("c1")
        first.shutdown()
        // Plugins, modes, consent and conversations come back from the directory.
        val second = developmentHarness(dir)
        assertEquals(listOf("canteen", "mcp-forum", "wallet"), second.plugins().samples().map { it.id })
        assertEquals(ModeRow(Effect.MONEY, Mode.OFF, ModeSource.USER), second.plugins().first { it.id == "wallet" }.modes[2])
        assertEquals(RefusalCode.BLOCKED, second.invokeAsAgent("c1", "wallet.recharge", """{"amountYuan":5}""").refusal())
        second.shutdown()
    }

    @Test fun the_apps_harness_has_no_sample_plugin_and_cannot_install_one() {
        val harness = Harness.open(newDataDir(), ScriptedPlatform())
        // The core's own plugins and the app's shipped TypeScript ones: no sample.
        assertEquals(SHIPPED, harness.plugins().samples().map { it.id })
        val error = assertFailsWith<HarnessException.InvalidArgument> { harness.installSamplePlugins() }
        assertEquals(
            "sample_plugins: the samples are for tests; open the Harness with open_for_development and DevelopmentOptions.sample_plugins",
            error.reason,
        )
        // The app reports what the phone provides; the campus session is not among it.
        val campus = assertFailsWith<HarnessException.InvalidArgument> {
            harness.setConsent(Consent(termsAccepted = true, met = listOf("campus-session")))
        }
        assertEquals(
            "met: campus-session is not the phone's to report; the student signs in on the campus account screen",
            campus.reason,
        )
        harness.shutdown()
    }

    @Test fun ping_crosses_the_boundary_and_returns() {
        assertEquals(Unit, sampleHarness().ping())
    }

    @Test fun installing_the_samples_twice_is_an_invalid_argument_naming_the_plugin() {
        val harness = sampleHarness()
        val error = assertFailsWith<HarnessException.InvalidArgument> { harness.installSamplePlugins() }
        assertEquals(
            "plugin \"canteen\": id: duplicate plugin id: a plugin with this id is already installed",
            error.reason,
        )
    }

    @Test fun json_that_does_not_parse_is_an_invalid_argument_naming_it() = runTest {
        val harness = sampleHarness()
        val error = assertFailsWith<HarnessException.InvalidArgument> { harness.invokeAsUser("wallet.recharge", "{amountYuan: 5}") }
        assertEquals("input_json: not valid JSON (key must be a string at line 1 column 2)", error.reason)
        assertFailsWith<HarnessException.NotFound> { harness.invokeAsAgent("nope", "wallet.cardBalance", "{}") }
    }

    @Test fun after_shutdown_every_method_fails_with_closed() = runTest {
        val platform = ScriptedPlatform()
        val harness = sampleHarness(platform)
        val subscription = harness.subscribe(RecordingListener())
        harness.shutdown()
        harness.shutdown()
        val calls: List<Pair<String, suspend () -> Unit>> = listOf(
            "ping" to { harness.ping() },
            "installSamplePlugins" to { harness.installSamplePlugins() },
            "plugins" to { harness.plugins() },
            "setMode" to { harness.setMode("wallet", Effect.MONEY, Mode.OFF) },
            "setEnabled" to { harness.setEnabled("wallet", false) },
            "removePlugin" to { harness.removePlugin("wallet") },
            "setRules" to { harness.setRules(listOf()) },
            "setConversationRules" to { harness.setConversationRules("c1", listOf()) },
            "openConversation" to { harness.openConversation("c2") },
            "conversation" to { harness.conversation("c1") },
            "setConversationSettings" to { harness.setConversationSettings("c1", ConversationSettings(preset = Preset.AUTO_EDIT)) },
            "setConversationScope" to { harness.setConversationScope("c1", Scope(listOf(), listOf(), listOf())) },
            "beginTurn" to { harness.beginTurn("c1") },
            "invokeAsUser" to { harness.invokeAsUser("wallet.cardBalance", "{}") },
            "invokeAsAgent" to { harness.invokeAsAgent("c1", "wallet.cardBalance", "{}") },
            "invokeAsScheduler" to { harness.invokeAsScheduler("wallet.cardBalance", "{}") },
            "decide" to { harness.decide(Actor.USER, "wallet.cardBalance", "{}", null) },
            "modelTools" to { harness.modelTools(null) },
            "acceptTerms" to { harness.acceptTerms() },
            "setConsent" to { harness.setConsent(Consent(true, listOf())) },
            "auditLog" to { harness.auditLog() },
            "subscribe" to { harness.subscribe(RecordingListener()) },
            "settingsJson" to { harness.settingsJson() },
            "changeSetting" to { harness.changeSetting("language", "\"en\"") },
            "memories" to { harness.memories() },
            "decideMemory" to { harness.decideMemory(1, true) },
            "setCloudConsent" to { harness.setCloudConsent("canteen", true) },
            "reportPermission" to { harness.reportPermission(Permission.NOTIFICATIONS, PermissionState.GRANTED) },
            "attachDocument" to { harness.attachDocument("c1", "a.txt", "text") },
            "attachFile" to { harness.attachFile("c1", "a.txt", "text".toByteArray()) },
            "addJob" to { harness.addJob("{}") },
            "runDue" to { harness.runDue(0) },
            "useToolData" to { harness.useToolData("canteen", "crowd") },
        )
        for ((name, call) in calls) {
            try {
                call()
                fail("$name succeeded after shutdown")
            } catch (e: HarnessException.Closed) {
                assertEquals("this Harness was closed; open a new one", e.reason, name)
            }
        }
        subscription.cancel() // a handle outliving its Harness is harmless
    }

    @Test fun a_harness_whose_handle_was_closed_fails_with_an_exception_not_a_crash() {
        val harness = sampleHarness()
        harness.close() // Kotlin's AutoCloseable: frees the handle
        assertFailsWith<IllegalStateException> { harness.ping() }
    }

    @Test fun shutdown_while_a_prompt_waits_lets_that_call_finish() = runTest {
        val platform = ScriptedPlatform()
        lateinit var harness: Harness
        platform.answerWith = { _, _ -> harness.shutdown(); Answer.ALLOW }
        harness = sampleHarness(platform)
        val call = harness.invokeAsAgent("c1", "canteen.reserve", SEATS)
        assertEquals(Outcome.Ran(RESERVED, RESERVED), call.outcome)
        assertFailsWith<HarnessException.Closed> { harness.invokeAsAgent("c1", "canteen.reserve", SEATS) }
    }
}
