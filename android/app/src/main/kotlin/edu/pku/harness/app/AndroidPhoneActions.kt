package edu.pku.harness.app

import android.Manifest
import android.content.ActivityNotFoundException
import android.content.Intent
import android.content.pm.PackageManager
import android.graphics.BitmapFactory
import android.net.Uri
import android.os.Build
import android.provider.OpenableColumns
import android.provider.Settings
import android.util.Log
import android.view.WindowManager
import androidx.activity.ComponentActivity
import androidx.activity.result.contract.ActivityResultContracts
import androidx.compose.ui.graphics.ImageBitmap
import androidx.compose.ui.graphics.asImageBitmap
import androidx.core.content.ContextCompat
import edu.pku.harness.HarnessException
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.ShellEffect
import edu.pku.harness.ui.PhoneActions
import edu.pku.harness.ui.PickedDocument
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import java.io.IOException
import java.io.InputStream

/**
 * The most pixels a side a tool's picture is decoded at: more than the chat draws it at, far
 * less than a header may claim.
 */
private const val MAX_PICTURE_SIDE = 2048

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
    private var scannerClosed: CompletableDeferred<Unit>? = null
    private val scanner = activity.registerForActivityResult(ActivityResultContracts.StartActivityForResult()) {
        scannerClosed?.complete(Unit)
    }

    /** 云端's 扫码加入: [PairingScanActivity], until it closes (joined or cancelled). */
    override suspend fun scanPairingQr(words: ShellEffect.ScanPairingQr) = withContext(Dispatchers.Main) {
        oneAtATime.withLock {
            val closed = CompletableDeferred<Unit>()
            scannerClosed = closed
            try {
                scanner.launch(PairingScanActivity.Words.of(words).intent(activity))
                closed.await()
            } finally {
                scannerClosed = null
            }
        }
    }

    /** FLAG_SECURE on the app's window while 云端 shows the pairing QR. */
    override fun keepOffScreenshots(secret: Boolean) {
        val flag = WindowManager.LayoutParams.FLAG_SECURE
        if (secret) activity.window.addFlags(flag) else activity.window.clearFlags(flag)
    }

    override suspend fun requestPermission(permission: Permission): PermissionState {
        val state = showPermissionDialog(permission)
        withContext(Dispatchers.IO) {
            try {
                app.harness.reportPermission(permission, state)
            } catch (e: HarnessException) {
                Log.w(HarnessApplication.TAG, "reporting $permission = $state failed: ${e.message}")
            }
        }
        return state
    }

    /**
     * The system's dialog for [permission] (for exact alarms, its settings page) and what the
     * system says after it; reported to the core by the caller: [requestPermission] for the
     * app's own screens, the core itself for a plugin's tool (AndroidPlatform).
     */
    suspend fun showPermissionDialog(permission: Permission): PermissionState = withContext(Dispatchers.Main) {
        oneAtATime.withLock {
            when (permission) {
                Permission.NOTIFICATIONS -> requestNotifications()
                Permission.EXACT_ALARM -> requestExactAlarm()
            }
        }
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

    /**
     * Android's decoder for a tool's picture, bounded: the header is read first
     * (`inJustDecodeBounds`), and a picture over [MAX_PICTURE_SIDE] pixels a side is decoded at a
     * power-of-two fraction of its size (`inSampleSize`), so no header can make the phone
     * allocate what it claims (the core already refuses a picture over 4096 pixels a side; this
     * holds whatever reaches the shell). Null for bytes it cannot read.
     */
    override fun decodeImage(bytes: ByteArray): ImageBitmap? {
        val bounds = BitmapFactory.Options().apply { inJustDecodeBounds = true }
        BitmapFactory.decodeByteArray(bytes, 0, bytes.size, bounds)
        if (bounds.outWidth <= 0 || bounds.outHeight <= 0) return null
        val longer = maxOf(bounds.outWidth, bounds.outHeight)
        var sample = 1
        while (longer / sample > MAX_PICTURE_SIDE) sample *= 2
        val options = BitmapFactory.Options().apply { inSampleSize = sample }
        return BitmapFactory.decodeByteArray(bytes, 0, bytes.size, options)?.asImageBitmap()
    }

    private fun packageUri(): Uri = Uri.fromParts("package", activity.packageName, null)

    /**
     * The Storage Access Framework's picker for a text, Markdown or PDF file, read as its bytes
     * for the core to read. Null when the user backs out. One over 16 MiB is refused, naming it,
     * before it is read whole.
     */
    override suspend fun pickDocument(): PickedDocument? {
        val uri = showPicker() ?: return null
        return withContext(Dispatchers.IO) {
            val (name, size) = describe(uri)
            val bytes = reading(uri, name) { input ->
                try {
                    readDocumentBytes(name, input, size)
                } catch (e: DocumentTooLargeException) {
                    throw HarnessException.InvalidArgument(e.message ?: "\"$name\" is too large")
                }
            }
            PickedDocument(name, bytes)
        }
    }

    /**
     * The same picker for a plugin's tool the student tapped (its `files.pick`, through
     * AndroidPlatform.pickFile). Null when the student backs out. At most 16 MiB + 1 bytes are
     * read: a file over the bound reaches the core just past it, and the core refuses it by its
     * size in the student's language.
     */
    suspend fun pickFile(): edu.pku.harness.PickedDocument? {
        val uri = showPicker() ?: return null
        return withContext(Dispatchers.IO) {
            val (name, size) = describe(uri)
            edu.pku.harness.PickedDocument(name, reading(uri, name) { readBoundedBytes(it, sizeHint = size) })
        }
    }

    /** The system's document picker; the file the user picked, or null when they backed out. */
    private suspend fun showPicker(): Uri? = withContext(Dispatchers.Main) {
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
    }

    /** The picked file's name as its provider shows it, and its size when the provider says. */
    private fun describe(uri: Uri): Pair<String, Long?> {
        var name: String? = null
        var size: Long? = null
        activity.contentResolver.query(uri, arrayOf(OpenableColumns.DISPLAY_NAME, OpenableColumns.SIZE), null, null, null)?.use { row ->
            if (row.moveToFirst()) {
                val nameColumn = row.getColumnIndex(OpenableColumns.DISPLAY_NAME)
                val sizeColumn = row.getColumnIndex(OpenableColumns.SIZE)
                if (nameColumn >= 0 && !row.isNull(nameColumn)) name = row.getString(nameColumn)
                if (sizeColumn >= 0 && !row.isNull(sizeColumn)) size = row.getLong(sizeColumn)
            }
        }
        return (name ?: uri.lastPathSegment ?: "document") to size
    }

    /** [read] of the picked file [uri], shown as [name]; a failure to read it says so, naming it. */
    private fun reading(uri: Uri, name: String, read: (InputStream) -> ByteArray): ByteArray = try {
        activity.contentResolver.openInputStream(uri)?.use(read)
            ?: throw IOException("the app that holds it did not open it")
    } catch (e: IOException) {
        throw HarnessException.Platform("\"$name\" cannot be read: ${e.message}")
    } catch (e: SecurityException) {
        throw HarnessException.Platform("\"$name\" cannot be read: access was withdrawn")
    }

    companion object {
        /** What the picker offers; the core decides what it accepts (Action.AttachFile). */
        val DOCUMENT_TYPES = arrayOf("text/plain", "text/markdown", "text/x-markdown", "application/pdf")
    }
}
