package edu.pku.harness.app

import android.Manifest
import android.content.ActivityNotFoundException
import android.content.Intent
import android.content.pm.PackageManager
import android.net.Uri
import android.os.Build
import android.provider.OpenableColumns
import android.provider.Settings
import android.util.Log
import androidx.activity.ComponentActivity
import androidx.activity.result.contract.ActivityResultContracts
import androidx.core.content.ContextCompat
import edu.pku.harness.HarnessException
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.ui.PhoneActions
import edu.pku.harness.ui.PickedDocument
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import java.io.IOException

/**
 * The system screens the UI opens from a tap (seed 000: permissions are requested only on a
 * tap, files chosen only by the user): the notification permission dialog, the exact-alarm
 * settings page, and the document picker. Built as a field of [activity], so that its
 * ActivityResult launchers are registered before the activity starts, as they must be.
 *
 * One system screen at a time. If the activity is recreated while one is shown, the answer
 * goes to the new activity's launchers and the old request never completes; its coroutine was
 * cancelled with the old screen, and onResume's refresh reports the permission anyway.
 */
class AndroidPhoneActions(private val activity: ComponentActivity) : PhoneActions {
    // The Application is attached after the activity's fields are built: read it when used.
    private val app get() = activity.application as HarnessApplication
    private val oneAtATime = Mutex()

    // Touched on the main thread only (the launchers' callbacks run there).
    private var permissionAnswer: CompletableDeferred<Boolean>? = null
    private var settingsClosed: CompletableDeferred<Unit>? = null
    private var pickedUri: CompletableDeferred<Uri?>? = null

    private val notificationDialog = activity.registerForActivityResult(ActivityResultContracts.RequestPermission()) {
        permissionAnswer?.complete(it)
    }
    private val settingsPage = activity.registerForActivityResult(ActivityResultContracts.StartActivityForResult()) {
        settingsClosed?.complete(Unit)
    }
    private val documentPicker = activity.registerForActivityResult(ActivityResultContracts.OpenDocument()) {
        pickedUri?.complete(it)
    }

    override suspend fun requestPermission(permission: Permission): PermissionState {
        val state = withContext(Dispatchers.Main) {
            oneAtATime.withLock {
                when (permission) {
                    Permission.NOTIFICATIONS -> requestNotifications()
                    Permission.EXACT_ALARM -> requestExactAlarm()
                }
            }
        }
        withContext(Dispatchers.IO) {
            try {
                app.harness.reportPermission(permission, state)
            } catch (e: HarnessException) {
                Log.w(HarnessApplication.TAG, "reporting $permission = $state failed: ${e.message}")
            }
        }
        return state
    }

    private suspend fun requestNotifications(): PermissionState {
        // Before Android 13 there is no dialog: the app's switch in the settings decides.
        if (Build.VERSION.SDK_INT < Build.VERSION_CODES.TIRAMISU) return app.platform.permissionState(Permission.NOTIFICATIONS)
        val permission = Manifest.permission.POST_NOTIFICATIONS
        if (ContextCompat.checkSelfPermission(activity, permission) == PackageManager.PERMISSION_GRANTED) {
            return app.platform.permissionState(Permission.NOTIFICATIONS)
        }
        val answer = CompletableDeferred<Boolean>()
        permissionAnswer = answer
        app.platform.markNotificationsAsked()
        val granted = try {
            notificationDialog.launch(permission)
            answer.await()
        } finally {
            permissionAnswer = null
        }
        // Not granted is DENIED, whether refused just now or for good earlier (then the system
        // answers at once without a dialog, and shouldShowRequestPermissionRationale is false):
        // in both cases the screen's next step is openPermissionSettings.
        return if (granted) PermissionState.GRANTED else PermissionState.DENIED
    }

    private suspend fun requestExactAlarm(): PermissionState {
        // Android has no dialog for exact alarms, only a settings page; below 12 they need none.
        if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.S && !WakeAlarms.canScheduleExactAlarms(activity)) {
            val closed = CompletableDeferred<Unit>()
            settingsClosed = closed
            try {
                settingsPage.launch(exactAlarmSettings())
                closed.await()
            } catch (e: ActivityNotFoundException) {
                Log.w(HarnessApplication.TAG, "no exact-alarm settings page on this phone")
            } finally {
                settingsClosed = null
            }
        }
        return app.platform.permissionState(Permission.EXACT_ALARM)
    }

    override fun openPermissionSettings(permission: Permission) {
        val intent = when (permission) {
            Permission.NOTIFICATIONS -> Intent(Settings.ACTION_APP_NOTIFICATION_SETTINGS)
                .putExtra(Settings.EXTRA_APP_PACKAGE, activity.packageName)
            Permission.EXACT_ALARM -> exactAlarmSettings()
        }
        try {
            activity.startActivity(intent)
        } catch (e: ActivityNotFoundException) {
            // Some phones lack the specific page: the app's own settings page has both.
            activity.startActivity(Intent(Settings.ACTION_APPLICATION_DETAILS_SETTINGS, packageUri()))
        }
    }

    private fun exactAlarmSettings(): Intent =
        if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.S) {
            Intent(Settings.ACTION_REQUEST_SCHEDULE_EXACT_ALARM, packageUri())
        } else {
            Intent(Settings.ACTION_APPLICATION_DETAILS_SETTINGS, packageUri())
        }

    /** The system's browser, outside the app: what is paid or signed there is the page's own. */
    override fun openBrowser(url: String) {
        val intent = Intent(Intent.ACTION_VIEW, Uri.parse(url)).addCategory(Intent.CATEGORY_BROWSABLE)
        try {
            activity.startActivity(intent)
        } catch (e: ActivityNotFoundException) {
            Log.w(HarnessApplication.TAG, "no browser on this phone opens $url")
        }
    }

    private fun packageUri(): Uri = Uri.fromParts("package", activity.packageName, null)

    /**
     * The Storage Access Framework's picker for a text, Markdown or PDF file, read as its bytes
     * for the core to read. Null when the user backs out. One over 16 MiB is refused, naming it,
     * before it is read whole.
     */
    override suspend fun pickDocument(): PickedDocument? {
        val uri = withContext(Dispatchers.Main) {
            oneAtATime.withLock {
                val picked = CompletableDeferred<Uri?>()
                pickedUri = picked
                try {
                    documentPicker.launch(DOCUMENT_TYPES)
                    picked.await()
                } finally {
                    pickedUri = null
                }
            }
        } ?: return null
        return withContext(Dispatchers.IO) { read(uri) }
    }

    private fun read(uri: Uri): PickedDocument {
        val resolver = activity.contentResolver
        var name: String? = null
        var size: Long? = null
        resolver.query(uri, arrayOf(OpenableColumns.DISPLAY_NAME, OpenableColumns.SIZE), null, null, null)?.use { row ->
            if (row.moveToFirst()) {
                val nameColumn = row.getColumnIndex(OpenableColumns.DISPLAY_NAME)
                val sizeColumn = row.getColumnIndex(OpenableColumns.SIZE)
                if (nameColumn >= 0 && !row.isNull(nameColumn)) name = row.getString(nameColumn)
                if (sizeColumn >= 0 && !row.isNull(sizeColumn)) size = row.getLong(sizeColumn)
            }
        }
        val shown = name ?: uri.lastPathSegment ?: "document"
        return try {
            val bytes = resolver.openInputStream(uri)?.use { readDocumentBytes(shown, it, size) }
                ?: throw IOException("the app that holds it did not open it")
            PickedDocument(shown, bytes)
        } catch (e: DocumentTooLargeException) {
            throw HarnessException.InvalidArgument(e.message ?: "\"$shown\" is too large")
        } catch (e: IOException) {
            throw HarnessException.Platform("\"$shown\" cannot be read: ${e.message}")
        } catch (e: SecurityException) {
            throw HarnessException.Platform("\"$shown\" cannot be read: access was withdrawn")
        }
    }

    companion object {
        /** What the picker offers; the core decides what it accepts (Action.AttachFile). */
        val DOCUMENT_TYPES = arrayOf("text/plain", "text/markdown", "text/x-markdown", "application/pdf")
    }
}
