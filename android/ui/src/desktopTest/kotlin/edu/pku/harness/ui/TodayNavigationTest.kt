package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import edu.pku.harness.core.Action
import edu.pku.harness.core.Language
import edu.pku.harness.core.Route
import edu.pku.harness.startCampusSimulator
import kotlinx.coroutines.runBlocking
import kotlin.test.assertEquals
import org.junit.Test

/**
 * Where the student goes (issue 36): the app opens on Today, the bar's first tab; a tile's tap
 * and a plugin page's link land on the plugin's declared screen, each by the core's `Acted`
 * (no route decided in the shell). Against the campus simulator, in both languages.
 */
@OptIn(ExperimentalTestApi::class)
class TodayNavigationTest {
    private val canteens = mapOf(Language.ZH to "食堂", Language.EN to "Canteens")
    private val card = mapOf(Language.ZH to "校园卡", Language.EN to "Campus card")
    private val bar = mapOf(
        Language.ZH to listOf("今天", "对话", "插件", "记忆", "更多"),
        Language.EN to listOf("Today", "Chat", "Plugins", "Memory", "More"),
    )

    @Test fun the_app_opens_on_today_and_a_tile_and_a_plugin_page_open_the_plugins_screen() {
        for (language in listOf(Language.ZH, Language.EN)) {
            val sim = startCampusSimulator()
            App(language, campusOrigin = sim, samples = false, navigator = AppNavigator()).use { app ->
                runBlocking { app.harness.act(Action.CampusSignIn("2100012345", "pku-demo-password", false)) }
                runPhoneTest {
                    show(app)
                    assertEquals(Route.TODAY, app.navigator.route.value, "the app opens on Today")
                    assertEquals(bar[language], app.models.navigation.model!!.items.map { it.label })
                    waitUntil("Today's tiles", 10_000) {
                        onAllNodes(hasTestTag(PluginScreenTags.tile("wallet", "balance"))).fetchSemanticsNodes().isNotEmpty()
                    }
                    saveScreenshot("nav-today", language)

                    onNodeWithTag(PluginScreenTags.tile("canteen", "crowd")).performScrollTo().performClick()
                    waitUntil("the canteens' screen", 10_000) { app.navigator.route.value == Route.PLUGIN_SCREEN }
                    assertEquals("canteen" to "canteens", app.navigator.pluginScreen.value)
                    assertEquals(Route.PLUGINS, app.models.tabFor(Route.PLUGIN_SCREEN))
                    waitUntil("its title", 10_000) { onAllNodes(hasText(canteens.getValue(language))).fetchSemanticsNodes().isNotEmpty() }
                    saveScreenshot("nav-today-tile-canteens", language)

                    val detail = openDetail(app, "wallet")
                    waitUntil("the card's screen link", 10_000) { detail()?.screens?.map { it.label } == listOf(card.getValue(language)) }
                    onNodeWithTag(ScreenTags.pluginScreenLink(0)).performScrollTo().performClick()
                    waitUntil("the card's screen", 10_000) { app.navigator.pluginScreen.value == ("wallet" to "card") }
                    assertEquals(Route.PLUGIN_SCREEN, app.navigator.route.value)
                    waitUntil("its title", 10_000) { onAllNodes(hasText(card.getValue(language))).fetchSemanticsNodes().isNotEmpty() }
                    saveScreenshot("nav-plugin-page-card", language)
                }
            }
        }
    }
}
