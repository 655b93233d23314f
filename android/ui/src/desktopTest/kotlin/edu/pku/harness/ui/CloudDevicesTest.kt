package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.onAllNodesWithTag
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.onNodeWithText
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import edu.pku.harness.core.Action
import edu.pku.harness.core.CloudState
import edu.pku.harness.core.Language
import edu.pku.harness.core.Route
import java.io.File
import java.nio.file.Files
import kotlinx.coroutines.runBlocking
import kotlin.test.assertEquals
import kotlin.test.assertNotNull
import kotlin.test.assertNull
import org.junit.Test

/**
 * A PKU harness Cloud server on this machine: the real `harness-cloud` binary
 * (scripts/test-compose-desktop.sh builds it and names it in `pku.cloud.bin`) on a loopback port
 * over SQLite in a temporary directory. [base] is read from the line it prints once listening.
 */
private class CloudServer : AutoCloseable {
    private val dir = Files.createTempDirectory("harness-cloud-ui").toFile()
    private val process: Process = ProcessBuilder(
        System.getProperty("pku.cloud.bin") ?: "target/debug/harness-cloud",
        "serve", "--db", "sqlite:${File(dir, "cloud.db")}", "--listen", "127.0.0.1:0",
    ).redirectError(ProcessBuilder.Redirect.INHERIT).start()
    val base: String = process.inputStream.bufferedReader().readLine()
        ?.removePrefix("listening on ")
        ?: error("harness-cloud printed no address")

    override fun close() {
        process.destroy()
        process.waitFor()
        dir.deleteRecursively()
    }
}

@OptIn(ExperimentalTestApi::class)
class CloudDevicesTest {
    // DESIGN §12: an account with two devices lists both on 云端, this one marked 本机 with no
    // 移除, the other with 移除, and says how this one leaves; saved in zh and en.
    @Test fun a_set_up_account_with_two_devices_lists_both_and_offers_remove_on_the_other() {
        for (language in listOf(Language.ZH, Language.EN)) CloudServer().use { server ->
            App(language).use { app ->
                App(language).use { other ->
                    runBlocking { app.harness.act(Action.CloudSetup(server.base)) }
                    val code = assertNotNull(runBlocking { app.harness.cloudScreen() }.recoveryCode)
                    runBlocking { other.harness.act(Action.CloudJoin(server.base, code)) }
                    runPhoneTest {
                        show(app)
                        app.navigator.open(Route.CLOUD)
                        // The screen was read when the app opened, before the account: read it again.
                        app.models.cloud.refresh()
                        waitUntil("the account's screen", 10_000) {
                            app.models.cloud.model?.state == CloudState.SET_UP || app.models.cloud.message != null
                        }
                        val screen = assertNotNull(app.models.cloud.model, app.models.cloud.message)
                        assertEquals(2, screen.deviceRows.size, screen.toString())
                        assertEquals(CloudState.SET_UP, screen.state)
                        val (mine, theirs) = screen.deviceRows.partition { it.thisDevice }
                        val marked = mapOf(Language.ZH to "本机", Language.EN to "This device")
                        assertEquals(marked[language], mine.single().thisLabel)
                        assertNull(mine.single().remove)
                        val remove = mapOf(Language.ZH to "移除", Language.EN to "Remove")
                        assertEquals(remove[language], theirs.single().remove?.label)
                        assertEquals(2, onAllNodesWithTag(CloudTags.DEVICE).fetchSemanticsNodes().size)
                        assertEquals(1, onAllNodesWithTag(CloudTags.REMOVE_DEVICE).fetchSemanticsNodes().size)
                        onNodeWithText(marked[language]!!).assertExists()
                        onNodeWithText(screen.leaveNote!!).assertExists()
                        saveScreenshot("cloud-two-devices", language)
                    }
                }
            }
        }
    }

    // Issue 39: 显示配对二维码 shows the core's pairing QR with when it stops working, what it
    // does and 隐藏, the window kept out of screenshots while it is shown; 隐藏 takes it away and
    // lets the window be captured again; saved in zh and en.
    @Test fun the_pairing_qr_is_shown_kept_out_of_screenshots_and_hidden() {
        for (language in listOf(Language.ZH, Language.EN)) CloudServer().use { server ->
            App(language).use { app ->
                runBlocking { app.harness.act(Action.CloudSetup(server.base)) }
                runPhoneTest {
                    show(app)
                    app.navigator.open(Route.CLOUD)
                    app.models.cloud.refresh()
                    waitUntil("the account's screen", 10_000) {
                        app.models.cloud.model?.showPairing != null || app.models.cloud.message != null
                    }
                    val show = assertNotNull(app.models.cloud.model?.showPairing, app.models.cloud.message)
                    val shows = mapOf(Language.ZH to "显示配对二维码", Language.EN to "Show pairing QR")
                    assertEquals(shows[language], show.label)
                    onNodeWithTag(CloudTags.SHOW_PAIRING).performScrollTo().performClick()
                    waitUntil("the pairing QR", 10_000) {
                        app.models.cloud.model?.pairing != null || app.models.cloud.message != null
                    }
                    assertNull(app.models.cloud.message)
                    val pairing = assertNotNull(app.models.cloud.model?.pairing)
                    val until = mapOf(Language.ZH to "有效至", Language.EN to "Works until")
                    assertEquals(until[language], pairing.expires.label)
                    onNodeWithTag(CloudTags.PAIRING_QR).assertExists()
                    onNodeWithText(pairing.note).assertExists()
                    onNodeWithText(pairing.expires.value).assertExists()
                    waitUntil("the window kept out of screenshots", 10_000) { app.phone.secureWindow.lastOrNull() == true }
                    onNodeWithTag(CloudTags.PAIRING).performScrollTo()
                    saveScreenshot("cloud-pairing-qr", language)
                    val hide = mapOf(Language.ZH to "隐藏", Language.EN to "Hide")
                    assertEquals(hide[language], pairing.hide.label)
                    onNodeWithTag(CloudTags.HIDE_PAIRING).performScrollTo().performClick()
                    waitUntil("the QR hidden", 10_000) {
                        app.models.cloud.model?.pairing == null || app.models.cloud.message != null
                    }
                    assertNull(app.models.cloud.message)
                    assertEquals(0, onAllNodesWithTag(CloudTags.PAIRING_QR).fetchSemanticsNodes().size)
                    waitUntil("the window captured again", 10_000) { app.phone.secureWindow.lastOrNull() == false }
                }
            }
        }
    }

    // Issue 39.5: a value the restore left pending (a raised payment limit, looser than here)
    // stays on 云端 as a row with 应用 and 不用了; 不用了 takes it away; saved in zh and en.
    @Test fun a_restored_value_left_pending_is_a_row_the_student_dismisses() {
        for (language in listOf(Language.ZH, Language.EN)) CloudServer().use { server ->
            App(language).use { app ->
                App(language).use { other ->
                    runBlocking {
                        app.harness.act(Action.CloudSetup(server.base))
                        app.harness.act(Action.SetMoneyLimit("money.perPaymentYuan", "500"))
                        app.harness.act(Action.SetCloudBackup(true))
                        app.harness.act(Action.CloudBackupNow)
                    }
                    val code = assertNotNull(runBlocking { app.harness.cloudScreen() }.recoveryCode)
                    runBlocking {
                        other.harness.act(Action.CloudJoin(server.base, code))
                        other.harness.act(Action.CloudRestore)
                    }
                    runPhoneTest {
                        show(other)
                        other.navigator.open(Route.CLOUD)
                        other.models.cloud.refresh()
                        waitUntil("the pending row", 10_000) {
                            other.models.cloud.model?.pending?.isNotEmpty() == true || other.models.cloud.message != null
                        }
                        val screen = assertNotNull(other.models.cloud.model, other.models.cloud.message)
                        val words = mapOf(
                            Language.ZH to "money.perPaymentYuan：备份里是 500",
                            Language.EN to "money.perPaymentYuan: 500 in the backup",
                        )
                        assertEquals(listOf(words[language]), screen.pending.map { it.words })
                        assertEquals(1, onAllNodesWithTag(CloudTags.PENDING).fetchSemanticsNodes().size)
                        onNodeWithText(words[language]!!).assertExists()
                        onNodeWithText(screen.pendingTitle!!).assertExists()
                        val dismiss = mapOf(Language.ZH to "不用了", Language.EN to "Dismiss")
                        assertEquals(dismiss[language], screen.pending.single().dismiss.label)
                        saveScreenshot("cloud-pending", language)
                        onNodeWithTag(CloudTags.PENDING_DISMISS).performScrollTo().performClick()
                        waitUntil("the row dismissed", 10_000) {
                            other.models.cloud.model?.pending?.isEmpty() == true || other.models.cloud.message != null
                        }
                        assertNull(other.models.cloud.message)
                        assertEquals(0, onAllNodesWithTag(CloudTags.PENDING).fetchSemanticsNodes().size)
                    }
                    // Dismissed for good: the core's kept list is empty too.
                    assertEquals(emptyList(), runBlocking { other.harness.cloudScreen() }.pending)
                }
            }
        }
    }
}
