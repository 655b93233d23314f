package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.onNodeWithText
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import androidx.compose.ui.test.performTextClearance
import androidx.compose.ui.test.performTextInput
import edu.pku.harness.core.Language
import edu.pku.harness.core.Route
import edu.pku.harness.startCampusSimulator
import org.junit.Test

/** Signing in to the campus account from the screens, against the campus simulator. */
@OptIn(ExperimentalTestApi::class)
class CampusScreensTest {
    @Test fun a_student_signs_in_with_an_sms_code_from_the_consent_screen() {
        App(Language.EN, campusOrigin = startCampusSimulator()).use { app ->
            runPhoneTest {
                setContent { HarnessAppContent(app.models, app.approvals, app.navigator) }
                app.navigator.open(Route.CONSENT)
                waitUntil("the consent screen", 10_000) { app.models.consent.model != null }
                onNodeWithTag(ScreenTags.CAMPUS_STATE).assertTextEquals("Not signed in")
                onNodeWithTag(ScreenTags.CAMPUS_OPEN).performScrollTo().performClick()
                waitUntil("the campus account screen", 10_000) {
                    app.navigator.route.value == Route.CAMPUS_ACCOUNT && app.models.campus.model?.form != null
                }
                onNodeWithTag(CampusTags.STUDENT_ID).performTextInput("2100023456")
                onNodeWithTag(CampusTags.PASSWORD).performTextInput("pku-sms-password")
                onNodeWithTag(CampusTags.SIGN_IN).performClick()
                waitUntil("the code step", 10_000) { app.models.campus.model?.code != null }
                onNodeWithText("Enter the SMS code sent to 138****0000").assertExists()
                onNodeWithText("A new code can be sent in", substring = true).assertExists()
                // The password left with the tap: the screen holds none of it.
                onNodeWithText("pku-sms-password", substring = true).assertDoesNotExist()
                onNodeWithTag(CampusTags.CODE).performTextInput("111111")
                onNodeWithTag(CampusTags.SUBMIT_CODE).performClick()
                waitUntil("the wrong code's words", 10_000) { app.models.campus.message != null }
                onNodeWithText("the SMS code is wrong or has expired: send a new one (E04)").assertExists()
                onNodeWithTag(CampusTags.CODE).performTextClearance()
                onNodeWithTag(CampusTags.CODE).performTextInput("246810")
                onNodeWithTag(CampusTags.SUBMIT_CODE).performClick()
                waitUntil("signed in", 10_000) { app.models.campus.model?.signedIn != null }
                onNodeWithTag(CampusTags.ACCOUNT).assertExists()
                onNodeWithText("2100023456").assertExists()
                saveScreenshot("campus-account", Language.EN)
                app.navigator.open(Route.CONSENT)
                waitUntil("the consent screen signed in", 10_000) { app.models.consent.model?.campusSignedIn == true }
                onNodeWithTag(ScreenTags.CAMPUS_STATE).assertTextEquals("Signed in as 2100023456")
            }
        }
    }
}
