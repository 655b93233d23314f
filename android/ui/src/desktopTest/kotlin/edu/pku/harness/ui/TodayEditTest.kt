package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
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
 * The plugins screen grouped 校园 / 系统 with no switch on a plugin the app needs, a plugin
 * page's data source opening where the core says, and Today shaped in its edit mode (a tile
 * removed, one added and moved up), each change the core's Action (issue 36). Against the
 * campus simulator, in both languages.
 */
@OptIn(ExperimentalTestApi::class)
class TodayEditTest {
    private val groups = mapOf(Language.ZH to listOf("校园", "系统"), Language.EN to listOf("Campus", "System"))

    @Test fun the_plugins_are_grouped_a_source_opens_and_todays_edit_mode_shapes_its_tiles() {
        for (language in listOf(Language.ZH, Language.EN)) {
            val sim = startCampusSimulator()
            App(language, campusOrigin = sim, samples = false, navigator = AppNavigator()).use { app ->
                runBlocking { app.harness.act(Action.CampusSignIn("2100012345", "pku-demo-password", false)) }
                runPhoneTest {
                    show(app)
                    app.navigator.open(Route.PLUGINS)
                    waitUntil("the plugins", 10_000) { onAllNodes(hasTestTag(ScreenTags.plugin("settings"))).fetchSemanticsNodes().isNotEmpty() }
                    val screen = assertNotNull(app.models.plugins.model)
                    assertEquals(groups[language], screen.groups.map { it.title })
                    assertEquals("wallet", screen.groups[0].plugins[0].id, "the card leads the campus plugins")
                    // The settings plugin the app needs has no switch, and says why; memory has one.
                    assertTrue(onAllNodes(hasTestTag(ScreenTags.pluginSwitch("settings"))).fetchSemanticsNodes().isEmpty())
                    assertTrue(onAllNodes(hasTestTag(ScreenTags.pluginSwitch("memory"))).fetchSemanticsNodes().isNotEmpty())
                    assertNotNull(screen.groups[1].plugins.single { it.id == "settings" }.fixed)
                    saveScreenshot("plugins-grouped", language)
                    onNodeWithTag(ScreenTags.plugin("settings")).performScrollTo()
                    saveScreenshot("plugins-grouped-system", language)

                    // 成绩 declares no screen: its data source opens as its own value.
                    val detail = openDetail(app, "grades")
                    waitUntil("its data source", 10_000) { detail()?.dataSources?.size == 1 }
                    onNodeWithTag(ScreenTags.dataSource(0)).performScrollTo().performClick()
                    waitUntil("the source's screen", 10_000) { app.navigator.dataSource.value == ("grades" to "scores") }
                    assertEquals(Route.PLUGIN_SCREEN, app.navigator.route.value)
                    assertEquals(null, app.navigator.pluginScreen.value)

                    app.navigator.open(Route.TODAY)
                    waitUntil("Today's tiles", 10_000) {
                        onAllNodes(hasTestTag(PluginScreenTags.tile("canteen", "crowd"))).fetchSemanticsNodes().isNotEmpty()
                    }
                    onNodeWithTag(PluginScreenTags.EDIT).performClick()
                    onNodeWithTag(PluginScreenTags.remove("canteen", "crowd")).performScrollTo().performClick()
                    waitUntil("the canteens gone", 10_000) {
                        onAllNodes(hasTestTag(PluginScreenTags.tile("canteen", "crowd"))).fetchSemanticsNodes().isEmpty()
                    }
                    // 教学网's DDLs, which Today does not show yet: added last, then up one.
                    val addable = runBlocking { app.harness.todayScreen() }.addable
                    val course = addable.indexOfFirst { (it.action as? Action.AddTodayTile)?.plugin == "course" }
                    assertTrue(course >= 0, "the DDLs are offered")
                    onNodeWithTag(PluginScreenTags.add(course)).performScrollTo().performClick()
                    waitUntil("the DDLs added", 10_000) {
                        onAllNodes(hasTestTag(PluginScreenTags.moveUp("course", "deadlines"))).fetchSemanticsNodes().isNotEmpty()
                    }
                    saveScreenshot("today-editing", language, listOf("(B)"))
                    onNodeWithTag(PluginScreenTags.moveUp("course", "deadlines")).performScrollTo().performClick()
                    val chosen = """"tiles":["wallet.balance","notices.latest","course.deadlines","treehole.following"]"""
                    waitUntil("the tiles in their new order", 10_000) { app.harness.settingsJson().filterNot { it.isWhitespace() }.contains(chosen) }
                    onNodeWithTag(PluginScreenTags.EDIT).performClick()
                    waitUntil("the edited tiles", 10_000) {
                        onAllNodes(hasTestTag(PluginScreenTags.tile("course", "deadlines"))).fetchSemanticsNodes().isNotEmpty()
                    }
                    saveScreenshot("today-edited", language, listOf("(B)"))
                }
            }
        }
    }
}
