package edu.pku.harness.app

import android.Manifest
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.junit4.createEmptyComposeRule
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.test.ext.junit.runners.AndroidJUnit4
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.SetupStep
import edu.pku.harness.ui.FirstRunTags
import org.junit.Rule
import org.junit.Test
import org.junit.runner.RunWith
import kotlin.test.assertEquals

/** A new install's first run in the app's activity: the terms, three skippable steps, then the chat. */
@RunWith(AndroidJUnit4::class)
class FirstRunJourneyTest {
    @get:Rule val compose = createEmptyComposeRule()

    private fun JourneyApp.step() = harness.firstRunScreen().page?.step

    /** Taps the step's tap [label] once the screen shows that step ([progress]). */
    private fun tapNext(progress: String, label: String) {
        compose.await { compose.onAllNodes(hasText(progress)).fetchSemanticsNodes().isNotEmpty() }
        compose.onNodeWithTag(FirstRunTags.NEXT).assertTextEquals(label).performClick()
    }

    @Test fun the_terms_are_accepted_the_rest_skipped_and_notifications_asked_from_the_tap_alone() {
        val app = JourneyApp(firstRun = true)
        val scenario = app.launch()
        compose.await(60_000) { compose.onAllNodes(hasTestTag(FirstRunTags.PAGE)).fetchSemanticsNodes().isNotEmpty() }
        assertEquals(SetupStep.TERMS, app.step())
        tapNext("第 1 步，共 4 步", "同意并继续")
        waitFor("the model's step") { app.step() == SetupStep.MODEL }
        tapNext("第 2 步，共 4 步", "跳过，以后再设置")
        waitFor("the campus step") { app.step() == SetupStep.CAMPUS }
        tapNext("第 3 步，共 4 步", "跳过，以后再设置")
        waitFor("the notifications' step") { app.step() == SetupStep.NOTIFICATIONS }
        compose.await { compose.onAllNodes(hasText("第 4 步，共 4 步")).fetchSemanticsNodes().isNotEmpty() }
        // Nothing asked the system until this tap.
        assertEquals(emptyList(), app.system.requestedPermissions(scenario.activity()))
        compose.onNodeWithTag(FirstRunTags.NEXT).assertTextEquals("允许通知").performClick()
        waitFor("the system's dialog") { app.system.requestedPermissions(scenario.activity()).isNotEmpty() }
        assertEquals(listOf(Manifest.permission.POST_NOTIFICATIONS), app.system.requestedPermissions(scenario.activity()))
        app.system.answerPermissionDialog(scenario.activity(), grant = true)
        waitFor("the first run's end") { app.step() == null }
        assertEquals(PermissionState.GRANTED, app.platform().permissionState(Permission.NOTIFICATIONS))
        compose.waitForTheChat()
    }
}
