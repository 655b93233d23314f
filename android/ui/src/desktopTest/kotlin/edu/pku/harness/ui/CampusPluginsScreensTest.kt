package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.SkikoComposeUiTest
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.onNodeWithText
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import androidx.compose.ui.test.performTextInput
import edu.pku.harness.core.Acted
import edu.pku.harness.core.Action
import edu.pku.harness.core.Language
import edu.pku.harness.core.Route
import edu.pku.harness.startCampusSimulator
import kotlinx.coroutines.runBlocking
import kotlin.test.assertEquals
import kotlin.test.assertNotNull
import kotlin.test.assertTrue
import org.junit.Test

/**
 * The shipped campus plugins' pages, the card's pay code and Treehole's SMS check, rendered in
 * both languages on the real library, signed in to the campus simulator.
 */
@OptIn(ExperimentalTestApi::class)
class CampusPluginsScreensTest {
    private class Words(
        val titles: Map<String, String>,
        val payCodeTap: String,
        val notDigital: String,
        val switch: String,
        val balance: String,
        val recharge: String,
    )

    private val words = mapOf(
        Language.ZH to Words(
            titles = mapOf("bus" to "班车", "canteen" to "食堂", "classrooms" to "空闲教室", "course" to "教学网", "grades" to "成绩", "library" to "图书馆", "notices" to "通知公告", "treehole" to "树洞", "wallet" to "校园卡"),
            payCodeTap = "付款码",
            notDigital = "付款码要用数字卡：切换后，付款会从校园卡扣款",
            switch = "切换为数字卡",
            balance = "余额 42.50 元",
            recharge = "去充值",
        ),
        Language.EN to Words(
            titles = mapOf("bus" to "Shuttle bus", "canteen" to "Canteens", "classrooms" to "Free classrooms", "course" to "Course website", "grades" to "Grades", "library" to "Library", "notices" to "School notices", "treehole" to "Treehole", "wallet" to "Campus card"),
            payCodeTap = "Pay code",
            notDigital = "The pay code needs the digital card: once switched, payments are taken from the campus card",
            switch = "Switch to the digital card",
            balance = "Balance ¥42.50",
            recharge = "Recharge",
        ),
    )

    @Test fun the_campus_plugins_pages_the_pay_code_and_treeholes_check_render_in_both_languages() {
        for ((language, said) in words) App(language, campusOrigin = startCampusSimulator(), samples = false).use { app ->
            runBlocking { app.harness.act(Action.CampusSignIn("2100012345", "pku-demo-password", false)) }
            runPhoneTest {
                show(app)
                for ((id, title) in said.titles) {
                    val detail = openDetail(app, id)
                    assertEquals(title, detail()!!.title)
                    // The page's title (a tool may share it: 空闲教室's one tool).
                    assertTrue(onAllNodes(hasText(title)).fetchSemanticsNodes().isNotEmpty(), title)
                    saveScreenshot("plugin-$id", language, detail()!!.developer.map { it.id })
                    // The wallet's page comes last and stays open for its pay code.
                    if (id != "wallet") onNodeWithTag(ScreenTags.BACK).performClick()
                }

                // The wallet's page opens the pay code with a tap; on the physical card it offers
                // the switch, and after it the code drawn from the core's modules.
                onNodeWithTag(ScreenTags.TAP).assertTextEquals(said.payCodeTap).performScrollTo().performClick()
                waitUntil("the pay code", 10_000) { app.navigator.route.value == Route.PAY_CODE }
                waitUntil("the pay code's problem", 10_000) { onAllNodesWithTagCount(PayCodeTags.PROBLEM) == 1 }
                onNodeWithTag(PayCodeTags.PROBLEM).assertTextEquals(said.notDigital)
                saveScreenshot("pay-code-physical-card", language)
                onNodeWithText(said.switch).performScrollTo().performClick()
                waitUntil("the code", 10_000) { onAllNodesWithTagCount(PayCodeTags.QR) == 1 }
                onNodeWithTag(PayCodeTags.BARCODE).assertExists()
                onNodeWithTag(PayCodeTags.BALANCE).assertTextEquals(said.balance)
                saveScreenshot("pay-code", language)
                onNodeWithText(said.recharge).performScrollTo().performClick()
                waitUntil("the recharge page", 10_000) { app.phone.browsed.isNotEmpty() }
                assertEquals(listOf("https://bdcard.pku.edu.cn/plat/"), app.phone.browsed.toList())

                // Treehole asks for its SMS check until the code is entered on its screen.
                val feed = Action.RunTool("treehole.feed")
                assertEquals(Acted.Open(Route.TREEHOLE_CHECK), runBlocking { app.harness.act(feed) })
                app.navigator.open(Route.TREEHOLE_CHECK)
                val check = assertNotNull(app.models.treehole.model)
                onNodeWithText(check.send.label).performClick()
                onNodeWithTag(CampusTags.CHECK_CODE).performTextInput("246810")
                saveScreenshot("treehole-check-code", language)
                onNodeWithTag(CampusTags.CHECK_SUBMIT).performClick()
                waitUntil("the check passed", 10_000) { runBlocking { app.harness.act(feed) } == Acted.Done }
                assertEquals(null, app.models.treehole.message)
            }
        }
    }

    private fun SkikoComposeUiTest.onAllNodesWithTagCount(tag: String) =
        onAllNodes(hasTestTag(tag)).fetchSemanticsNodes().size
}
