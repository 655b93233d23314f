package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.SkikoComposeUiTest
import androidx.compose.ui.test.assertIsEnabled
import androidx.compose.ui.test.assertIsNotEnabled
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.onAllNodesWithTag
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.onNodeWithText
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performTextInput
import edu.pku.harness.Answer
import edu.pku.harness.ApprovalPrompt
import edu.pku.harness.Effect
import edu.pku.harness.Harness
import edu.pku.harness.HarnessEvent
import edu.pku.harness.PromptKind
import edu.pku.harness.RESERVED
import edu.pku.harness.SEATS
import edu.pku.harness.ScriptedModel
import edu.pku.harness.ScriptedPlatform
import edu.pku.harness.chunk
import edu.pku.harness.jsonString
import edu.pku.harness.sampleHarness
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlin.test.assertEquals
import kotlin.test.assertNull
import kotlin.test.assertTrue
import org.junit.Test

private const val ASK = "帮我在学一订两个座位"
private val RESERVE_CALL = """{"tool_calls":[{"index":0,"id":"call_1","type":"function",""" +
    """"function":{"name":"canteen__reserve","arguments":${jsonString(SEATS)}}}]}"""

/** The model asks to reserve seats, then answers with [answer] once the tool's result is back. */
private fun reservingModel(answer: String) = ScriptedModel(
    listOf(chunk(RESERVE_CALL), chunk("{}", "tool_calls"), "[DONE]"),
    listOf(chunk("""{"content":${jsonString(answer)}}""", "stop"), "[DONE]"),
)

/** The sample harness talking to [model], its prompts answered through an [ApprovalHost]. */
private class Phone(model: ScriptedModel) : AutoCloseable {
    val approvals = ApprovalHost()
    val platform = ScriptedPlatform().apply {
        answerWith = approvals::askApproval
        secrets["model.apiKey"] = "sk-ui"
    }
    val harness: Harness = sampleHarness(platform).apply {
        changeSetting("model.endpoint", jsonString(model.endpoint))
        changeSetting("model.name", "\"qwen-plus\"")
    }
    private val withdrawals = harness.subscribe(approvals.listener)
    val scope = CoroutineScope(SupervisorJob() + Dispatchers.Main)
    val chat = ChatModel(harness, "c1", scope)

    override fun close() {
        chat.close()
        withdrawals.cancel()
        scope.cancel()
        harness.shutdown()
    }
}

/** The agent's call that asks, through the real library, its sheet, and the chat. */
@OptIn(ExperimentalTestApi::class)
class ChatApprovalTest {
    private fun SkikoComposeUiTest.sendAndWaitForTheSheet(phone: Phone, labels: Labels): ApprovalPrompt {
        setContent { HarnessTheme { ChatRoute(phone.chat, phone.approvals, labels) } }
        onNodeWithTag(ChatTags.DRAFT).performTextInput(ASK)
        onNodeWithTag(ChatTags.SEND).performClick()
        waitUntil("the approval sheet", 10_000) { phone.approvals.current != null }
        waitForTheAnswers()
        return phone.approvals.current!!.prompt
    }

    @Test fun allow_on_the_sheet_runs_the_tool_and_the_chat_shows_its_result() {
        for (labels in listOf(ZhLabels, EnLabels)) reservingModel("订好了：两个座位。").use { model ->
            Phone(model).use { phone ->
                runPhoneTest {
                    val prompt = sendAndWaitForTheSheet(phone, labels)
                    assertEquals("canteen.reserve", prompt.tool)
                    assertEquals(SEATS, prompt.inputJson)
                    // The exact inputs, and exactly the answers the core offers.
                    onNodeWithTag(ApprovalTags.INPUTS).assertTextEquals(prettyJson(SEATS))
                    onNodeWithText(prompt.reason).assertExists()
                    assertEquals(listOf(Answer.ALLOW, Answer.DENY, Answer.ALWAYS_ALLOW), prompt.offers)
                    for (answer in Answer.entries) {
                        val buttons = onAllNodesWithTag(ApprovalTags.answer(answer)).fetchSemanticsNodes().size
                        assertEquals(if (answer in prompt.offers) 1 else 0, buttons, "buttons for $answer")
                    }
                    onNodeWithTag(ChatTags.CANCEL).assertExists()
                    saveScreenshot("approval", labels)

                    onNodeWithTag(ApprovalTags.answer(Answer.ALLOW)).performClick()
                    waitUntil("the turn's end", 10_000) { phone.chat.state.turnState == "done" }
                    onNodeWithTag(ApprovalTags.SHEET).assertDoesNotExist()
                    // The tool ran: its result went back to the model and is in the chat.
                    assertTrue(model.bodies[1].contains("R-20261130-0042"), model.bodies[1])
                    val call = phone.chat.state.items.filterIsInstance<ChatItem.ToolCall>().single()
                    assertEquals(
                        ChatItem.ToolCall(
                            turn = call.turn, call = "call_1", name = "canteen__reserve", tool = "canteen.reserve",
                            input = SEATS, verdict = "ask", reason = call.reason, prompt = 1uL, answer = Answer.ALLOW,
                            ok = true, result = RESERVED,
                        ),
                        call,
                    )
                    onNodeWithText("R-20261130-0042", substring = true).assertExists()
                    onNodeWithText("${labels.verdict("ask")} → ${labels.answer(Answer.ALLOW)}").assertExists()
                    onNodeWithText("订好了：两个座位。").assertExists()
                    onNodeWithTag(ChatTags.TURN_STATE).assertTextEquals(labels.turnState("done"))
                    saveScreenshot("chat-tool-call", labels)
                }
            }
        }
    }

    @Test fun deny_on_the_sheet_declines_the_call_and_the_chat_shows_it() {
        val labels = EnLabels
        reservingModel("I did not reserve the seats.").use { model ->
            Phone(model).use { phone ->
                runPhoneTest {
                    sendAndWaitForTheSheet(phone, labels)
                    onNodeWithTag(ApprovalTags.answer(Answer.DENY)).performClick()
                    waitUntil("the turn's end", 10_000) { phone.chat.state.turnState == "done" }
                    onNodeWithTag(ApprovalTags.SHEET).assertDoesNotExist()
                    val declined = """{"error":{"code":"declined","message":"The user declined this call."}}"""
                    assertTrue(model.bodies[1].contains("The user declined this call."), model.bodies[1])
                    val call = phone.chat.state.items.filterIsInstance<ChatItem.ToolCall>().single()
                    assertEquals(Triple(Answer.DENY, false, declined), Triple(call.answer, call.ok, call.result))
                    onNodeWithText("${labels.resultLabel}: ${labels.outcome(false)}").assertExists()
                    onNodeWithText("The user declined this call.", substring = true).assertExists()
                    onNodeWithText("${labels.verdict("ask")} → ${labels.answer(Answer.DENY)}").assertExists()
                    saveScreenshot("chat-declined", labels)
                }
            }
        }
    }

    @Test fun stopping_the_turn_withdraws_the_prompt_and_closes_the_sheet() {
        val labels = ZhLabels
        reservingModel("never sent").use { model ->
            Phone(model).use { phone ->
                runPhoneTest {
                    sendAndWaitForTheSheet(phone, labels)
                    // The sheet covers the Stop button (a tap there lands on the sheet), so the
                    // turn is stopped through the state holder, as a back gesture would.
                    phone.chat.cancel()
                    waitUntil("the sheet to close", 10_000) { phone.approvals.current == null }
                    waitUntil("the turn's end", 10_000) { !phone.chat.state.running }
                    assertEquals("cancelled", phone.chat.state.turnState, phone.chat.state.toString())
                    onNodeWithTag(ApprovalTags.SHEET).assertDoesNotExist()
                    // No answer is no consent: the call was declined and the model not asked again.
                    val call = phone.chat.state.items.filterIsInstance<ChatItem.ToolCall>().single()
                    assertEquals(false, call.ok)
                    assertNull(call.answer)
                    assertEquals(1, model.bodies.size)
                    onNodeWithTag(ChatTags.TURN_STATE).assertTextEquals(labels.turnState("cancelled"))
                    onNodeWithTag(ChatTags.SEND).assertExists()
                    saveScreenshot("chat-cancelled", labels)
                }
            }
        }
    }

    @Test fun a_withdrawn_event_closes_the_sheet_and_the_call_is_declined() {
        val labels = EnLabels
        reservingModel("I did not reserve the seats.").use { model ->
            Phone(model).use { phone ->
                runPhoneTest {
                    sendAndWaitForTheSheet(phone, labels)
                    val id = phone.approvals.current!!.id
                    // As the subscription delivers it.
                    phone.approvals.listener.onEvent(HarnessEvent.ApprovalWithdrawn(id))
                    waitUntil("the sheet to close", 10_000) { phone.approvals.current == null }
                    waitUntil("the turn's end", 10_000) { phone.chat.state.turnState == "done" }
                    onNodeWithTag(ApprovalTags.SHEET).assertDoesNotExist()
                    val call = phone.chat.state.items.filterIsInstance<ChatItem.ToolCall>().single()
                    assertEquals(false, call.ok)
                    assertTrue(call.result!!.contains("\"code\":\"declined\""), call.result)
                }
            }
        }
    }
}

/** The sheet alone, on plain data. */
@OptIn(ExperimentalTestApi::class)
class ApprovalSheetTest {
    private val tainted = ApprovalPrompt(
        plugin = "wallet", pluginTitle = "校园卡", tool = "wallet.recharge", toolTitle = "充值",
        effect = Effect.MONEY, inputJson = """{"amountYuan":500}""", kind = PromptKind.CONFIRM,
        offers = listOf(Answer.ALLOW, Answer.DENY), headline = "充值",
        reason = "this turn has read untrusted content, and this is a money call", conversation = "c1", sheet = null,
    )

    @Test fun a_prompt_in_a_tainted_turn_offers_no_always_allow() = runPhoneTest {
        val answers = mutableListOf<Answer>()
        setContent { HarnessTheme { ApprovalSheet(tainted, ZhLabels, { answers += it }) } }
        waitForTheAnswers()
        onNodeWithTag(ApprovalTags.answer(Answer.ALWAYS_ALLOW)).assertDoesNotExist()
        onNodeWithText(ZhLabels.answer(Answer.ALWAYS_ALLOW)).assertDoesNotExist()
        onNodeWithTag(ApprovalTags.answer(Answer.DENY)).performClick()
        onNodeWithTag(ApprovalTags.answer(Answer.ALLOW)).performClick()
        assertEquals(listOf(Answer.DENY, Answer.ALLOW), answers)
        onNodeWithText("花钱").assertExists()
        onNodeWithText("校园卡 (wallet)").assertExists()
    }

    @Test fun the_answers_take_no_tap_until_the_sheet_has_been_seen() = runPhoneTest {
        val answers = mutableListOf<Answer>()
        mainClock.autoAdvance = false
        setContent { HarnessTheme { ApprovalSheet(tainted, EnLabels, { answers += it }) } }
        // A disabled button takes no tap. (No click is tried here: the test's click waits for
        // the screen to settle, which runs the clock past the delay.)
        for (answer in tainted.offers) onNodeWithTag(ApprovalTags.answer(answer)).assertIsNotEnabled()
        mainClock.advanceTimeBy(ANSWER_DELAY_MS - 100)
        for (answer in tainted.offers) onNodeWithTag(ApprovalTags.answer(answer)).assertIsNotEnabled()
        mainClock.advanceTimeBy(200)
        for (answer in tainted.offers) onNodeWithTag(ApprovalTags.answer(answer)).assertIsEnabled()
        onNodeWithTag(ApprovalTags.answer(Answer.DENY)).performClick()
        assertEquals(listOf(Answer.DENY), answers)
    }

    @Test fun the_host_ignores_an_answer_the_prompt_did_not_offer() = runBlocking {
        val host = ApprovalHost()
        val asked = async(Dispatchers.Default) { host.askApproval(7uL, tainted) }
        while (host.current == null) delay(5)
        assertEquals(false, host.answer(7uL, Answer.ALWAYS_ALLOW))
        assertEquals(false, host.answer(8uL, Answer.ALLOW))
        assertEquals(listOf(7uL), host.waiting)
        assertEquals(true, host.answer(7uL, Answer.DENY))
        assertEquals(Answer.DENY, asked.await())
        assertNull(host.current)
    }
}
