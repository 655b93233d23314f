package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.onNodeWithText
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import edu.pku.harness.core.Acted
import edu.pku.harness.core.Action
import edu.pku.harness.core.Language
import edu.pku.harness.core.Route
import edu.pku.harness.startCampusSimulator
import java.nio.file.Files
import kotlinx.coroutines.runBlocking
import kotlin.test.assertEquals
import kotlin.test.assertNotNull
import org.junit.Test

/**
 * The plugins screen as a catalogue: the campus plugins, what the student added, then the app's
 * own, a switch on each row that may be turned off, the tap that meets an unmet requirement, and a plugin page's Markdown
 * description laid out by the core (the real library, the shipped plugins).
 */
@OptIn(ExperimentalTestApi::class)
class PluginsCatalogueTest {
    private val words = mapOf(
        Language.ZH to listOf("校园", "你添加的", "登录校园账号", "已关闭"),
        Language.EN to listOf("Campus", "Added by you", "Sign in to the campus account", "Off"),
    )
    private val system = mapOf(Language.ZH to "系统", Language.EN to "System")

    @Test fun the_catalogue_switches_a_plugin_off_and_the_sign_in_tap_opens_the_campus_account() {
        for ((language, said) in words) App(language, campusOrigin = startCampusSimulator(), samples = false).use { app ->
            val (shipped, _, signIn, off) = said
            runPhoneTest {
                show(app)
                app.navigator.open(Route.PLUGINS)
                waitUntil("the plugins", 10_000) { onAllNodes(hasTestTag(ScreenTags.plugin("wallet"))).fetchSemanticsNodes().isNotEmpty() }
                val screen = assertNotNull(app.models.plugins.model)
                assertEquals(listOf(shipped, system.getValue(language)), screen.groups.map { it.title })
                onNodeWithText(shipped).assertExists()
                // Not signed in: the card's row offers the sign-in.
                onNodeWithTag(ScreenTags.pluginFix("wallet")).performScrollTo().assertTextEquals(signIn)
                saveScreenshot("plugins-catalogue", language)

                onNodeWithTag(ScreenTags.pluginSwitch("canteen")).performScrollTo().performClick()
                waitUntil("the canteens off", 10_000) {
                    app.models.plugins.model?.groups?.flatMap { it.plugins }?.single { it.id == "canteen" }?.enabled == false
                }
                val canteen = app.models.plugins.model!!.groups.flatMap { it.plugins }.single { it.id == "canteen" }
                assertEquals(off, canteen.stateLabel)
                assertEquals(false, app.harness.plugins().single { it.id == "canteen" }.enabled)

                onNodeWithTag(ScreenTags.pluginFix("wallet")).performScrollTo().performClick()
                waitUntil("the campus account screen", 10_000) { app.navigator.route.value == Route.CAMPUS_ACCOUNT }
            }
        }
    }

    @Test fun a_plugin_page_lays_out_its_markdown_and_a_link_opens_in_the_browser() {
        val file = Files.createTempFile("harness-ui-", "-PLUGIN.md")
        Files.writeString(
            file,
            "---\nid: menu\ntitle: 菜单\ndescription: \"看 **今天** 的菜单：\\n\\n- 学一\\n- 农园\\n\\n[食堂主页](https://dining.pku.edu.cn/)\"\n" +
                "tools:\n  - name: today\n    effect: read\n---\n今天的菜单\n",
        )
        for ((language, said) in words) App(language, samples = false).use { app ->
            runBlocking {
                val preview = app.harness.act(Action.PreviewLink("file://$file")) as Acted.Preview
                assertEquals(Acted.Done, app.harness.act(preview.v1.install.action))
            }
            app.models.refresh()
            runPhoneTest {
                show(app)
                app.navigator.open(Route.PLUGINS)
                waitUntil("the plugins", 10_000) { onAllNodes(hasTestTag(ScreenTags.plugin("menu"))).fetchSemanticsNodes().isNotEmpty() }
                assertEquals(listOf(said[0], said[1], system.getValue(language)), app.models.plugins.model!!.groups.map { it.title })
                onNodeWithText("看 今天 的菜单：\n• 学一\n• 农园\n食堂主页").performScrollTo().assertExists()
                val detail = openDetail(app, "menu")
                assertEquals(4, detail()!!.about.size)
                onNodeWithText("看 今天 的菜单：").assertExists()
                onNodeWithText("• 学一").assertExists()
                onNodeWithText("• 农园").assertExists()
                saveScreenshot("plugin-markdown", language, SAMPLE_DATA)
                onNodeWithText("食堂主页").performClick()
                waitUntil("the page in the browser", 10_000) { app.phone.browsed.isNotEmpty() }
                assertEquals(listOf("https://dining.pku.edu.cn/"), app.phone.browsed.toList())
            }
        }
    }
}
