package edu.pku.harness.app

import android.app.NotificationManager
import androidx.core.app.NotificationCompat
import androidx.lifecycle.Lifecycle
import androidx.test.ext.junit.runners.AndroidJUnit4
import edu.pku.harness.Outcome
import edu.pku.harness.core.Answer
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import edu.pku.harness.ui.MAIN_CONVERSATION
import org.junit.Test
import org.junit.runner.RunWith
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue

/** An ask while the app is not in front (issue 41.3): the activity's lifecycle decides. */
@RunWith(AndroidJUnit4::class)
class ApprovalAwayJourneyTest {
    // Issue 41.3: with the activity paused, an agent's call that needs an answer posts the core's
    // notice; its one action opens the sheet only after unlock, and the call's inputs show
    // nowhere in it. Back in front, the sheet shows the ask and the notification goes.
    @Test fun an_ask_while_the_activity_is_paused_posts_a_notification_that_needs_unlock_and_shows_no_input() {
        val journey = JourneyApp()
        journey.system.grantNotifications()
        val scenario = journey.launch()
        scenario.moveToState(Lifecycle.State.STARTED)
        journey.openChat()
        val manager = journey.app.getSystemService(NotificationManager::class.java)
        val asking = CoroutineScope(Dispatchers.IO).async {
            journey.harness.invokeAsAgent(MAIN_CONVERSATION, "canteen.reserve", SEATS)
        }
        // The sheet's queue is kept on the main thread: the ask is there once it has run.
        waitFor("the ask's notification and its sheet") {
            manager.activeNotifications.any { it.tag == ApprovalNotifications.TAG } && journey.app.approvals.current != null
        }
        val posted = manager.activeNotifications.single { it.tag == ApprovalNotifications.TAG }.notification
        val prompt = journey.app.approvals.current!!.prompt
        assertEquals(prompt.notice!!.title, NotificationCompat.getContentTitle(posted).toString())
        assertEquals(1, NotificationCompat.getActionCount(posted))
        assertTrue(NotificationCompat.getAction(posted, 0)!!.isAuthenticationRequired)
        // No input anywhere, locked or not: not the canteen, nor the seats' time.
        val shown = posted.extras.keySet().joinToString { "${posted.extras.get(it)}" } +
            posted.publicVersion.extras.keySet().joinToString { "${posted.publicVersion.extras.get(it)}" }
        for (input in listOf("学一食堂", "12:00")) assertFalse(shown.contains(input), shown)

        scenario.moveToState(Lifecycle.State.RESUMED)
        waitFor("the notification to go") { manager.activeNotifications.none { it.tag == ApprovalNotifications.TAG } }
        assertTrue(journey.app.approvals.answer(journey.app.approvals.current!!.id, Answer.DENY))
        val done = runBlocking { asking.await() }
        assertTrue(done.outcome is Outcome.Refused, done.outcome.toString())
        scenario.close()
    }
}
