package edu.pku.harness.ui

import androidx.compose.runtime.staticCompositionLocalOf
import androidx.compose.ui.graphics.ImageBitmap
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.Route
import edu.pku.harness.core.ShellEffect
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asStateFlow

/**
 * What only the phone can do, asked for by the core as a `ShellEffect` after a tap: the app
 * implements it with Android's APIs, the tests fake it.
 */
interface PhoneActions {
    /** Shows the system permission dialog (only ever after a tap); returns what the user chose. */
    suspend fun requestPermission(permission: Permission): PermissionState

    /** Opens the system settings page where this permission is granted. */
    fun openPermissionSettings(permission: Permission)

    /** Shows the system document picker; null when the user cancels. */
    suspend fun pickDocument(): PickedDocument?

    /** Opens this page in the system's browser; the core hands only `https` ones. */
    fun openBrowser(url: String)

    /**
     * Decodes a picture a tool answered with (PNG, JPEG, GIF or WebP, as the core names it) for
     * the chat to draw; null when it does not decode, and the chat shows its words instead.
     */
    fun decodeImage(bytes: ByteArray): ImageBitmap? = null

    /**
     * Opens the in-app scanner of 云端's pairing QR with the core's [words] (asking for the
     * camera there); returns once it is closed, joined or not. Android hands the core each
     * frame; a phone without a camera has nothing to open.
     */
    suspend fun scanPairingQr(words: ShellEffect.ScanPairingQr) {}

    /**
     * Keeps the window out of screenshots, screen recordings and the recent-apps thumbnail
     * while [secret] (Android's FLAG_SECURE): 云端's pairing QR carries the account key.
     */
    fun keepOffScreenshots(secret: Boolean) {}
}

/** How the chat decodes a tool's picture: the phone's decoder ([PhoneActions.decodeImage]). */
val LocalPictures = staticCompositionLocalOf<(ByteArray) -> ImageBitmap?> { { null } }

/**
 * A document the user picked: its file name (the core decides by it what the file is and what
 * may be attached) and its bytes as the phone read them, which the core reads into text.
 */
class PickedDocument(val name: String, val bytes: ByteArray)

/**
 * Which screen is shown. The Platform's `openScreen(route)` lands here:
 * `navigator.open(harness.routeFor(screen) ?: return)`.
 */
class AppNavigator(start: Route = Route.TODAY) {
    private val current = MutableStateFlow(start)
    val route: StateFlow<Route> = current.asStateFlow()
    private val plugin = MutableStateFlow<Pair<String, String>?>(null)

    /** The plugin's declared screen [Route.PLUGIN_SCREEN] shows: its plugin and screen ids. */
    val pluginScreen: StateFlow<Pair<String, String>?> = plugin.asStateFlow()

    fun open(route: Route) {
        current.value = route
    }

    private val source = MutableStateFlow<Pair<String, String>?>(null)

    /**
     * The data source [Route.PLUGIN_SCREEN] shows instead, when no declared screen shows it: its
     * plugin and source key (`Acted.OpenDataSource`).
     */
    val dataSource: StateFlow<Pair<String, String>?> = source.asStateFlow()

    /** Shows a plugin's declared screen a tap asked for (`Acted.OpenPluginScreen`). */
    fun openPluginScreen(plugin: String, screen: String) {
        this.source.value = null
        this.plugin.value = plugin to screen
        current.value = Route.PLUGIN_SCREEN
    }

    /** Shows a data source's own value a tap asked for (`Acted.OpenDataSource`). */
    fun openDataSource(plugin: String, source: String) {
        this.plugin.value = null
        this.source.value = plugin to source
        current.value = Route.PLUGIN_SCREEN
    }
}
