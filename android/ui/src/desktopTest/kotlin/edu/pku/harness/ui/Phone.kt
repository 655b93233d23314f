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
import edu.pku.harness.core.Language
import java.io.File
import javax.imageio.ImageIO
import kotlin.test.assertTrue

/** A phone's screen: 412 × 892 dp at density 2, the size of a common Android phone. */
@OptIn(ExperimentalTestApi::class)
fun runPhoneTest(block: SkikoComposeUiTest.() -> Unit) =
    runSkikoComposeUiTest(size = Size(824f, 1784f), density = Density(2f), block = block)

/** Waits until the approval sheet's buttons take taps (ANSWER_DELAY_MS after it appeared). */
@OptIn(ExperimentalTestApi::class)
fun ComposeUiTest.waitForTheAnswers() = waitUntil("the sheet's answers to be enabled", 5_000) {
    onAllNodes(hasTestTag(ApprovalTags.SHEET)).fetchSemanticsNodes().isNotEmpty() &&
        onAllNodes(hasClickAction() and isEnabled() and hasAnyAncestor(hasTestTag(ApprovalTags.SHEET)))
            .fetchSemanticsNodes().isNotEmpty()
}

/**
 * Saves the whole screen as `<screen>-<language>.png` in the directory the system property
 * `pku.screenshots` names (scripts/test-compose-desktop.sh: target/screenshots).
 */
@OptIn(ExperimentalTestApi::class)
fun ComposeUiTest.saveScreenshot(screen: String, language: Language): File {
    waitForIdle()
    val image = onRoot().captureToImage().toAwtImage()
    val dir = File(System.getProperty("pku.screenshots") ?: "target/screenshots")
    dir.mkdirs()
    val file = File(dir, "$screen-${language.name.lowercase()}.png")
    assertTrue(ImageIO.write(image, "png", file), "no PNG writer for $file")
    return file
}
