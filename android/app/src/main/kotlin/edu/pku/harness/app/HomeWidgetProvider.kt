package edu.pku.harness.app

import android.appwidget.AppWidgetManager
import android.appwidget.AppWidgetProvider
import android.content.BroadcastReceiver
import android.content.Context
import kotlinx.coroutines.launch

/**
 * The home-screen widgets' provider: each update (the system's after a reboot or an app update,
 * a widget's own refresh alarm, a new pick) reads the widgets it names through the app's one
 * Harness off the main thread ([goAsync]) and lays them out ([HomeWidgets]).
 */
class HomeWidgetProvider : AppWidgetProvider() {
    override fun onUpdate(context: Context, manager: AppWidgetManager, appWidgetIds: IntArray) {
        val app = context.applicationContext as HarnessApplication
        val widgets = HomeWidgets(app)
        // Null when onUpdate is called outside a broadcast (a host calling it directly).
        val pending: BroadcastReceiver.PendingResult? = goAsync()
        app.scope.launch {
            try {
                for (id in appWidgetIds) widgets.update(id, app.harness)
            } finally {
                pending?.finish()
            }
        }
    }

    override fun onDeleted(context: Context, appWidgetIds: IntArray) {
        val widgets = HomeWidgets(context.applicationContext)
        for (id in appWidgetIds) widgets.forget(id)
    }
}
