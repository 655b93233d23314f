package edu.pku.harness.ui

import androidx.compose.ui.geometry.Size
import androidx.compose.ui.semantics.SemanticsActions
import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.hasAnyAncestor
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.runSkikoComposeUiTest
import androidx.compose.ui.text.TextLayoutResult
import androidx.compose.ui.unit.Density
import edu.pku.harness.core.Language
import edu.pku.harness.core.Route
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue
import org.junit.Test

/** The bar on a narrow phone: every destination whole, the rest one tap away under "More". */
@OptIn(ExperimentalTestApi::class)
class NavigationTest {
    @Test fun the_bar_fits_a_360_dp_phone_in_both_languages_and_more_opens_the_rest() {
        for (language in listOf(Language.ZH, Language.EN)) App(language).use { app ->
            // 360 × 780 dp at density 2: the narrowest common Android phone.
            runSkikoComposeUiTest(size = Size(720f, 1560f), density = Density(2f)) {
                setContent { HarnessAppContent(app.models, app.approvals, app.navigator) }
                waitUntil("the navigation", 10_000) { app.models.navigation.model != null }
                val items = app.models.navigation.model!!.items
                assertEquals(5, items.size)
                for (item in items) {
                    val tab = onNodeWithTag(navTag(item.route)).fetchSemanticsNode()
                    assertTrue(tab.boundsInRoot.right <= 720f, "${item.label} is past the right edge")
                    val label = onNode(hasText(item.label) and hasAnyAncestor(hasTestTag(navTag(item.route))), useUnmergedTree = true)
                        .fetchSemanticsNode()
                    val layouts = mutableListOf<TextLayoutResult>()
                    label.config[SemanticsActions.GetTextLayoutResult].action?.invoke(layouts)
                    val layout = layouts.single()
                    // Cut off: wider than the room its tab gives it (beyond the sub-pixel rounding of
                    // the laid-out size), past its one line, or ending in an ellipsis.
                    val wants = layout.multiParagraph.intrinsics.maxIntrinsicWidth
                    val wider = wants - layout.size.width >= 1f
                    assertFalse(
                        wider || layout.multiParagraph.didExceedMaxLines || layout.isLineEllipsized(0),
                        "${item.label} is cut off (${layout.size.width} px in a tab of ${tab.size.width} px; " +
                            "wants $wants px, lines ${layout.lineCount}, ellipsis ${layout.isLineEllipsized(0)})",
                    )
                }
                saveScreenshot("navigation-360dp", language)
                onNodeWithTag(navTag(Route.MORE)).performClick()
                waitUntil("the More page", 10_000) { app.navigator.route.value == Route.MORE }
                for (item in app.models.navigation.model!!.more) onNodeWithTag(navTag(item.route)).assertExists()
                onNodeWithTag(navTag(Route.CAMPUS_ACCOUNT)).performClick()
                waitUntil("the campus account", 10_000) {
                    app.navigator.route.value == Route.CAMPUS_ACCOUNT && app.models.campus.model != null
                }
                // Shown under "More", which stays the selected tab.
                assertEquals(Route.MORE, app.models.tabFor(Route.CAMPUS_ACCOUNT))
            }
        }
    }
}
