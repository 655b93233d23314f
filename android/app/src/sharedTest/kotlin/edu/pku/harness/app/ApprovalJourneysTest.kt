package edu.pku.harness.app

import androidx.compose.ui.test.assertIsEnabled
import androidx.compose.ui.test.assertIsNotEnabled
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.junit4.createAndroidComposeRule
import androidx.compose.ui.test.junit4.createEmptyComposeRule
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.onAllNodesWithText
import androidx.compose.ui.test.onNodeWithText
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performTextInput
import androidx.test.ext.junit.runners.AndroidJUnit4
import edu.pku.harness.core.Answer
import edu.pku.harness.core.ChatItemKind
import edu.pku.harness.ui.ANSWER_DELAY_MS
import edu.pku.harness.ui.ApprovalSheetView
import edu.pku.harness.ui.ApprovalTags
import edu.pku.harness.ui.ChatTags
import edu.pku.harness.ui.HarnessTheme
import kotlinx.coroutines.runBlocking
import org.junit.After
import org.junit.Rule
import org.junit.Test
import org.junit.runner.RunWith
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNotNull
import kotlin.test.assertTrue

/** The approval sheet in the app's activity: what the core asks, answered with a tap. */
@RunWith(AndroidJUnit4::class)
class ApprovalJourneysTest {
    @get:Rule val compose = createEmptyComposeRule()
    private val servers = mutableListOf<ScriptedModelServer>()

    @After fun stop() = servers.forEach { it.close() }

    private fun model(answer: String) = reservingModel(answer).also { servers += it }

    /** The app launched with [model], the student's request sent, the sheet up and armed. */
    private fun askingApp(model: ScriptedModelServer): JourneyApp {
        val app = JourneyApp(model)
        app.launch()
        compose.waitForTheChat()
        compose.onNodeWithTag(ChatTags.DRAFT).performTextInput(ASK)
        compose.onNodeWithTag(ChatTags.SEND).performClick()
        compose.waitForTheAnswers()
        return app
    }

    @Test fun allow_on_the_sheet_runs_the_tool_and_the_chat_shows_it() {
        val model = model("订好了：两个座位。")
        val app = askingApp(model)
        val prompt = app.app.approvals.current!!.prompt
        assertEquals("canteen.reserve", prompt.tool)
        assertEquals(SEATS, prompt.inputJson)

        compose.tapAnswer(Answer.ALLOW)
        compose.await(30_000) { app.turnOver() }
        compose.onNodeWithTag(ApprovalTags.SHEET).assertDoesNotExist()
        // The tool ran: its result went back to the model and the chat shows it.
        assertEquals(2, model.bodies.size)
        assertTrue(model.bodies[1].contains("R-20261130-0042"), model.bodies[1])
        compose.onNodeWithText("R-20261130-0042", substring = true).assertExists()
        compose.onNodeWithText("订好了：两个座位。").assertExists()
        // The API key came from the sealed store, through the Platform.
        assertEquals(listOf<String?>("Bearer sk-android", "Bearer sk-android"), model.keys.toList())
    }

    @Test fun deny_on_the_sheet_declines_the_call_and_the_chat_shows_it() {
        val model = model("I did not reserve the seats.")
        val app = askingApp(model)
        compose.tapAnswer(Answer.DENY)
        compose.await(30_000) { app.turnOver() }
        compose.onNodeWithTag(ApprovalTags.SHEET).assertDoesNotExist()
        assertTrue(model.bodies[1].contains("The user declined this call."), model.bodies[1])
        val call = assertNotNull(app.chat().items.single { it.kind == ChatItemKind.TOOL_CALL }.toolCall)
        assertEquals(false, call.ok)
        compose.onNodeWithText("I did not reserve the seats.").assertExists()
    }

    @Test fun the_sheet_has_one_button_for_each_answer_the_core_offers_with_its_label() {
        val app = askingApp(model("unused"))
        val pending = app.app.approvals.current!!
        val sheet = assertNotNull(pending.prompt.sheet)
        assertEquals(listOf(Answer.ALLOW, Answer.DENY, Answer.ALWAYS_ALLOW), pending.prompt.offers)
        // "Always allow" comes as the scopes the core gives (this conversation, today, always),
        // one button each, in place of the one lasting answer.
        assertTrue(sheet.alwaysScopes.isNotEmpty(), "the sheet's scopes")
        val buttons = sheet.answers.filter { it.answer != Answer.ALWAYS_ALLOW } + sheet.alwaysScopes
        for (answer in Answer.entries) {
            val shown = compose.onAllNodes(hasTestTag(ApprovalTags.answer(answer))).fetchSemanticsNodes().size
            assertEquals(buttons.count { it.answer == answer }, shown, "buttons for $answer")
        }
        for (button in buttons) compose.onNodeWithTag(ApprovalTags.answer(button.answer)).assertTextEquals(button.label)
        assertTrue(compose.onAllNodes(hasText(sheet.reason)).fetchSemanticsNodes().isNotEmpty(), sheet.reason)
        app.app.approvals.answer(pending.id, Answer.DENY)
    }

    @Test fun an_answer_the_prompt_does_not_offer_is_ignored_and_the_sheet_stays() {
        val app = askingApp(model("unused"))
        val pending = app.app.approvals.current!!
        assertFalse(app.app.approvals.answer(pending.id, Answer.DONT_ALLOW))
        // Still shown and still waiting (read without waiting for the screen to be idle: the
        // running turn's progress indicator never is).
        compose.await(5_000) { compose.onAllNodes(hasTestTag(ApprovalTags.SHEET)).fetchSemanticsNodes().size == 1 }
        assertEquals(pending.id, app.app.approvals.current?.id)
        app.app.approvals.answer(pending.id, Answer.DENY)
    }

    @Test fun stopping_the_turn_takes_its_sheet_down() {
        val model = model("never sent")
        val app = askingApp(model)
        // The sheet covers the chat's Stop button; Stop is the chat's cancel action, sent to the core.
        val cancel = assertNotNull(app.chat().cancel, "the running turn's Stop")
        runBlocking { app.harness.act(cancel.action) }
        compose.await(15_000) { app.app.approvals.current == null }
        compose.onNodeWithTag(ApprovalTags.SHEET).assertDoesNotExist()
        compose.await(15_000) { app.chat().runningTurn == null }
        val notice = app.chat().items.last()
        assertEquals(ChatItemKind.NOTICE, notice.kind)
        // The core has ended the turn; the chat shows it once it has read the core again.
        compose.await(15_000) { compose.onAllNodesWithText(notice.text).fetchSemanticsNodes().isNotEmpty() }
        compose.onNodeWithText(notice.text).assertExists()
        // Nothing went back to the model after the stop.
        assertEquals(1, model.bodies.size)
    }

    @Test fun the_turn_survives_the_activity_being_recreated_and_is_answered_on_the_new_one() {
        val model = model("订好了：两个座位。")
        val app = JourneyApp(model)
        val scenario = app.launch()
        compose.waitForTheChat()
        compose.onNodeWithTag(ChatTags.DRAFT).performTextInput(ASK)
        compose.onNodeWithTag(ChatTags.SEND).performClick()
        compose.waitForTheAnswers()
        val before = scenario.activity()
        val id = app.app.approvals.current!!.id

        // A rotation or a language change: the activity is destroyed and built again, while the
        // core's turn (in the Application's Harness) keeps waiting on the same prompt.
        scenario.recreate()
        assertTrue(scenario.activity() !== before, "a new activity")
        compose.waitForTheAnswers()
        assertEquals(id, app.app.approvals.current?.id)
        assertTrue(app.chat().runningTurn != null, "the turn is still running")

        compose.tapAnswer(Answer.ALLOW)
        compose.await(30_000) { app.turnOver() }
        compose.onNodeWithText("订好了：两个座位。").assertExists()
        assertEquals(2, model.bodies.size)
    }
}

/** The sheet on its own, on Android's clock: what it offers and when it takes a tap. */
@RunWith(AndroidJUnit4::class)
class ApprovalSheetTest {
    @get:Rule val compose = createAndroidComposeRule<androidx.activity.ComponentActivity>()

    /** A real prompt's sheet, from the core (the app's own Harness asked by a scripted model). */
    private fun realSheet(): edu.pku.harness.core.ApprovalSheet = reservingModel("unused").use { model ->
        val app = JourneyApp(model)
        app.openChat()
        val turn = Thread {
            runCatching { kotlinx.coroutines.runBlocking { app.harness.sendMessage(edu.pku.harness.ui.MAIN_CONVERSATION, ASK) } }
        }.apply { start() }
        waitFor("the core's prompt") { app.app.approvals.current != null }
        val pending = app.app.approvals.current!!
        val sheet = pending.prompt.sheet!!
        app.app.approvals.answer(pending.id, Answer.DENY)
        turn.join(15_000)
        sheet
    }

    @Test fun no_always_allow_button_when_the_core_does_not_offer_it() {
        val sheet = realSheet()
        // In a tainted turn the core offers Allow and Deny only (DESIGN.md §5).
        compose.setContent { HarnessTheme { ApprovalSheetView(sheet, listOf(Answer.ALLOW, Answer.DENY), {}) } }
        compose.onNodeWithTag(ApprovalTags.answer(Answer.ALWAYS_ALLOW)).assertDoesNotExist()
        compose.onNodeWithTag(ApprovalTags.answer(Answer.ALLOW)).assertExists()
        compose.onNodeWithTag(ApprovalTags.answer(Answer.DENY)).assertExists()
    }

    @Test fun the_answers_take_no_tap_for_500_ms_after_the_sheet_appears() {
        val sheet = realSheet()
        val answers = mutableListOf<Answer>()
        compose.mainClock.autoAdvance = false
        compose.setContent { HarnessTheme { ApprovalSheetView(sheet, listOf(Answer.ALLOW, Answer.DENY), { answers += it }) } }
        for (a in listOf(Answer.ALLOW, Answer.DENY)) compose.onNodeWithTag(ApprovalTags.answer(a)).assertIsNotEnabled()
        compose.onNodeWithTag(ApprovalTags.answer(Answer.DENY)).performClick()
        compose.mainClock.advanceTimeBy(ANSWER_DELAY_MS - 100)
        for (a in listOf(Answer.ALLOW, Answer.DENY)) compose.onNodeWithTag(ApprovalTags.answer(a)).assertIsNotEnabled()
        assertEquals(emptyList(), answers, "a tap before the sheet was armed")
        compose.mainClock.advanceTimeBy(200)
        for (a in listOf(Answer.ALLOW, Answer.DENY)) compose.onNodeWithTag(ApprovalTags.answer(a)).assertIsEnabled()
        compose.onNodeWithTag(ApprovalTags.answer(Answer.DENY)).performClick()
        // The clock is the test's: the tap's up event is handled on the next frame.
        compose.mainClock.advanceTimeByFrame()
        assertEquals(listOf(Answer.DENY), answers)
    }
}
