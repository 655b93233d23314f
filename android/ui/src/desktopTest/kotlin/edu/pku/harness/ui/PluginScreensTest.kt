package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import edu.pku.harness.core.Action
import edu.pku.harness.core.FieldValue
import edu.pku.harness.core.Language
import edu.pku.harness.core.PluginScreen
import edu.pku.harness.core.SectionState
import edu.pku.harness.core.Route
import edu.pku.harness.startCampusSimulator
import kotlinx.coroutines.runBlocking
import kotlin.test.assertEquals
import kotlin.test.assertTrue
import org.junit.Test

/**
 * The campus plugins' declared screens and Today, drawn by the one renderer from the real
 * library signed in to the campus simulator, in both languages (DESIGN.md §2).
 */
@OptIn(ExperimentalTestApi::class)
class PluginScreensTest {
    private val screens = listOf(
        "wallet" to "card", "canteen" to "canteens", "classrooms" to "free", "library" to "search",
        "notices" to "notices", "treehole" to "feed",
    )

    private val canteenTitle = mapOf(Language.ZH to "食堂", Language.EN to "Canteens")
    private val firstCanteen = "燕南食堂"

    @Test fun every_campus_plugins_screen_and_today_render_their_data_in_both_languages() {
        for (language in listOf(Language.ZH, Language.EN)) App(language, campusOrigin = startCampusSimulator(), samples = false).use { app ->
            runBlocking { app.harness.act(Action.CampusSignIn("2100012345", "pku-demo-password", false)) }
            runPhoneTest {
                for ((plugin, screen) in screens) {
                    val holder = ScreenModel<PluginScreen>(app.harness, app.phone, app.scope) { it.pluginScreen(plugin, screen) }
                    setContent { PluginScreenPage(holder) }
                    waitUntil("the $plugin screen", 10_000) { holder.model != null }
                    if (plugin == "canteen") {
                        val model = holder.model!!
                        assertEquals(canteenTitle[language], model.title)
                        assertEquals(SectionState.READY, model.sections[0].state)
                        assertTrue(onAllNodes(hasText(firstCanteen)).fetchSemanticsNodes().isNotEmpty())
                    }
                    if (plugin == "classrooms") {
                        // The form's send as its button hands it, with a building and a day.
                        holder.act(Action.SubmitScreenForm("classrooms", "free", listOf(FieldValue("building", "三教"), FieldValue("day", "tomorrow"))))
                        waitUntil("the free rooms", 10_000) { holder.model?.sections?.get(1)?.state == SectionState.READY }
                        assertTrue(onAllNodes(hasText("三教101")).fetchSemanticsNodes().isNotEmpty())
                    }
                    saveScreenshot("plugin-screen-$plugin", language)
                    holder.close()
                }
                val today = app.models.today()
                today.refresh()
                setContent { TodayPage(today) }
                waitUntil("Today", 10_000) { today.model != null }
                val tiles = today.model!!.tiles.map { it.plugin to it.source }
                assertEquals(listOf("wallet" to "balance", "canteen" to "crowd", "notices" to "latest", "treehole" to "following"), tiles)
                // Nothing followed on Treehole yet: that tile is empty, the others ready.
                assertEquals(
                    listOf(SectionState.READY, SectionState.READY, SectionState.READY, SectionState.EMPTY),
                    today.model!!.tiles.map { it.state },
                )
                assertTrue(today.model!!.tiles.all { it.age != null })
                saveScreenshot("today", language)
                onNodeWithTag(PluginScreenTags.tile("canteen", "crowd")).performClick()
                waitUntil("the tile's screen", 10_000) { app.navigator.route.value == Route.PLUGIN_SCREEN }
                assertEquals("canteen" to "canteens", app.navigator.pluginScreen.value)
                today.close()
            }
        }
    }
}
