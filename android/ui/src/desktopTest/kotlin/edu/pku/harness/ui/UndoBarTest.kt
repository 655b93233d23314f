package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import edu.pku.harness.Outcome
import edu.pku.harness.core.Action
import edu.pku.harness.core.CampusCheck
import edu.pku.harness.core.RefusalCode
import edu.pku.harness.core.Language
import edu.pku.harness.jsonString
import edu.pku.harness.startCampusSimulator
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue
import org.junit.Test

/** The 撤销 bar over the app, against the campus simulator and the shipped Treehole plugin. */
@OptIn(ExperimentalTestApi::class)
class UndoBarTest {
    // Issue 41.4: a public call the student tapped waits its window with 撤销 drawn over the app;
    // the tap on 撤销 means nothing reached Treehole. The window is made long so that only the
    // tap can end it: the test waits on the core's HeldCallsChanged, never on time.
    @Test fun a_held_treehole_post_taken_back_with_the_bar_sends_nothing_to_the_simulator() {
        for (language in listOf(Language.ZH, Language.EN)) App(language, campusOrigin = startCampusSimulator(), samples = false).use { app ->
            runBlocking {
                app.harness.act(Action.CampusSignIn("2100012345", "pku-demo-password", false))
                app.harness.act(Action.CampusCheckSendCode(CampusCheck.TREEHOLE))
                app.harness.act(Action.CampusCheckVerify(CampusCheck.TREEHOLE, "246810"))
            }
            app.harness.changeSetting("public.undoSeconds", "600")
            val text = "周五一起去未名湖滑冰 ${language.name}"
            runPhoneTest {
                show(app)
                val posting = app.scope.async {
                    app.harness.invokeAsUser("treehole.publish", """{"text":${jsonString(text)}}""")
                }
                waitUntil("the 撤销 bar", 10_000) { app.models.held.model?.size == 1 }
                val bar = app.models.held.model!!.single()
                val said = mapOf(Language.ZH to "树洞 · 发树洞 即将发出", Language.EN to "Treehole · Post on Treehole is about to be sent")
                assertEquals(said[language], bar.text)
                onNodeWithTag(HeldTags.undo(0)).assertTextEquals(bar.undo.label)
                saveScreenshot("undo-bar", language)
                onNodeWithTag(HeldTags.undo(0)).performClick()
                waitUntil("the post's end", 10_000) { posting.isCompleted }
                val outcome = runBlocking { posting.await() }.outcome
                assertTrue(outcome is Outcome.Refused && outcome.code == RefusalCode.DECLINED, outcome.toString())
                waitUntil("the bar to go", 10_000) { app.models.held.model?.isEmpty() == true }
            }
            // Treehole has no such post: the search the student would run finds none, while a
            // post sent at once (no window) is found by the same search.
            fun search(words: String) = runBlocking {
                app.harness.invokeAsUser("treehole.search", """{"query":${jsonString(words)}}""")
            }.outcome.let { assertTrue(it is Outcome.Ran, it.toString()); it.resultJson }
            assertTrue(search(text).contains("\"posts\":[]"), search(text))
            app.harness.changeSetting("public.undoSeconds", "0")
            val sent = runBlocking { app.harness.invokeAsUser("treehole.publish", """{"text":${jsonString("$text 已发")}}""") }
            assertTrue(sent.outcome is Outcome.Ran, sent.outcome.toString())
            assertFalse(search("$text 已发").contains("\"posts\":[]"), search("$text 已发"))
        }
    }
}
