package edu.pku.harness.app

import android.Manifest
import android.content.Context
import android.content.Intent
import android.net.Uri
import android.content.pm.PackageManager
import android.os.Build
import android.os.Handler
import android.os.Looper
import androidx.core.content.ContextCompat
import edu.pku.harness.AppNotification
import edu.pku.harness.ApprovalPrompt
import edu.pku.harness.ElicitationReply
import edu.pku.harness.Harness
import edu.pku.harness.HarnessException
import edu.pku.harness.PickedDocument
import edu.pku.harness.Platform
import edu.pku.harness.core.Answer
import edu.pku.harness.core.ElicitationAction
import edu.pku.harness.core.ElicitationSheet
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.SignInSheet
import edu.pku.harness.ui.AppNavigator
import edu.pku.harness.ui.ApprovalHost
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.withTimeoutOrNull

/**
 * What only the phone can do, for the core (bindings/src/platform.rs): the approval sheet,
 * the keystore, notifications, the wake-up alarm, the app's screens, the permission states, and
 * the file picker and permission dialogs a plugin's tool the student tapped opens.
 * The core calls these from its own threads and never while it holds a lock, so each may call
 * back into the Harness.
 */
class AndroidPlatform(
    private val context: Context,
    private val approvals: ApprovalHost,
    private val navigator: AppNavigator,
    private val secrets: KeystoreSecrets = KeystoreSecrets(context),
    val alarms: WakeAlarms = WakeAlarms(context),
    val notifications: JobNotifications = JobNotifications(context),
) : Platform {
    private val main = Handler(Looper.getMainLooper())
    private val prefs = context.getSharedPreferences(PREFS, Context.MODE_PRIVATE)

    /** The Harness opened on this platform; set right after Harness.open returns. */
    @Volatile var harness: Harness? = null

    /**
     * Suspends until the user taps an answer on the sheet. When the core stops waiting (the
     * turn was cancelled) this coroutine is cancelled, and ApprovalHost takes the sheet down.
     */
    override suspend fun askApproval(id: ULong, prompt: ApprovalPrompt): Answer = approvals.askApproval(id, prompt)

    /** The sign-in waiting for the browser to come back to the app's link. */
    @Volatile private var returning: CompletableDeferred<String>? = null

    /**
     * The sign-in sheet, then the sign-in page in the system's browser (RFC 8252: an external
     * browser, where the student's own sessions and password manager are, and the app sees no
     * password); the authorization server sends the browser to [redirectUri], the app's link,
     * which MainActivity hands to [signInReturned].
     */
    override suspend fun signIn(sheet: SignInSheet, redirectUri: String): String {
        if (!approvals.confirmSignIn(sheet)) throw HarnessException.Platform("you cancelled the sign-in")
        val back = CompletableDeferred<String>()
        returning = back
        main.post {
            val open = Intent(Intent.ACTION_VIEW, Uri.parse(sheet.page)).addFlags(Intent.FLAG_ACTIVITY_NEW_TASK)
            runCatching { context.startActivity(open) }.onFailure { back.completeExceptionally(it) }
        }
        return try {
            withTimeoutOrNull(SIGN_IN_WAIT_MS) { back.await() }
                ?: throw HarnessException.Platform("the browser did not come back within 5 minutes")
        } catch (e: android.content.ActivityNotFoundException) {
            throw HarnessException.Platform("no browser on this phone can open the sign-in page")
        } finally {
            returning = null
        }
    }

    /** The browser came back to the app's link [uri] (MainActivity's intent). */
    fun signInReturned(uri: String) {
        returning?.complete(uri)
    }

    /** A remote server's question on its sheet; a page the student chose to open is opened. */
    override suspend fun askElicitation(id: ULong, sheet: ElicitationSheet): ElicitationReply {
        val reply = approvals.askQuestion(id, sheet)
        val page = sheet.page
        if (page != null && reply.action == ElicitationAction.ACCEPT) main.post {
            runCatching { context.startActivity(Intent(Intent.ACTION_VIEW, Uri.parse(page.url)).addFlags(Intent.FLAG_ACTIVITY_NEW_TASK)) }
        }
        return reply
    }

    /**
     * The activity's system screens (its picker and dialogs), while it exists: MainActivity sets
     * it as it is created and clears it as it is destroyed. A plugin's tool the student tapped
     * shows them there.
     */
    @Volatile var phone: AndroidPhoneActions? = null

    /**
     * The activity's document picker for a plugin's tool the student tapped (its `files.pick`):
     * the file picked, read up to one byte past 16 MiB (the core refuses a larger one by its
     * size), or null when the student backs out. Without an activity there is no screen to pick
     * on: an error, which the core takes as nothing picked.
     */
    override suspend fun pickFile(pluginTitle: String): PickedDocument? =
        onScreen("the file picker").pickFile()

    /**
     * The activity's system dialog for [permission], for a plugin's tool the student tapped (its
     * `notify.fix`): what the system says after it. The core records it; without an activity
     * the error is UNKNOWN to the core.
     */
    override suspend fun requestPermission(permission: Permission): PermissionState =
        onScreen("the permission dialog").showPermissionDialog(permission)

    private fun onScreen(what: String): AndroidPhoneActions =
        phone ?: throw HarnessException.Platform("no screen of the app is open to show $what on")

    override fun postNotification(notification: AppNotification) = notifications.post(notification)

    override fun armWakeUp(atEpochMs: Long, exact: Boolean) = alarms.arm(atEpochMs, exact)

    override fun cancelWakeUp() = alarms.cancel()

    override fun openScreen(route: String) {
        val target = harness?.routeFor(route) ?: return
        main.post { navigator.open(target) }
    }

    override fun readSecret(key: String): String? = try {
        secrets.read(key)
    } catch (e: java.io.IOException) {
        throw HarnessException.Platform(e.message ?: "the secret \"$key\" cannot be read")
    } catch (e: java.security.GeneralSecurityException) {
        throw HarnessException.Platform("the keystore cannot open the secret \"$key\": $e")
    }

    override fun writeSecret(key: String, value: String?) = try {
        secrets.write(key, value)
    } catch (e: java.io.IOException) {
        throw HarnessException.Platform("the secret \"$key\" cannot be stored: ${e.message}")
    } catch (e: java.security.GeneralSecurityException) {
        throw HarnessException.Platform("the keystore cannot seal the secret \"$key\": $e")
    }

    override fun permissionState(permission: Permission): PermissionState = when (permission) {
        Permission.NOTIFICATIONS -> notificationsState()
        Permission.EXACT_ALARM ->
            if (WakeAlarms.canScheduleExactAlarms(context)) PermissionState.GRANTED else PermissionState.DENIED
    }

    /**
     * GRANTED when notifications would show. Before Android 13 there is no prompt, only the
     * app's switch in the system settings. From 13 on, a permission not granted is UNKNOWN until
     * the app has asked once (the shell then offers the system's dialog), DENIED after.
     */
    private fun notificationsState(): PermissionState {
        if (notifications.allowed()) return PermissionState.GRANTED
        if (Build.VERSION.SDK_INT < Build.VERSION_CODES.TIRAMISU) return PermissionState.DENIED
        val granted = ContextCompat.checkSelfPermission(context, Manifest.permission.POST_NOTIFICATIONS) ==
            PackageManager.PERMISSION_GRANTED
        // Granted but switched off in the settings: the dialog cannot help, the settings can.
        if (granted) return PermissionState.DENIED
        return if (prefs.getBoolean(KEY_ASKED_NOTIFICATIONS, false)) PermissionState.DENIED else PermissionState.UNKNOWN
    }

    /** Records that the system's notification dialog was shown once (see notificationsState). */
    fun markNotificationsAsked() {
        prefs.edit().putBoolean(KEY_ASKED_NOTIFICATIONS, true).apply()
    }

    private companion object {
        const val PREFS = "permissions"
        const val KEY_ASKED_NOTIFICATIONS = "asked-notifications"
        const val SIGN_IN_WAIT_MS = 5 * 60 * 1000L
    }
}
