package edu.pku.harness.app

import android.app.Application
import android.util.Log
import edu.pku.harness.EventSubscription
import edu.pku.harness.Harness
import edu.pku.harness.HarnessException
import edu.pku.harness.ui.AppNavigator
import edu.pku.harness.ui.ApprovalHost
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import java.io.File

/**
 * Opens the one Harness of the app, on filesDir/harness, and keeps it for the process's life:
 * the activity, the approval sheet and the alarm receivers all use this one.
 */
open class HarnessApplication : Application() {
    /** Work that outlives a screen: the receivers' runs, permission refreshes. */
    val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
    val approvals = ApprovalHost()
    val navigator = AppNavigator()
    lateinit var platform: AndroidPlatform
        private set
    lateinit var secrets: KeystoreSecrets
        private set
    lateinit var harness: Harness
        private set

    // Delivery stops when this handle is collected: held for the app's life.
    private lateinit var withdrawals: EventSubscription

    /** Posts an ask's notification while the app is not in front (MainActivity tells it when). */
    lateinit var approvalAlerts: ApprovalAlerts
        private set
    private lateinit var alertEvents: EventSubscription

    /** The key the secrets are sealed with: the Android Keystore's (tests off a phone give another). */
    protected open fun sealingKey(): SealingKey = AndroidKeystoreKey

    /** The core on [dataDir]: the app's, with no sample plugin (tests open it for development). */
    protected open fun openHarness(dataDir: String, platform: AndroidPlatform): Harness = Harness.open(dataDir, platform)

    override fun onCreate() {
        super.onCreate()
        secrets = KeystoreSecrets(this, sealingKey())
        platform = AndroidPlatform(this, approvals, navigator, secrets = secrets)
        platform.notifications.createChannel()
        harness = openHarness(File(filesDir, "harness").path, platform)
        platform.harness = harness
        // A prompt the core withdraws (its turn was stopped) leaves the screen.
        withdrawals = harness.subscribe(approvals.listener)
        val approvalNotifications = ApprovalNotifications(this).apply { createChannel() }
        val turnNotifications = TurnNotifications(this).apply { createChannel() }
        approvalAlerts = ApprovalAlerts(approvalNotifications, turnNotifications, ::turnNotice) { platform.notifications.allowed() }
        alertEvents = harness.subscribe(approvalAlerts)
        refreshPermissions()
    }

    /**
     * Called only where the process is emulated (Robolectric ends each test with it; a phone
     * never does): the core's events stop reaching the approval sheet and the notifications.
     */
    override fun onTerminate() {
        withdrawals.cancel()
        alertEvents.cancel()
        super.onTerminate()
    }

    /** The ongoing notification's words, in the student's language; none if the core cannot say. */
    private fun turnNotice(): edu.pku.harness.core.TurnNotice? = try {
        harness.turnNotice()
    } catch (e: HarnessException) {
        Log.w(TAG, "the ongoing notification's words failed: ${e.message}")
        null
    }

    /** Tells the core what the system allows now (the user may have changed it in Settings). */
    fun refreshPermissions() {
        try {
            harness.refreshPermissions()
        } catch (e: HarnessException) {
            Log.w(TAG, "refreshing the permission states failed: ${e.message}")
        }
    }

    companion object {
        const val TAG = "PkuHarness"
    }
}
