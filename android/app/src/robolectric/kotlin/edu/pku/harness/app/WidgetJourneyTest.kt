package edu.pku.harness.app

import android.app.AlarmManager
import android.appwidget.AppWidgetManager
import android.content.ComponentName
import android.content.Intent
import android.graphics.Bitmap
import android.graphics.Canvas
import android.view.View
import android.view.ViewGroup
import android.widget.ListView
import android.widget.TextView
import androidx.test.core.app.ApplicationProvider
import androidx.test.ext.junit.runners.AndroidJUnit4
import edu.pku.harness.Consent
import edu.pku.harness.DevelopmentOptions
import edu.pku.harness.Harness
import edu.pku.harness.core.Action
import edu.pku.harness.core.Language
import edu.pku.harness.core.Route
import edu.pku.harness.core.WidgetModel
import edu.pku.harness.startCampusSimulator
import kotlinx.coroutines.runBlocking
import org.junit.After
import org.junit.Test
import org.junit.runner.RunWith
import org.robolectric.Robolectric
import org.robolectric.Shadows.shadowOf
import org.robolectric.annotation.Config
import java.awt.image.BufferedImage
import java.io.File
import javax.imageio.ImageIO
import kotlin.test.assertEquals
import kotlin.test.assertNotNull
import kotlin.test.assertTrue

/** The app's Application on the shipped campus plugins, reaching the campus simulator on 127.0.0.1. */
class CampusSimulatorApplication : SoftwareKeyApplication() {
    override fun openHarness(dataDir: String, platform: AndroidPlatform): Harness =
        Harness.openForDevelopment(dataDir, platform, DevelopmentOptions(samplePlugins = false, campusOrigin = campus))

    private companion object {
        /** One simulator for the process: it keeps no session of this app's between tests. */
        val campus: String by lazy { startCampusSimulator() }
    }
}

/**
 * The home-screen widget (issue 36, item 3) on the real core and the campus simulator: picked on
 * its configure screen, laid out from the core's WidgetModel (登录后显示 and no data while signed
 * out; the card's balance, its lines and age once signed in), refreshed by the alarm armed at the
 * model's refreshMs, and its tap opening MainActivity on the card's screen through the core.
 *
 * It runs last of the journeys (the runner takes classes by name): a Compose journey run after
 * it in the same process never sees Compose idle, although this test signs out, shuts its
 * core down and destroys both activities it started; what it leaves running is not found yet.
 */
@RunWith(AndroidJUnit4::class)
@Config(application = CampusSimulatorApplication::class)
class WidgetJourneyTest {
    private val app get() = ApplicationProvider.getApplicationContext<HarnessApplication>()

    @Test fun a_widget_shows_nothing_but_sign_in_while_signed_out_then_the_balance_at_its_refresh_and_its_tap_opens_the_cards_screen() {
        val harness = app.harness
        harness.setConsent(Consent(termsAccepted = true, met = emptyList()))
        runBlocking { harness.act(Action.SetLanguage(Language.ZH)) }

        // The launcher binds a widget and opens its configure screen; the student picks the card.
        val manager = AppWidgetManager.getInstance(app)
        val id = 7
        shadowOf(manager).bindAppWidgetId(id, ComponentName(app, HomeWidgetProvider::class.java))
        val configuring = Robolectric.buildActivity(
            WidgetConfigureActivity::class.java,
            Intent().putExtra(AppWidgetManager.EXTRA_APPWIDGET_ID, id),
        ).setup()
        val configure = configuring.get()
        waitFor("the widget's sources") { configure.sources.isNotEmpty() }
        val list = configure.findViewById<ListView>(R.id.widget_sources)
        val titles = (0 until list.adapter.count).map { list.adapter.getItem(it) as String }
        assertEquals(configure.sources.map { it.title }, titles)
        val card = titles.indexOf("校园卡 · 校园卡余额")
        assertTrue(card >= 0, "$titles")
        val picked = System.currentTimeMillis()
        assertTrue(list.performItemClick(null, card, list.adapter.getItemId(card)))
        assertEquals(WidgetChoice("wallet", "balance"), HomeWidgets(app).choice(id))
        assertEquals(android.app.Activity.RESULT_OK, shadowOf(configure).resultCode)
        assertEquals(id, shadowOf(configure).resultIntent.getIntExtra(AppWidgetManager.EXTRA_APPWIDGET_ID, -1))

        // Signed out: the title and 登录后显示, no line, no age.
        val signedOut = runBlocking { harness.widget("wallet", "balance") }
        waitFor("the signed-out widget") { shown(id).contains("登录后显示") }
        val read = System.currentTimeMillis()
        assertEquals(listOf(signedOut.title, "登录后显示"), shownTexts(widgetView(id)))
        assertEquals(0, widgetView(id).findViewById<ViewGroup>(R.id.widget_lines).childCount)
        screenshot(widgetView(id), "widget-signed-out-zh")

        // Its refresh: an inexact alarm that does not wake the phone, at the model's period.
        assertEquals(1_800_000uL, signedOut.refreshMs)
        val armed = refreshAlarm(id)
        assertEquals(AlarmManager.RTC, armed.type)
        assertTrue(armed.triggerAtMs - 30 * 60_000L in picked..read, "armed at ${armed.triggerAtMs}, read between $picked and $read")

        // Signed in, the alarm's refresh shows the balance read through the core.
        runBlocking { harness.act(Action.CampusSignIn("2100012345", "pku-demo-password", false)) }
        val fired = System.currentTimeMillis()
        armed.operation!!.send()
        waitFor("the card's balance on the widget") { shown(id).contains("42.5") }
        val readAgain = System.currentTimeMillis()
        val shown: WidgetModel = runBlocking { harness.widget("wallet", "balance") }
        assertEquals("余额（元）" to "42.5", shown.lines[0].label to shown.lines[0].value)
        assertEquals("刚刚更新", shown.age)
        assertEquals(
            listOf(shown.title) + shown.lines.flatMap { listOf(it.label, it.value) } + listOf("刚刚更新"),
            shownTexts(widgetView(id)),
        )
        assertEquals(shown.lines.size, widgetView(id).findViewById<ViewGroup>(R.id.widget_lines).childCount)
        assertTrue(refreshAlarm(id).triggerAtMs - 30 * 60_000L in fired..readAgain, "re-armed at ${refreshAlarm(id).triggerAtMs}")
        screenshot(widgetView(id), "widget-card-zh")

        // The tap: MainActivity with the card's plugin and source.
        assertTrue(widgetView(id).findViewById<View>(R.id.widget_root).performClick())
        val tap = assertNotNull(shadowOf(app).nextStartedActivity, "the tap started no activity")
        assertEquals(ComponentName(app, MainActivity::class.java), tap.component)
        assertEquals(WidgetChoice("wallet", "balance"), HomeWidgets.tapped(tap))

        // A force-stop cancels the app's alarms and its PendingIntents, and tells it nothing.
        val alarms = app.getSystemService(AlarmManager::class.java)
        HomeWidgets.refreshIntent(app, id).let { alarms.cancel(it); it.cancel() }
        assertEquals(emptyList(), widgetAlarms(id))

        // MainActivity hands the model's open to the core and lands on the card's screen; its
        // start arms the cancelled refresh again.
        assertEquals(Route.TODAY, app.navigator.route.value)
        val main = Robolectric.buildActivity(MainActivity::class.java, tap).setup()
        try {
            waitFor("the card's screen") { app.navigator.route.value == Route.PLUGIN_SCREEN }
            assertEquals("wallet" to "card", app.navigator.pluginScreen.value)
            waitFor("the widget's refresh armed again") { widgetAlarms(id).size == 1 }
            assertEquals(AlarmManager.RTC, refreshAlarm(id).type)
        } finally {
            // Its composition goes with it, so no screen of this test is left drawing.
            main.pause().stop().destroy()
        }

        // Taken off the home screen, its pick and its alarm go.
        HomeWidgetProvider().onDeleted(app, intArrayOf(id))
        assertEquals(null, HomeWidgets(app).choice(id))
        assertEquals(emptyList(), widgetAlarms(id))

        configuring.pause().stop().destroy()
    }

    /**
     * The core this test signed in to the simulator stops with it: its engine would otherwise
     * go on serving the campus session's reads on the main looper the next test's Compose waits
     * to see idle.
     */
    @After fun stop() {
        runBlocking { app.harness.act(Action.CampusSignOut) }
        app.harness.shutdown()
    }

    private fun widgetView(id: Int): View = assertNotNull(shadowOf(AppWidgetManager.getInstance(app)).getViewFor(id), "widget $id has no view")

    /** The texts widget [id] shows, none before its provider first lays it out. */
    private fun shown(id: Int): List<String> =
        shadowOf(AppWidgetManager.getInstance(app)).getViewFor(id)?.let(::shownTexts).orEmpty()

    private fun widgetAlarms(id: Int) = shadowOf(app.getSystemService(AlarmManager::class.java)).scheduledAlarms
        .filter { it.operation == HomeWidgets.refreshIntent(app, id) }

    private fun refreshAlarm(id: Int) = widgetAlarms(id).single()

    /** The texts a student sees on [view]: each shown TextView's, in layout order. */
    private fun shownTexts(view: View): List<String> = when {
        view.visibility != View.VISIBLE -> emptyList()
        view is TextView -> listOf(view.text.toString())
        view is ViewGroup -> (0 until view.childCount).flatMap { shownTexts(view.getChildAt(it)) }
        else -> emptyList()
    }

    /** [view] drawn by Android's own graphics at a 3 × 2 cell widget's size, saved as a PNG. */
    private fun screenshot(view: View, name: String): File {
        val density = app.resources.displayMetrics.density
        val width = (250 * density).toInt()
        val height = (140 * density).toInt()
        view.measure(View.MeasureSpec.makeMeasureSpec(width, View.MeasureSpec.EXACTLY), View.MeasureSpec.makeMeasureSpec(height, View.MeasureSpec.EXACTLY))
        view.layout(0, 0, width, height)
        val bitmap = Bitmap.createBitmap(width, height, Bitmap.Config.ARGB_8888)
        bitmap.eraseColor(0xFFE8EAF0.toInt())
        view.draw(Canvas(bitmap))
        val pixels = IntArray(width * height)
        bitmap.getPixels(pixels, 0, width, 0, 0, width, height)
        val image = BufferedImage(width, height, BufferedImage.TYPE_INT_ARGB)
        image.setRGB(0, 0, width, height, pixels, 0, width)
        val dir = File(System.getProperty("pku.screenshots") ?: "target/screenshots").apply { mkdirs() }
        val file = File(dir, "$name.png")
        assertTrue(ImageIO.write(image, "png", file), "no PNG writer for $file")
        return file
    }
}
