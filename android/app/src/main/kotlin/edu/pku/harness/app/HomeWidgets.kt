package edu.pku.harness.app

import android.app.AlarmManager
import android.app.PendingIntent
import android.appwidget.AppWidgetManager
import android.content.ComponentName
import android.content.Context
import android.content.Intent
import android.util.Log
import android.view.View
import android.widget.RemoteViews
import edu.pku.harness.HarnessException
import edu.pku.harness.core.Action
import edu.pku.harness.core.WidgetModel
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext

/** The data source a widget shows: the student's pick on its configure screen. */
data class WidgetChoice(val plugin: String, val source: String)

/**
 * The home-screen widgets (seed 004: "A widget reads it with host.useToolData"): the data source
 * each widget shows, kept per appWidgetId in the app's own SharedPreferences; each widget laid
 * out from the core's `WidgetModel` alone (its title, lines, age, or its message: 登录后显示 and
 * no data while signed out); its refresh armed at the model's `refreshMs`; its tap opening
 * [MainActivity] with the plugin and source of the model's `open` action.
 */
class HomeWidgets(private val context: Context) {
    private val prefs = context.getSharedPreferences(PREFS, Context.MODE_PRIVATE)
    private val alarms = context.getSystemService(AlarmManager::class.java)

    /** The source widget [id] shows; null until the student picked one. */
    fun choice(id: Int): WidgetChoice? {
        val plugin = prefs.getString("$id.plugin", null) ?: return null
        val source = prefs.getString("$id.source", null) ?: return null
        return WidgetChoice(plugin, source)
    }

    fun choose(id: Int, choice: WidgetChoice) {
        prefs.edit().putString("$id.plugin", choice.plugin).putString("$id.source", choice.source).apply()
    }

    /** The widget was taken off the home screen: its pick and its refresh go. */
    fun forget(id: Int) {
        prefs.edit().remove("$id.plugin").remove("$id.source").apply()
        existingRefresh(id)?.let {
            alarms.cancel(it)
            it.cancel()
        }
    }

    /**
     * Reads and arms again each widget whose refresh is not armed: a force-stop cancels the
     * app's alarms and tells it nothing, so the app's next start finds them gone.
     */
    suspend fun rearmMissing(harness: edu.pku.harness.Harness) {
        val ids = AppWidgetManager.getInstance(context).getAppWidgetIds(ComponentName(context, HomeWidgetProvider::class.java))
        for (id in ids) if (existingRefresh(id) == null) update(id, harness)
    }

    /**
     * Reads widget [id]'s model through the core (the same cache as Today: a fresh value is not
     * read again), lays it out, and arms its next refresh at the model's `refreshMs`. A widget
     * with no pick yet is left as it is (its configure screen updates it once picked).
     */
    suspend fun update(id: Int, harness: edu.pku.harness.Harness) {
        val choice = choice(id) ?: return
        val views = try {
            val model = harness.widget(choice.plugin, choice.source)
            arm(id, model.refreshMs.toLong())
            render(id, model)
        } catch (e: HarnessException) {
            // The plugin was removed or the core could not read: its words, and no data. The
            // next update (the system's, or a new pick) tries again.
            Log.w(HarnessApplication.TAG, "widget $id: reading ${choice.plugin}.${choice.source} failed: ${e.message}")
            failed(id, e)
        }
        // On the main thread, where a host in this process (a test's) applies the views.
        withContext(Dispatchers.Main) { AppWidgetManager.getInstance(context).updateAppWidget(id, views) }
    }

    /** Widget [id] laid out from [model]: every word is the core's. */
    fun render(id: Int, model: WidgetModel): RemoteViews {
        val views = RemoteViews(context.packageName, R.layout.widget_home)
        views.setTextViewText(R.id.widget_title, model.title)
        views.removeAllViews(R.id.widget_lines)
        for (line in model.lines) {
            val row = RemoteViews(context.packageName, R.layout.widget_line)
            row.setTextViewText(R.id.widget_line_label, line.label)
            row.setTextViewText(R.id.widget_line_value, line.value)
            views.addView(R.id.widget_lines, row)
        }
        shown(views, R.id.widget_message, model.message)
        shown(views, R.id.widget_age, model.age)
        views.setOnClickPendingIntent(R.id.widget_root, tap(id, model.open))
        return views
    }

    private fun failed(id: Int, e: HarnessException): RemoteViews {
        val views = RemoteViews(context.packageName, R.layout.widget_home)
        views.removeAllViews(R.id.widget_lines)
        // The bindings' exceptions print as `reason=…`; the student reads the core's words alone.
        shown(views, R.id.widget_message, (e.message ?: e.toString()).removePrefix("reason="))
        shown(views, R.id.widget_age, null)
        views.setOnClickPendingIntent(R.id.widget_root, tap(id, null))
        return views
    }

    private fun shown(views: RemoteViews, view: Int, text: String?) {
        views.setTextViewText(view, text.orEmpty())
        views.setViewVisibility(view, if (text == null) View.GONE else View.VISIBLE)
    }

    /**
     * The tap: MainActivity with the plugin and source of the model's `open`
     * (`Action.OpenDataSource`), which it hands back to the core; the app as it is without one
     * (the plugin is off or gone).
     */
    private fun tap(id: Int, open: Action?): PendingIntent {
        val intent = Intent(context, MainActivity::class.java).setAction(ACTION_OPEN)
        if (open is Action.OpenDataSource) intent.putExtra(EXTRA_PLUGIN, open.plugin).putExtra(EXTRA_SOURCE, open.source)
        // One PendingIntent per widget: the extras differ, and PendingIntents equal but for
        // their extras are one and the same.
        return PendingIntent.getActivity(context, id, intent, PendingIntent.FLAG_IMMUTABLE or PendingIntent.FLAG_UPDATE_CURRENT)
    }

    /**
     * Widget [id]'s next read, [refreshMs] from now: an inexact alarm that does not wake the
     * phone (a widget on a dark screen needs no fresh value; it is read when the phone wakes),
     * replacing the one armed before.
     */
    private fun arm(id: Int, refreshMs: Long) {
        alarms.set(AlarmManager.RTC, System.currentTimeMillis() + refreshMs, refreshIntent(context, id))
    }

    private fun existingRefresh(id: Int): PendingIntent? = PendingIntent.getBroadcast(
        context, id, refresh(context, id), PendingIntent.FLAG_IMMUTABLE or PendingIntent.FLAG_NO_CREATE,
    )

    companion object {
        private const val PREFS = "home-widgets"
        const val ACTION_OPEN = "edu.pku.harness.action.OPEN_DATA_SOURCE"
        const val EXTRA_PLUGIN = "edu.pku.harness.extra.PLUGIN"
        const val EXTRA_SOURCE = "edu.pku.harness.extra.SOURCE"

        /** The provider's own update of widget [id] alone: what its alarm and its pick send. */
        fun refresh(context: Context, id: Int): Intent = Intent(context, HomeWidgetProvider::class.java)
            .setAction(AppWidgetManager.ACTION_APPWIDGET_UPDATE)
            .putExtra(AppWidgetManager.EXTRA_APPWIDGET_IDS, intArrayOf(id))

        fun refreshIntent(context: Context, id: Int): PendingIntent = PendingIntent.getBroadcast(
            context, id, refresh(context, id), PendingIntent.FLAG_IMMUTABLE or PendingIntent.FLAG_UPDATE_CURRENT,
        )

        /** The widget tap's plugin and source an intent carries; null for any other intent. */
        fun tapped(intent: Intent?): WidgetChoice? {
            if (intent?.action != ACTION_OPEN) return null
            val plugin = intent.getStringExtra(EXTRA_PLUGIN) ?: return null
            val source = intent.getStringExtra(EXTRA_SOURCE) ?: return null
            return WidgetChoice(plugin, source)
        }
    }
}
