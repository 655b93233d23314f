package edu.pku.harness.app

import android.content.Intent
import android.os.Bundle
import android.util.Log
import androidx.activity.ComponentActivity
import androidx.activity.compose.setContent
import edu.pku.harness.HarnessException
import edu.pku.harness.core.Acted
import edu.pku.harness.core.Action
import edu.pku.harness.ui.HarnessApp
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext

/** The app's one activity: the screens of :ui over the application's Harness. */
class MainActivity : ComponentActivity() {
    /** A field, so that its result launchers are registered before the activity starts. */
    val phone = AndroidPhoneActions(this)

    private val app get() = application as HarnessApplication

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        app.platform.phone = phone
        setContent {
            HarnessApp(harness = app.harness, approvals = app.approvals, phone = phone, navigator = app.navigator)
        }
        signInReturned(intent)
        // Recreated (turned), the screen it opened is already the navigator's.
        if (savedInstanceState == null) widgetTapped(intent)
    }

    /** The browser coming back from a remote server's sign-in, or a widget's tap, to this running activity. */
    override fun onNewIntent(intent: Intent) {
        super.onNewIntent(intent)
        signInReturned(intent)
        widgetTapped(intent)
    }

    /**
     * A home-screen widget's tap: its model's `open` (`Action.OpenDataSource`) handed to the
     * core, whose answer names the screen (the plugin's screen that shows the source, else the
     * source's own value), as a Today tile's tap does.
     */
    private fun widgetTapped(intent: Intent?) {
        val tapped = HomeWidgets.tapped(intent) ?: return
        app.scope.launch {
            val acted = try {
                app.harness.act(Action.OpenDataSource(tapped.plugin, tapped.source))
            } catch (e: HarnessException) {
                // The plugin was turned off or removed since: the app opens where it is.
                Log.w(HarnessApplication.TAG, "a widget's tap: ${e.message}")
                return@launch
            }
            withContext(Dispatchers.Main) {
                when (acted) {
                    is Acted.OpenPluginScreen -> app.navigator.openPluginScreen(acted.plugin, acted.screen)
                    is Acted.OpenDataSource -> app.navigator.openDataSource(acted.plugin, acted.source)
                    else -> Unit
                }
            }
        }
    }

    /** Hands the app's sign-in link (edu.pku.harness:/oauth/callback?code=…) to the platform. */
    private fun signInReturned(intent: Intent?) {
        val uri = intent?.data ?: return
        if (uri.scheme == "edu.pku.harness" && uri.path == "/oauth/callback") app.platform.signInReturned(uri.toString())
    }

    override fun onPause() {
        app.approvalAlerts.inFront(false)
        super.onPause()
    }

    override fun onDestroy() {
        // A newer activity (recreated) may already have taken its place.
        if (app.platform.phone === phone) app.platform.phone = null
        super.onDestroy()
    }

    override fun onResume() {
        super.onResume()
        // The sheet shows what waits: an ask's notification is for when the app is away.
        app.approvalAlerts.inFront(true)
        // The user may come back from the system settings with a permission changed; and a
        // force-stop since the last start cancelled the widgets' refreshes.
        app.scope.launch(Dispatchers.IO) {
            app.refreshPermissions()
            HomeWidgets(app).rearmMissing(app.harness)
        }
    }
}
