package edu.pku.harness.app

import android.content.BroadcastReceiver
import android.content.Context
import android.content.Intent
import android.util.Log
import edu.pku.harness.HarnessException
import kotlinx.coroutines.launch

/**
 * The wake-up alarm fired: runs what is due. The core posts each notification through the
 * Platform and arms the next wake-up itself, so this only runs and finishes.
 */
class WakeReceiver : BroadcastReceiver() {
    override fun onReceive(context: Context, intent: Intent) {
        if (intent.action != ACTION) return
        val app = context.applicationContext as HarnessApplication
        val pending = goAsync()
        app.scope.launch {
            try {
                val runs = app.harness.runDue(System.currentTimeMillis())
                Log.i(HarnessApplication.TAG, "wake-up: ${runs.size} job run(s)")
            } catch (e: HarnessException) {
                Log.w(HarnessApplication.TAG, "wake-up: running the due jobs failed: ${e.message}")
            } finally {
                pending.finish()
            }
        }
    }

    companion object {
        const val ACTION = "edu.pku.harness.action.WAKE_UP"
    }
}
