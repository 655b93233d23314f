package edu.pku.harness.app

import android.content.BroadcastReceiver
import android.content.Context
import android.content.Intent
import android.util.Log
import edu.pku.harness.HarnessException
import kotlinx.coroutines.launch

/**
 * What can lose or shift the armed alarm: a reboot (alarms do not survive it), the clock or
 * time zone set by hand, and the exact-alarm permission granted. Each refreshes the permission
 * states, then runs what is due now (a job missed while the phone was off runs once), which
 * also arms the next wake-up through the Platform.
 */
class RearmReceiver : BroadcastReceiver() {
    override fun onReceive(context: Context, intent: Intent) {
        if (intent.action !in ACTIONS) return
        val app = context.applicationContext as HarnessApplication
        val pending = goAsync()
        app.scope.launch {
            try {
                app.refreshPermissions()
                app.harness.runDue(System.currentTimeMillis())
            } catch (e: HarnessException) {
                Log.w(HarnessApplication.TAG, "${intent.action}: re-arming failed: ${e.message}")
            } finally {
                pending.finish()
            }
        }
    }

    companion object {
        val ACTIONS = setOf(
            Intent.ACTION_BOOT_COMPLETED,
            Intent.ACTION_TIME_CHANGED, // "android.intent.action.TIME_SET"
            Intent.ACTION_TIMEZONE_CHANGED,
            // AlarmManager.ACTION_SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED (API 31), sent
            // when the user grants it; withdrawing it stops the app instead.
            "android.app.action.SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED",
        )
    }
}
