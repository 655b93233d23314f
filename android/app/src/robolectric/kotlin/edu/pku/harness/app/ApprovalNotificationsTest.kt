package edu.pku.harness.app

import android.app.NotificationManager
import android.content.Context
import androidx.core.app.NotificationCompat
import androidx.test.core.app.ApplicationProvider
import androidx.test.ext.junit.runners.AndroidJUnit4
import edu.pku.harness.core.ApprovalNotice
import org.junit.Test
import org.junit.runner.RunWith
import org.robolectric.Shadows.shadowOf
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue

/** An ask's notification: its action opens the sheet only after unlock, and no input shows. */
@RunWith(AndroidJUnit4::class)
class ApprovalNotificationsTest {
    @Test fun an_asks_notification_opens_the_sheet_only_after_unlock_and_never_shows_the_inputs() {
        val context = ApplicationProvider.getApplicationContext<Context>()
        val notifications = ApprovalNotifications(context)
        notifications.createChannel()
        val post = "周五晚上一起去二教自习"
        // The core's words for a Treehole post (core/tests/public_undo.rs pins them).
        val notice = ApprovalNotice("助手在等你确认：树洞 · 发树洞", "解锁后查看并回答", false)

        notifications.post(7uL, notice)

        val manager = context.getSystemService(NotificationManager::class.java)
        val posted = shadowOf(manager).allNotifications.single()
        val action = NotificationCompat.getAction(posted, 0)!!
        assertTrue(action.isAuthenticationRequired)
        assertEquals(1, NotificationCompat.getActionCount(posted))
        assertEquals("助手在等你确认：树洞 · 发树洞", NotificationCompat.getContentTitle(posted).toString())
        val shown = posted.extras.keySet().joinToString { "${posted.extras.get(it)}" } +
            posted.publicVersion.extras.keySet().joinToString { "${posted.publicVersion.extras.get(it)}" }
        assertFalse(shown.contains(post), shown)

        notifications.cancel(7uL)
        assertEquals(0, shadowOf(manager).allNotifications.size)
    }
}
