package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import edu.pku.harness.ScriptedModel
import edu.pku.harness.core.Language
import kotlin.test.assertTrue
import org.junit.Test

/** An empty chat says what the app can do (issue 42): the shipped plugins' examples, each a tap that sends it. */
@OptIn(ExperimentalTestApi::class)
class ChatExamplesTest {
    // Not signed in to the campus: the canteens, which need no sign-in, are the ones offered.
    private val examples = mapOf(
        Language.ZH to listOf("现在哪个食堂人少？", "哪些食堂还开着？"),
        Language.EN to listOf("Which canteen is least crowded now?", "Which canteens are open now?"),
    )

    @Test fun an_empty_chat_offers_the_usable_plugins_examples_and_a_tap_sends_one() {
        for ((language, said) in examples) ScriptedModel(answerOf("好的")).use { model ->
            App(language, model = model, samples = false).use { app ->
                runPhoneTest {
                    setContent { HarnessAppContent(app.models, app.approvals, app.navigator) }
                    waitUntil("the chat", 10_000) { app.models.chat.model != null }
                    said.forEachIndexed { i, text -> onNodeWithTag(ChatTags.example(i)).assertTextEquals(text) }
                    onNodeWithTag(ChatTags.example(said.size)).assertDoesNotExist()
                    saveScreenshot("chat-examples", language)
                    onNodeWithTag(ChatTags.example(0)).performClick()
                    waitUntil("the answer", 10_000) { app.models.chat.model?.items?.any { it.text == "好的" } == true }
                    onNodeWithTag(ChatTags.example(0)).assertDoesNotExist()
                    assertTrue(model.bodies.first().contains(said[0]), model.bodies.first())
                }
            }
        }
    }
}
