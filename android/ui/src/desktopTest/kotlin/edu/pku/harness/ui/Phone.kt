package edu.pku.harness.ui

import androidx.compose.ui.geometry.Size
import androidx.compose.ui.graphics.toAwtImage
import androidx.compose.ui.test.ComposeUiTest
import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.SkikoComposeUiTest
import androidx.compose.ui.test.captureToImage
import androidx.compose.ui.test.hasAnyAncestor
import androidx.compose.ui.test.hasClickAction
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.isEnabled
import androidx.compose.ui.test.onRoot
import androidx.compose.ui.test.runSkikoComposeUiTest
import androidx.compose.ui.unit.Density
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import edu.pku.harness.core.Language
import edu.pku.harness.core.PluginDetail
import edu.pku.harness.core.Route
import java.io.File
import javax.imageio.ImageIO
import kotlin.test.assertTrue
import kotlin.test.fail

/** A phone's screen: 412 × 892 dp at density 2, the size of a common Android phone. */
@OptIn(ExperimentalTestApi::class)
fun runPhoneTest(block: SkikoComposeUiTest.() -> Unit) =
    runSkikoComposeUiTest(size = Size(824f, 1784f), density = Density(2f), block = block)

/** Shows the whole app on [app]'s models, once its navigation and chat are read. */
@OptIn(ExperimentalTestApi::class)
fun SkikoComposeUiTest.show(app: App) {
    setContent { HarnessAppContent(app.models, app.approvals, app.navigator) }
    waitUntil("the navigation", 10_000) { app.models.navigation.model != null && app.models.chat.model != null }
}

/** Opens plugin [id]'s page from the plugins list; the page's model as it is read. */
@OptIn(ExperimentalTestApi::class)
fun SkikoComposeUiTest.openDetail(app: App, id: String): () -> PluginDetail? {
    app.navigator.open(Route.PLUGINS)
    waitUntil("the plugins", 10_000) { onAllNodes(hasTestTag(ScreenTags.plugin(id))).fetchSemanticsNodes().isNotEmpty() }
    onNodeWithTag(ScreenTags.plugin(id)).performScrollTo().performClick()
    var holder: ScreenModel<PluginDetail>? = null
    waitUntil("the detail", 10_000) {
        holder = app.models.currentDetail
        holder?.model?.id == id
    }
    return { holder?.model }
}

/** Waits until the approval sheet's buttons take taps (ANSWER_DELAY_MS after it appeared). */
@OptIn(ExperimentalTestApi::class)
fun ComposeUiTest.waitForTheAnswers() = waitUntil("the sheet's answers to be enabled", 5_000) {
    onAllNodes(hasTestTag(ApprovalTags.SHEET)).fetchSemanticsNodes().isNotEmpty() &&
        onAllNodes(hasClickAction() and isEnabled() and hasAnyAncestor(hasTestTag(ApprovalTags.SHEET)))
            .fetchSemanticsNodes().isNotEmpty()
}

/**
 * Saves the whole screen as `<screen>-<language>.png` in the directory the system property
 * `pku.screenshots` names (scripts/test-compose-desktop.sh: target/screenshots). A Chinese screen
 * must show no English word that is not data (ZhText.kt): the test fails naming the texts that do.
 * [data] are values the test itself put on the screen (a title it typed, a server's name).
 */
/** The sample plugins' own English (core/src/plugins/samples.rs: test fixtures, never in the app) and the test's menu plugin. */
val SAMPLE_DATA: List<String> = listOf("A stored-value card held in memory, for tests.", "Answers questions about PKU canteens. Use canteen__openNow before suggesting where to eat, and canteen__crowd when the user cares about queues.", "menu", "today", "order", "canteen", "wallet")

@OptIn(ExperimentalTestApi::class)
fun ComposeUiTest.saveScreenshot(screen: String, language: Language, data: Collection<String> = emptyList()): File {
    waitForIdle()
    val image = onRoot().captureToImage().toAwtImage()
    val dir = File(System.getProperty("pku.screenshots") ?: "target/screenshots")
    dir.mkdirs()
    val file = File(dir, "$screen-${language.name.lowercase()}.png")
    assertTrue(ImageIO.write(image, "png", file), "no PNG writer for $file")
    if (language == Language.ZH) {
        val english = englishOnZhScreen(data)
        if (english.isNotEmpty()) fail("${file.name} shows English on a Chinese screen: ${english.joinToString("; ")}")
    }
    return file
}
