package edu.pku.harness.app

import android.app.Activity
import android.appwidget.AppWidgetManager
import android.content.Intent
import android.os.Bundle
import android.util.Log
import android.view.View
import android.widget.ArrayAdapter
import android.widget.ListView
import edu.pku.harness.HarnessException
import edu.pku.harness.core.WidgetSource
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext

/**
 * A new widget's configure screen (and a placed one's, as it is reconfigurable): the data
 * sources the core offers (`widgetSources`, in the student's language), one tap picking the one
 * this widget shows. The pick is kept per appWidgetId ([HomeWidgets]) and the widget read at
 * once; leaving without a pick cancels the widget, as Android expects.
 */
class WidgetConfigureActivity : Activity() {
    private val app get() = application as HarnessApplication
    private var widgetId = AppWidgetManager.INVALID_APPWIDGET_ID

    /** The sources listed, in the list's order; empty until the core answered. */
    var sources: List<WidgetSource> = emptyList()
        private set

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        widgetId = intent?.getIntExtra(AppWidgetManager.EXTRA_APPWIDGET_ID, AppWidgetManager.INVALID_APPWIDGET_ID)
            ?: AppWidgetManager.INVALID_APPWIDGET_ID
        setResult(Activity.RESULT_CANCELED, Intent().putExtra(AppWidgetManager.EXTRA_APPWIDGET_ID, widgetId))
        if (widgetId == AppWidgetManager.INVALID_APPWIDGET_ID) {
            finish()
            return
        }
        setContentView(R.layout.widget_configure)
        val list = findViewById<ListView>(R.id.widget_sources)
        list.setOnItemClickListener { _, _, position, _ -> pick(sources[position]) }
        app.scope.launch {
            val offered = try {
                app.harness.widgetSources()
            } catch (e: HarnessException) {
                Log.w(HarnessApplication.TAG, "the widget's sources could not be read: ${e.message}")
                emptyList()
            }
            withContext(Dispatchers.Main) {
                sources = offered
                list.adapter = ArrayAdapter(this@WidgetConfigureActivity, android.R.layout.simple_list_item_1, offered.map { it.title })
                findViewById<View>(R.id.widget_sources_empty).visibility = if (offered.isEmpty()) View.VISIBLE else View.GONE
            }
        }
    }

    /** Keeps [source] for this widget, reads it at once, and hands the widget to the launcher. */
    fun pick(source: WidgetSource) {
        HomeWidgets(this).choose(widgetId, WidgetChoice(source.plugin, source.source))
        sendBroadcast(HomeWidgets.refresh(this, widgetId))
        setResult(Activity.RESULT_OK, Intent().putExtra(AppWidgetManager.EXTRA_APPWIDGET_ID, widgetId))
        finish()
    }
}
