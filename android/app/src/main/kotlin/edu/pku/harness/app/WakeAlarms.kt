package edu.pku.harness.app

import android.app.AlarmManager
import android.app.PendingIntent
import android.content.Context
import android.content.Intent
import android.os.Build

/** Which AlarmManager call armed the wake-up. */
enum class AlarmApi { EXACT, INEXACT }

/** The wake-up that is armed: when, and through which call. */
data class ArmedWakeUp(val atEpochMs: Long, val api: AlarmApi)

/**
 * The core's one wake-up (DESIGN.md §7): an exact alarm when the core asks for one and the
 * system allows it, else an inexact one, both firing [WakeReceiver] even in Doze. The armed time
 * and call are kept in SharedPreferences, so that what was armed can be read back (the tests
 * do) and survives the process.
 *
 * [canScheduleExact] is the system's answer by default; the tests replace it to see the
 * fallback on a phone that allows exact alarms.
 */
class WakeAlarms(
    private val context: Context,
    private val canScheduleExact: () -> Boolean = { canScheduleExactAlarms(context) },
) {
    private val alarms = context.getSystemService(AlarmManager::class.java)
    private val prefs = context.getSharedPreferences(PREFS, Context.MODE_PRIVATE)

    /** Arms the wake-up at [atEpochMs], replacing the armed one (same PendingIntent). */
    fun arm(atEpochMs: Long, exact: Boolean) {
        val intent = wakeIntent(context)
        var api = AlarmApi.INEXACT
        if (exact && canScheduleExact()) {
            try {
                alarms.setExactAndAllowWhileIdle(AlarmManager.RTC_WAKEUP, atEpochMs, intent)
                api = AlarmApi.EXACT
            } catch (e: SecurityException) {
                // The permission was withdrawn between the check and the call: inexact it is.
            }
        }
        if (api == AlarmApi.INEXACT) alarms.setAndAllowWhileIdle(AlarmManager.RTC_WAKEUP, atEpochMs, intent)
        prefs.edit().putLong(KEY_AT, atEpochMs).putString(KEY_API, api.name).apply()
    }

    /** Cancels the armed wake-up, if any. */
    fun cancel() {
        val intent = existingWakeIntent(context)
        if (intent != null) {
            alarms.cancel(intent)
            intent.cancel()
        }
        prefs.edit().remove(KEY_AT).remove(KEY_API).apply()
    }

    /** The wake-up armed last and not cancelled since; null when none. */
    fun armed(): ArmedWakeUp? {
        val api = prefs.getString(KEY_API, null) ?: return null
        return ArmedWakeUp(prefs.getLong(KEY_AT, 0), AlarmApi.valueOf(api))
    }

    companion object {
        private const val PREFS = "wake-alarms"
        private const val KEY_AT = "armed-at-epoch-ms"
        private const val KEY_API = "armed-api"
        private const val REQUEST = 1

        /** Below Android 12 every app may set exact alarms. */
        fun canScheduleExactAlarms(context: Context): Boolean =
            Build.VERSION.SDK_INT < Build.VERSION_CODES.S ||
                context.getSystemService(AlarmManager::class.java).canScheduleExactAlarms()

        private fun intent(context: Context) = Intent(context, WakeReceiver::class.java).setAction(WakeReceiver.ACTION)

        internal fun wakeIntent(context: Context): PendingIntent = PendingIntent.getBroadcast(
            context, REQUEST, intent(context), PendingIntent.FLAG_IMMUTABLE or PendingIntent.FLAG_UPDATE_CURRENT,
        )

        /** The armed wake-up's PendingIntent, or null when none is armed. */
        fun existingWakeIntent(context: Context): PendingIntent? = PendingIntent.getBroadcast(
            context, REQUEST, intent(context), PendingIntent.FLAG_IMMUTABLE or PendingIntent.FLAG_NO_CREATE,
        )
    }
}
