package edu.pku.harness.app

import androidx.compose.ui.test.hasAnyAncestor
import androidx.compose.ui.test.hasClickAction
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.isEnabled
import androidx.compose.ui.test.junit4.createComposeRule
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.onNodeWithText
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performTextInput
import androidx.test.ext.junit.runners.AndroidJUnit4
import androidx.test.platform.app.InstrumentationRegistry
import edu.pku.harness.Consent
import edu.pku.harness.Harness
import edu.pku.harness.core.Answer
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.ui.AppNavigator
import edu.pku.harness.ui.ApprovalHost
import edu.pku.harness.ui.ApprovalTags
import edu.pku.harness.ui.ChatTags
import edu.pku.harness.ui.HarnessApp
import edu.pku.harness.ui.PhoneActions
import edu.pku.harness.ui.PickedDocument
import org.junit.Rule
import org.junit.Test
import org.junit.runner.RunWith
import java.io.File
import kotlin.test.assertEquals
import kotlin.test.assertTrue

private const val SEATS = """{"canteen":"学一食堂","seats":2,"time":"12:00"}"""
private val RESERVE_CALL = """{"tool_calls":[{"index":0,"id":"call_1","type":"function",""" +
    """"function":{"name":"canteen__reserve","arguments":${jsonString(SEATS)}}}]}"""

/** The phone's system screens are not part of this test: reaching one fails it. */
private object NoSystemScreens : PhoneActions {
    override suspend fun requestPermission(permission: Permission): PermissionState {
        throw AssertionError("the turn asked for a system permission")
    }

    override fun openPermissionSettings(permission: Permission) {
        throw AssertionError("the turn opened the system settings")
    }

    override suspend fun pickDocument(): PickedDocument? {
        throw AssertionError("the turn opened the document picker")
    }
}

/**
 * A whole turn on the phone: the student's message, the model (a scripted server on
 * 127.0.0.1) calling a write tool, the core asking through AndroidPlatform, the sheet answered
 * Allow with a tap, and the tool's result back to the model, with the API key read from the
 * Keystore-sealed store.
 */
@RunWith(AndroidJUnit4::class)
class ChatApprovalTest {
    @get:Rule val compose = createComposeRule()
    private val context = InstrumentationRegistry.getInstrumentation().targetContext

    @Test fun allow_on_the_sheet_runs_the_tool_and_the_model_gets_its_result() {
        val dir = File(context.cacheDir, "chat-test-${System.nanoTime()}")
        ScriptedModelServer(
            listOf(chunk(RESERVE_CALL), chunk("{}", "tool_calls"), "[DONE]"),
            listOf(chunk("""{"content":"订好了：两个座位。"}""", "stop"), "[DONE]"),
        ).use { model ->
            val approvals = ApprovalHost()
            val navigator = AppNavigator()
            // Its own data and secrets, beside the app's; the alarm is the app's one PendingIntent.
            val platform = AndroidPlatform(context, approvals, navigator, secrets = KeystoreSecrets(File(dir, "secrets")))
            platform.writeSecret("model.apiKey", "sk-android")
            val harness = Harness.open(File(dir, "harness").path, platform)
            platform.harness = harness
            val withdrawals = harness.subscribe(approvals.listener)
            harness.installSamplePlugins()
            harness.setConsent(Consent(termsAccepted = true, met = listOf("campus-session")))
            harness.changeSetting("model.endpoint", jsonString(model.endpoint))
            harness.changeSetting("model.name", "\"qwen-plus\"")

            compose.setContent { HarnessApp(harness, approvals, NoSystemScreens, navigator) }
            compose.onNodeWithTag(ChatTags.DRAFT).performTextInput("帮我在学一订两个座位")
            compose.onNodeWithTag(ChatTags.SEND).performClick()

            // The sheet's answers take taps a moment after it appears (ANSWER_DELAY_MS).
            compose.waitUntil(15_000) {
                compose.onAllNodes(hasClickAction() and isEnabled() and hasAnyAncestor(hasTestTag(ApprovalTags.SHEET)))
                    .fetchSemanticsNodes().isNotEmpty()
            }
            val prompt = approvals.current!!.prompt
            assertEquals("canteen.reserve", prompt.tool)
            assertEquals(SEATS, prompt.inputJson)
            compose.onNodeWithTag(ApprovalTags.answer(Answer.ALLOW)).performClick()

            compose.waitUntil(15_000) {
                compose.onAllNodes(hasTestTag(ApprovalTags.SHEET)).fetchSemanticsNodes().isEmpty() &&
                    compose.onAllNodes(hasText("订好了：两个座位。")).fetchSemanticsNodes().isNotEmpty()
            }
            compose.onNodeWithText("R-20261130-0042", substring = true).assertExists()
            assertEquals(2, model.bodies.size)
            assertTrue(model.bodies[1].contains("R-20261130-0042"), model.bodies[1])
            assertEquals(listOf<String?>("Bearer sk-android", "Bearer sk-android"), model.keys.toList())

            withdrawals.cancel()
            harness.shutdown()
        }
        dir.deleteRecursively()
    }
}
