package edu.pku.harness.app

import android.app.Notification
import android.app.NotificationManager
import androidx.core.app.NotificationCompat
import androidx.lifecycle.Lifecycle
import androidx.test.ext.junit.runners.AndroidJUnit4
import edu.pku.harness.core.Answer
import edu.pku.harness.ui.MAIN_CONVERSATION
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import org.junit.Test
import org.junit.runner.RunWith
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue

/** A turn running while the app is not in front (issue 41.5): an ongoing notification says so. */
@RunWith(AndroidJUnit4::class)
class TurnAwayJourneyTest {
    // Issue 41.5: with the activity paused, a running turn shows one ongoing notification in the
    // core's words, none of the student's (the turn waits on its ask, an event, never a clock);
    // once the turn ends the notification goes.
    @Test fun a_turn_running_while_the_activity_is_paused_shows_an_ongoing_notification_until_it_ends() {
        reservingModel("I did not reserve the seats.").use { model ->
            val journey = JourneyApp(model)
            journey.system.grantNotifications()
            val scenario = journey.launch()
            scenario.moveToState(Lifecycle.State.STARTED)
            journey.openChat()
            val manager = journey.app.getSystemService(NotificationManager::class.java)
            val turn = CoroutineScope(Dispatchers.IO).async { journey.harness.sendMessage(MAIN_CONVERSATION, ASK) }
            // The turn waits on its ask's answer: it is running while the sheet holds the ask.
            waitFor("the turn's ongoing notification and the ask") {
                manager.activeNotifications.any { it.tag == TurnNotifications.TAG } && journey.app.approvals.current != null
            }
            val posted = manager.activeNotifications.single { it.tag == TurnNotifications.TAG }.notification
            val words = journey.harness.turnNotice()
            assertEquals(words.title, NotificationCompat.getContentTitle(posted).toString())
            assertEquals(words.body, NotificationCompat.getContentText(posted).toString())
            assertEquals(Notification.FLAG_ONGOING_EVENT, posted.flags and Notification.FLAG_ONGOING_EVENT)
            val shown = posted.extras.keySet().joinToString { "${posted.extras.get(it)}" }
            for (input in listOf(ASK, "学一食堂", "12:00")) assertFalse(shown.contains(input), shown)

            assertTrue(journey.app.approvals.answer(journey.app.approvals.current!!.id, Answer.DENY))
            runBlocking { turn.await() }
            waitFor("the ongoing notification to go") { manager.activeNotifications.none { it.tag == TurnNotifications.TAG } }
            scenario.close()
        }
    }
}
