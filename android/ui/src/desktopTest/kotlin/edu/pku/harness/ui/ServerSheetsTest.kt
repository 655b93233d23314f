package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.assertTextContains
import androidx.compose.ui.test.hasAnyAncestor
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import androidx.compose.ui.test.performTextInput
import androidx.compose.ui.test.hasContentDescription
import edu.pku.harness.Everything
import edu.pku.harness.ScriptedModel
import edu.pku.harness.core.Effect
import edu.pku.harness.core.Mode
import edu.pku.harness.Outcome
import edu.pku.harness.SigningInServer
import edu.pku.harness.core.ElicitationAction
import edu.pku.harness.core.Language
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlin.test.assertEquals
import kotlin.test.assertTrue
import org.junit.Test

/**
 * A remote server's two sheets in the app, on the real library: the reference server's question
 * while its tool runs (a name typed into its form, the rest its defaults, sent), and a server
 * that asks the student to sign in (the sheet, Continue, the browser back).
 */
@OptIn(ExperimentalTestApi::class)
class ServerSheetsTest {
    private val background = CoroutineScope(Dispatchers.IO)

    @Test fun a_servers_form_is_filled_in_on_its_sheet_and_sent() {
        val words = mapOf(
            Language.ZH to ("「everything」的服务器在问你" to "这份表单还不能发送"),
            Language.EN to ("The server of everything asks you" to "The form cannot be sent yet"),
        )
        Everything().use { server ->
            for ((language, said) in words) App(language, samples = false, servers = true).use { app ->
                val (title, notYet) = said
                runBlocking { app.harness.addRemoteServer(server.url, "everything", null) }
                runPhoneTest {
                    show(app)
                    val call = background.async { app.harness.invokeAsUser("mcp-everything.trigger-elicitation-request", "{}") }
                    waitUntil("the question", 20_000) { onAllNodes(hasTestTag(ServerSheetTags.QUESTION)).fetchSemanticsNodes().isNotEmpty() }
                    onNode(hasText(title) and hasAnyAncestor(hasTestTag(ServerSheetTags.QUESTION))).assertExists()
                    // The server's default is filled in.
                    onNodeWithTag(ServerSheetTags.field("integer")).performScrollTo().assertTextContains("42", substring = true)
                    saveScreenshot("question", language, EVERYTHING_QUESTION)
                    // Sent without the required name: the sheet comes back saying why.
                    onNodeWithTag(ServerSheetTags.answer(ElicitationAction.ACCEPT)).performScrollTo().performClick()
                    waitUntil("the question again", 20_000) { onAllNodes(hasTestTag(ServerSheetTags.QUESTION_ERROR)).fetchSemanticsNodes().isNotEmpty() }
                    onNodeWithTag(ServerSheetTags.QUESTION_ERROR).assertTextContains(notYet, substring = true)
                    saveScreenshot("question-not-sent", language, EVERYTHING_QUESTION)
                    onNodeWithTag(ServerSheetTags.field("name")).performScrollTo().performTextInput("李雷")
                    onNodeWithTag(ServerSheetTags.answer(ElicitationAction.ACCEPT)).performScrollTo().performClick()
                    val outcome = runBlocking { call.await() }.outcome
                    assertTrue(outcome is Outcome.Ran && "- Name: 李雷" in outcome.resultJson, "$outcome")
                    waitUntil("the sheet gone", 10_000) { onAllNodes(hasTestTag(ServerSheetTags.QUESTION)).fetchSemanticsNodes().isEmpty() }
                }
            }
        }
    }

    @Test fun a_server_that_asks_for_a_sign_in_shows_its_sheet_before_the_browser() {
        val words = mapOf(Language.ZH to "登录 127.0.0.1", Language.EN to "Sign in to 127.0.0.1")
        for ((language, title) in words) SigningInServer().use { server ->
            App(language, samples = false, servers = true).use { app ->
                runPhoneTest {
                    show(app)
                    val adding = background.async { app.harness.addRemoteServer(server.url, "notes", null) }
                    waitUntil("the sign-in sheet", 20_000) { onAllNodes(hasTestTag(ServerSheetTags.SIGN_IN)).fetchSemanticsNodes().isNotEmpty() }
                    val onSheet = hasAnyAncestor(hasTestTag(ServerSheetTags.SIGN_IN))
                    onNode(hasText(title) and onSheet).assertExists()
                    onNode(hasText("notes:read", substring = true) and onSheet).assertExists()
                    saveScreenshot("sign-in-server", language, listOf("notes:read"))
                    onNodeWithTag(ServerSheetTags.SIGN_IN_CONTINUE).performScrollTo().performClick()
                    assertEquals("mcp-notes", runBlocking { adding.await() })
                    assertEquals(1, server.issued.size)
                }
            }
        }
    }

    @Test fun a_servers_picture_is_drawn_and_its_links_listed_in_the_chat() {
        val words = mapOf(Language.ZH to "图片（PNG，", Language.EN to "Picture (PNG, ")
        Everything().use { server ->
            for ((language, picture) in words) ScriptedModel(
                callOf("call_1", "mcp-everything__get-tiny-image", "{}"),
                callOf("call_2", "mcp-everything__get-resource-links", """{"count":2}"""),
                answerOf("好了"),
            ).use { model ->
                App(language, model, samples = false, servers = true).use { app ->
                    runBlocking { app.harness.addRemoteServer(server.url, "everything", null) }
                    app.harness.setMode("mcp-everything", Effect.READ, Mode.AUTO)
                    runPhoneTest {
                        show(app)
                        onNodeWithTag(ChatTags.DRAFT).performTextInput("给我看图")
                        onNodeWithTag(ChatTags.SEND).performClick()
                        waitUntil("the turn's end", 20_000) { app.turnOver() }
                        waitForIdle()
                        // Drawn: an image node with the core's words as its description.
                        onNode(hasTestTag(ChatTags.callImage("call_1", 0)) and hasContentDescription(picture, substring = true))
                            .performScrollTo().assertExists()
                        onNodeWithTag(ChatTags.callLink("call_2", 0)).performScrollTo()
                        onNode(hasText("demo://resource/", substring = true) and hasAnyAncestor(hasTestTag(ChatTags.callLink("call_2", 1))))
                            .assertExists()
                        saveScreenshot("server-picture-and-links", language, EVERYTHING_PICTURE)
                    }
                }
            }
        }
    }
}

/** The MCP test server's own words (server-everything's question, picture and links): data. */
private val EVERYTHING_QUESTION: List<String> = listOf("everything", "String", "Please provide inputs for the following fields:", "String with date format", "Your date of birth", "Boolean", "Agree to the terms and conditions", "String with email format", "Your email address (will be verified, and never shared with anyone else)", "It was a dark and stormy night.", "String with default", "Favorite first line of a story", "String with uri format", "Portfolio / personal website", "Integer", "Your favorite integer (do not give us your phone number, pin, or other sensitive info)", "Legacy Titled Single Select Enum", "Choose your favorite type of pet", "Cats", "Dogs", "Birds", "Fish", "Reptiles", "String *", "Your full, legal name", "Number in range 1-1000", "Favorite number (there are no wrong answers)", "Titled Multiple Select Enum", "Choose your favorite types of fish", "Tuna", "Salmon", "Trout", "Titled Single Select Enum", "Choose your favorite hero", "Superman", "Green Lantern", "Wonder Woman", "Untitled Multiple Select Enum", "Choose your favorite instruments", "Guitar", "Piano", "Violin", "Drums", "Bass", "Untitled Single Select Enum", "Choose your favorite friend", "Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe")

private val EVERYTHING_PICTURE: List<String> = listOf("everything", "Get Tiny Image Tool", "everything", "Here's the image you requested:", "The image above is the MCP logo.", "Get Resource Links Tool", "Here are 2 resource links to resources available in this server:", "Blob Resource 1", "Resource 1: plaintext resource", "Text Resource 2", "Resource 2: plaintext resource", "PNG")
