package edu.pku.harness.app

import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.junit4.createEmptyComposeRule
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.onNodeWithText
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import androidx.compose.ui.test.performTextInput
import androidx.test.ext.junit.runners.AndroidJUnit4
import edu.pku.harness.core.Action
import edu.pku.harness.core.Answer
import edu.pku.harness.core.ChatItemKind
import edu.pku.harness.core.Route
import edu.pku.harness.ui.ChatTags
import edu.pku.harness.ui.MAIN_CONVERSATION
import edu.pku.harness.ui.ScreenTags
import kotlinx.coroutines.runBlocking
import org.junit.Rule
import org.junit.Test
import org.junit.runner.RunWith
import kotlin.test.assertEquals
import kotlin.test.assertTrue

/** Plan mode's plan card and the plugins catalogue in the app's activity. */
@RunWith(AndroidJUnit4::class)
class PlanAndPluginsJourneysTest {
    @get:Rule val compose = createEmptyComposeRule()

    @Test fun the_plan_card_s_tap_ends_plan_mode_and_the_reservation_still_asks() {
        ScriptedModelServer(answerOf("1. 看学一的座位 2. 订两个座位"), callOf("canteen__reserve", SEATS), answerOf("订好了。")).use { model ->
            val app = JourneyApp(model)
            app.openChat()
            runBlocking { app.harness.act(Action.SetPlanMode(MAIN_CONVERSATION, true)) }
            app.launch()
            compose.waitForTheChat()
            compose.onNodeWithTag(ChatTags.DRAFT).performTextInput(ASK)
            compose.onNodeWithTag(ChatTags.SEND).performClick()
            compose.await(30_000) { app.chat().items.lastOrNull()?.kind == ChatItemKind.PLAN }
            compose.await(15_000) { compose.onAllNodes(hasTestTag(ChatTags.PLAN_ACCEPT)).fetchSemanticsNodes().isNotEmpty() }
            compose.onNodeWithTag(ChatTags.PLAN_ACCEPT).assertTextEquals("按这个计划做").performClick()
            compose.waitForTheAnswers()
            assertTrue(model.bodies[1].contains("我同意这个计划，请开始执行。"), model.bodies[1])
            compose.tapAnswer(Answer.ALLOW)
            compose.await(30_000) { app.chat().items.lastOrNull()?.text == "订好了。" }
            assertEquals(false, app.harness.conversationSettingsScreen(MAIN_CONVERSATION).planMode)
            compose.onNodeWithTag(ChatTags.PLAN).assertDoesNotExist()
        }
    }

    @Test fun the_catalogue_s_switch_turns_a_plugin_off() {
        val app = JourneyApp()
        app.launch()
        compose.waitForTheChat()
        app.app.navigator.open(Route.PLUGINS)
        compose.await(15_000) { compose.onAllNodes(hasTestTag(ScreenTags.pluginSwitch("canteen"))).fetchSemanticsNodes().isNotEmpty() }
        compose.onNodeWithText("校园").assertExists()
        compose.onNodeWithTag(ScreenTags.pluginSwitch("canteen")).performScrollTo().performClick()
        compose.await(15_000) { !app.harness.plugins().single { it.id == "canteen" }.enabled }
    }
}
