package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
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
import edu.pku.harness.core.CampusCheck
import edu.pku.harness.core.Language
import edu.pku.harness.Outcome
import edu.pku.harness.core.Route
import edu.pku.harness.startCampusSimulator
import kotlinx.coroutines.runBlocking
import kotlin.test.assertEquals
import kotlin.test.assertIs
import kotlin.test.assertTrue
import org.junit.Test

/**
 * The shuttle bus's ride code (on its own screen only, SERVICES.md §11) and the course API's
 * authorization that reading grades needs (40077, answered on its own screen, not Treehole's),
 * rendered in both languages on the real library signed in to the campus simulator.
 */
@OptIn(ExperimentalTestApi::class)
class CampusCodesScreensTest {
    private class Words(val rideTap: String, val rideTitle: String, val gradesTitle: String)

    private val words = mapOf(
        Language.ZH to Words(rideTap = "乘车码", rideTitle = "班车乘车码", gradesTitle = "成绩查询授权"),
        Language.EN to Words(rideTap = "Ride code", rideTitle = "Shuttle bus ride code", gradesTitle = "Grades authorization"),
    )

    @Test fun the_bus_ride_code_and_the_grades_authorization_render_in_both_languages() {
        for ((language, said) in words) App(language, campusOrigin = startCampusSimulator(), samples = false).use { app ->
            runBlocking {
                app.harness.act(Action.CampusSignIn("2100012345", "pku-demo-password", false))
                val booked = app.harness.invokeAsUser("bus.book", """{"route":"燕园校区→新校区","date":"2026-12-07","time":"16:30"}""")
                assertIs<Outcome.Ran>(booked.outcome)
                // The course API is reached through Treehole, whose own check comes first.
                app.harness.act(Action.CampusCheckSendCode(CampusCheck.TREEHOLE))
                app.harness.act(Action.CampusCheckVerify(CampusCheck.TREEHOLE, "246810"))
            }
            runPhoneTest {
                show(app)
                // The bus plugin's page opens the ride code with a tap; its screen draws the
                // booking's code from the core's modules.
                openDetail(app, "bus")
                onNodeWithTag(ScreenTags.TAP).assertTextEquals(said.rideTap).performScrollTo().performClick()
                waitUntil("the ride code", 10_000) { app.navigator.route.value == Route.RIDE_CODE }
                waitUntil("the code", 10_000) { onAllNodes(hasTestTag(RideCodeTags.QR)).fetchSemanticsNodes().size == 1 }
                assertTrue(onAllNodes(hasText(said.rideTitle)).fetchSemanticsNodes().isNotEmpty(), said.rideTitle)
                onNodeWithTag(RideCodeTags.DEPARTURE).assertTextEquals("2026-12-07 16:30")
                onNodeWithTag(RideCodeTags.PAYLOAD).assertTextEquals("PKUBUS-880001-2100012345-SIGN")
                saveScreenshot("ride-code", language)

                // Grades ask for the course API's authorization: the tap's answer opens its
                // screen, where the SMS code answers it.
                val scores = Action.RunTool("grades.scores")
                assertEquals(Acted.Open(Route.GRADES_CHECK), runBlocking { app.harness.act(scores) })
                app.navigator.open(Route.GRADES_CHECK)
                waitUntil("the grades authorization", 10_000) { app.models.grades.model != null }
                val check = app.models.grades.model!!
                assertEquals(CampusCheck.GRADES, check.check)
                assertEquals(said.gradesTitle, check.title)
                onNodeWithText(check.send.label).performClick()
                onNodeWithTag(CampusTags.CHECK_CODE).performTextInput("246810")
                saveScreenshot("grades-check-code", language)
                onNodeWithTag(CampusTags.CHECK_SUBMIT).performClick()
                waitUntil("the authorization passed", 10_000) { runBlocking { app.harness.act(scores) } == Acted.Done }
                assertEquals(null, app.models.grades.message)
            }
        }
    }
}
