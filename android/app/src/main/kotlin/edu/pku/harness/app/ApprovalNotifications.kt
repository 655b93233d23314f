package edu.pku.harness.app

import android.annotation.SuppressLint
import android.app.PendingIntent
import android.content.Context
import android.content.Intent
import androidx.core.app.NotificationChannelCompat
import androidx.core.app.NotificationCompat
import androidx.core.app.NotificationManagerCompat
import edu.pku.harness.core.ApprovalNotice

/**
 * The notification an ask posts while the app is not in front. Its words are the core's
 * ([ApprovalNotice]: the plugin and tool, never the call's inputs, since a locked screen shows
 * it), and its only action opens the sheet after the phone is unlocked
 * (`setAuthenticationRequired`). It never carries an answer: the sheet is where one is given.
 */
class ApprovalNotifications(private val context: Context) {
    private val manager = NotificationManagerCompat.from(context)

    fun createChannel() {
        val channel = NotificationChannelCompat.Builder(CHANNEL, NotificationManagerCompat.IMPORTANCE_HIGH)
            .setName("助手在等你确认 · Waiting for you")
            .build()
        manager.createNotificationChannel(channel)
    }

    // The caller posts only when JobNotifications.allowed() says notifications are shown.
    @SuppressLint("MissingPermission")
    fun post(id: ULong, notice: ApprovalNotice) {
        val open = PendingIntent.getActivity(
            context, id.toInt(),
            Intent(context, MainActivity::class.java).addFlags(Intent.FLAG_ACTIVITY_NEW_TASK or Intent.FLAG_ACTIVITY_CLEAR_TOP),
            PendingIntent.FLAG_IMMUTABLE or PendingIntent.FLAG_UPDATE_CURRENT,
        )
        val unlockFirst = NotificationCompat.Action.Builder(0, notice.body, open)
            .setAuthenticationRequired(true)
            .build()
        val builder = NotificationCompat.Builder(context, CHANNEL)
            .setSmallIcon(R.drawable.ic_notification)
            .setContentTitle(notice.title)
            .setContentText(notice.body)
            .setVisibility(NotificationCompat.VISIBILITY_PRIVATE)
            .setPublicVersion(
                NotificationCompat.Builder(context, CHANNEL)
                    .setSmallIcon(R.drawable.ic_notification)
                    .setContentTitle(notice.title)
                    .build(),
            )
            .addAction(unlockFirst)
            .setAutoCancel(true)
        manager.notify(TAG, id.toInt(), builder.build())
    }

    /** The ask was answered or withdrawn: its notification goes. */
    fun cancel(id: ULong) = manager.cancel(TAG, id.toInt())

    companion object {
        const val CHANNEL = "approvals"
        const val TAG = "approval"
    }
}
