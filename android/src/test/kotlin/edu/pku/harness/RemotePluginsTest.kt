package edu.pku.harness

import edu.pku.harness.core.ElicitationAction
import edu.pku.harness.core.FieldKind
import edu.pku.harness.core.FieldValue
import kotlinx.coroutines.runBlocking
import kotlin.test.AfterTest
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertTrue

/**
 * A remote (MCP) server's two sheets through the library as the app's Platform meets them: a
 * server that asks the student to sign in (OAuth 2.1: the sheet, then the browser, whose return
 * is handed back), and a server's question while its tool runs (the reference server's form).
 */
class RemotePluginsTest {
    private val closing = mutableListOf<AutoCloseable>()

    @AfterTest fun closeAll() = closing.reversed().forEach { it.close() }

    private fun harness(platform: ScriptedPlatform): Harness {
        val harness = Harness.openForDevelopment(
            newDataDir(), platform,
            DevelopmentOptions(samplePlugins = false, campusOrigin = null, serversOnThisMachine = true),
        )
        harness.acceptTerms()
        harness.changeSetting("language", "\"en\"")
        closing.add(AutoCloseable { harness.shutdown() })
        return harness
    }

    @Test fun a_server_that_asks_for_a_sign_in_is_added_after_the_sheet_and_the_browser() = runBlocking {
        val server = SigningInServer().also { closing.add(it) }
        val platform = ScriptedPlatform()
        // The browser: opens the page; the authorization server sends it straight back.
        platform.signInWith = { sheet, _ -> follow(sheet.page) }
        val harness = harness(platform)

        assertEquals("mcp-notes", harness.addRemoteServer(server.url, "notes", null))

        val (sheet, redirect) = platform.signIns.single()
        assertEquals("edu.pku.harness:/oauth/callback", redirect)
        assertEquals("Sign in to 127.0.0.1", sheet.title)
        assertEquals(server.url, sheet.serverUrl)
        assertEquals(listOf("notes:read"), sheet.scopes)
        assertEquals(listOf(redirect), server.redirectUris)
        val ran = harness.invokeAsUser("mcp-notes.echo", """{"message":"hi"}""").outcome
        assertTrue(ran is Outcome.Ran && "echo: hi" in ran.resultJson, "$ran")
        // The sign-in is kept in the phone's keystore only.
        assertTrue(server.issued.single() in platform.secrets.getValue("mcp.notes.oauth"))
    }

    @Test fun a_sign_in_the_student_cancels_adds_nothing() = runBlocking {
        val server = SigningInServer().also { closing.add(it) }
        val platform = ScriptedPlatform()
        val harness = harness(platform)
        val refused = assertFailsWith<HarnessException.InvalidArgument> { harness.addRemoteServer(server.url, "notes", null) }
        assertEquals("the sign-in to ${server.url} was not finished: the student cancelled the sign-in", refused.reason)
        assertTrue(platform.secrets.isEmpty())
        assertTrue(harness.plugins().none { it.id == "mcp-notes" })
    }

    @Test fun a_servers_question_is_answered_on_the_sheet_with_what_was_typed() = runBlocking {
        val server = Everything().also { closing.add(it) }
        val platform = ScriptedPlatform()
        platform.questionWith = { _, sheet ->
            val typed = sheet.fields.map { FieldValue(it.name, if (it.name == "name") "Li Lei" else it.value) }
            ElicitationReply(ElicitationAction.ACCEPT, typed)
        }
        val harness = harness(platform)
        harness.addRemoteServer(server.url, "everything", null)

        val ran = harness.invokeAsUser("mcp-everything.trigger-elicitation-request", "{}").outcome
        assertTrue(ran is Outcome.Ran && "- Name: Li Lei" in ran.resultJson && "- Favorite Integer: 42" in ran.resultJson, "$ran")
        val sheet = platform.questions.single()
        assertEquals("The server of everything asks you", sheet.title)
        assertEquals("Please provide inputs for the following fields:", sheet.message)
        val integer = sheet.fields.single { it.name == "integer" }
        assertEquals(FieldKind.INTEGER to "42", integer.kind to integer.value)
        assertEquals(listOf("Send", "Decline", "Cancel"), sheet.answers.map { it.label })
    }
}

