package edu.pku.harness.ui

import androidx.compose.ui.geometry.Size
import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performTextReplacement
import androidx.compose.ui.test.runSkikoComposeUiTest
import androidx.compose.ui.unit.Density
import edu.pku.harness.core.Language
import edu.pku.harness.core.Route
import kotlin.test.assertEquals
import kotlin.test.assertNotEquals
import org.junit.Test

/** Many conversations (DESIGN.md §13): new chat, switch, rename, delete and its undo, as a student taps them. */
@OptIn(ExperimentalTestApi::class)
class ConversationsScreenTest {
    @Test fun a_student_starts_switches_renames_deletes_and_brings_back_a_chat_in_both_languages() {
        for (language in listOf(Language.ZH, Language.EN)) App(language).use { app ->
            runSkikoComposeUiTest(size = Size(720f, 1560f), density = Density(2f)) {
                setContent { HarnessAppContent(app.models, app.approvals, app.navigator) }
                waitUntil("the chat", 10_000) { app.models.chat.model != null }
                assertEquals(MAIN_CONVERSATION, app.models.conversation)

                onNodeWithTag(ChatTags.NEW_CHAT).performClick()
                waitUntil("the new chat", 10_000) {
                    app.models.conversation != MAIN_CONVERSATION && app.models.chat.model?.conversation == app.models.conversation
                }
                val second = app.models.conversation

                onNodeWithTag(ChatTags.CONVERSATIONS).performClick()
                waitUntil("the list", 10_000) {
                    app.navigator.route.value == Route.CONVERSATIONS && app.models.conversations.model?.rows?.size == 2
                }
                assertEquals(listOf(second, MAIN_CONVERSATION), app.models.conversations.model!!.rows.map { it.conversation })
                saveScreenshot("conversations", language)

                // Switch back to the first: a tap on its title (the row's middle may be a button).
                onNodeWithTag(ConversationListTags.title(MAIN_CONVERSATION), useUnmergedTree = true).performClick()
                waitUntil("the first chat", 10_000) {
                    app.navigator.route.value == Route.CHAT && app.models.chat.model?.conversation == MAIN_CONVERSATION
                }

                // Rename it from the list.
                app.navigator.open(Route.CONVERSATIONS)
                waitUntil("the list again", 10_000) { app.models.conversations.model?.rows?.size == 2 }
                onNodeWithTag(ConversationListTags.rename(MAIN_CONVERSATION)).performClick()
                onNodeWithTag(ConversationListTags.renameField(MAIN_CONVERSATION)).performTextReplacement("图书馆")
                onNodeWithTag(ConversationListTags.rename(MAIN_CONVERSATION)).performClick()
                waitUntil("the new title", 10_000) {
                    app.models.conversations.model?.rows?.any { it.conversation == MAIN_CONVERSATION && it.title == "图书馆" } == true
                }

                // Delete the second; the undo bar brings it back and opens it.
                onNodeWithTag(ConversationListTags.delete(second)).performClick()
                waitUntil("the undo bar", 10_000) {
                    val m = app.models.conversations.model
                    m?.undo != null && m.rows.map { it.conversation } == listOf(MAIN_CONVERSATION)
                }
                saveScreenshot("conversations-undo", language)
                onNodeWithTag(ConversationListTags.UNDO).performClick()
                waitUntil("the chat brought back", 10_000) {
                    app.models.conversation == second && app.navigator.route.value == Route.CHAT
                }
                app.models.conversations.refresh()
                waitUntil("both listed", 10_000) {
                    val m = app.models.conversations.model
                    m != null && m.undo == null && m.rows.size == 2
                }
                assertNotEquals(MAIN_CONVERSATION, second)
            }
        }
    }
}
