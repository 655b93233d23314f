package edu.pku.harness.app

import android.annotation.SuppressLint
import android.app.PendingIntent
import android.content.Context
import android.content.Intent
import androidx.core.app.NotificationChannelCompat
import androidx.core.app.NotificationCompat
import androidx.core.app.NotificationManagerCompat
import edu.pku.harness.core.TurnNotice

/**
 * The ongoing notification while a turn runs with the app not in front (issue 41.5): a plain
 * ongoing notification, low importance, no foreground service. Its words are the core's
 * ([TurnNotice]: that the assistant is working, never what on); a tap opens the app.
 */
class TurnNotifications(private val context: Context) {
    private val manager = NotificationManagerCompat.from(context)

    fun createChannel() {
        val channel = NotificationChannelCompat.Builder(CHANNEL, NotificationManagerCompat.IMPORTANCE_LOW)
            .setName("助手正在处理 · Working")
            .build()
        manager.createNotificationChannel(channel)
    }

    // The caller posts only when JobNotifications.allowed() says notifications are shown.
    @SuppressLint("MissingPermission")
    fun post(notice: TurnNotice) {
        val open = PendingIntent.getActivity(
            context, 0,
            Intent(context, MainActivity::class.java).addFlags(Intent.FLAG_ACTIVITY_NEW_TASK or Intent.FLAG_ACTIVITY_CLEAR_TOP),
            PendingIntent.FLAG_IMMUTABLE or PendingIntent.FLAG_UPDATE_CURRENT,
        )
        val builder = NotificationCompat.Builder(context, CHANNEL)
            .setSmallIcon(R.drawable.ic_notification)
            .setContentTitle(notice.title)
            .setContentText(notice.body)
            .setContentIntent(open)
            .setOngoing(true)
            .setOnlyAlertOnce(true)
            .setPriority(NotificationCompat.PRIORITY_LOW)
        manager.notify(TAG, ID, builder.build())
    }

    /** No turn runs, or the app is in front: the notification goes. */
    fun cancel() = manager.cancel(TAG, ID)

    companion object {
        const val CHANNEL = "turns"
        const val TAG = "turn"
        const val ID = 1
    }
}
