package edu.pku.harness.app

import android.Manifest
import android.annotation.SuppressLint
import android.app.PendingIntent
import android.content.Context
import android.content.Intent
import android.content.pm.PackageManager
import android.os.Build
import androidx.core.app.NotificationChannelCompat
import androidx.core.app.NotificationCompat
import androidx.core.app.NotificationManagerCompat
import androidx.core.content.ContextCompat
import edu.pku.harness.AppNotification
import edu.pku.harness.HarnessException

/**
 * The notifications scheduled jobs produce, on the channel "jobs". Each is posted with its
 * AppNotification id as tag and that id's hash as number, so a later run of the same job
 * replaces its earlier notification instead of stacking (the core's ids are `job-<id>`).
 */
class JobNotifications(private val context: Context) {
    private val manager = NotificationManagerCompat.from(context)

    /** Creates the channel; creating it again changes nothing the user set. */
    fun createChannel() {
        val channel = NotificationChannelCompat.Builder(CHANNEL, NotificationManagerCompat.IMPORTANCE_DEFAULT)
            .setName(context.getString(R.string.channel_jobs))
            .setDescription(context.getString(R.string.channel_jobs_description))
            .build()
        manager.createNotificationChannel(channel)
    }

    /** Whether a notification posted now would be shown. */
    fun allowed(): Boolean {
        if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.TIRAMISU &&
            ContextCompat.checkSelfPermission(context, Manifest.permission.POST_NOTIFICATIONS) != PackageManager.PERMISSION_GRANTED
        ) {
            return false
        }
        return manager.areNotificationsEnabled()
    }

    // allowed() checks POST_NOTIFICATIONS first, in a call lint does not follow.
    @SuppressLint("MissingPermission")
    fun post(notification: AppNotification) {
        // seed 000: the permission is asked for only from a tap, never here; without it the
        // run's report still holds what the notification would have said.
        if (!allowed()) {
            throw HarnessException.Platform(
                "notifications are off for this app: allow them in Settings → Consent and permissions → Notifications",
            )
        }
        val open = PendingIntent.getActivity(
            context, 0,
            Intent(context, MainActivity::class.java).addFlags(Intent.FLAG_ACTIVITY_NEW_TASK or Intent.FLAG_ACTIVITY_CLEAR_TOP),
            PendingIntent.FLAG_IMMUTABLE or PendingIntent.FLAG_UPDATE_CURRENT,
        )
        val builder = NotificationCompat.Builder(context, CHANNEL)
            .setSmallIcon(R.drawable.ic_notification)
            .setContentTitle(notification.title)
            .setContentText(notification.body)
            .setStyle(NotificationCompat.BigTextStyle().bigText(notification.body))
            .setContentIntent(open)
            .setAutoCancel(true)
        notification.plugin?.let { builder.setSubText(it) }
        try {
            manager.notify(notification.id, notification.id.hashCode(), builder.build())
        } catch (e: SecurityException) {
            // The permission was withdrawn after the check.
            throw HarnessException.Platform("notifications are off for this app: ${e.message}")
        }
    }

    companion object {
        const val CHANNEL = "jobs"
    }
}
