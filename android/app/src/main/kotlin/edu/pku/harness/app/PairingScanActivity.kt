package edu.pku.harness.app

import android.Manifest
import android.annotation.SuppressLint
import android.content.Context
import android.content.Intent
import android.content.pm.PackageManager
import android.graphics.ImageFormat
import android.graphics.SurfaceTexture
import android.hardware.camera2.CameraCaptureSession
import android.hardware.camera2.CameraCharacteristics
import android.hardware.camera2.CameraDevice
import android.hardware.camera2.CameraManager
import android.hardware.camera2.CaptureRequest
import android.media.Image
import android.media.ImageReader
import android.os.Bundle
import android.os.Handler
import android.os.HandlerThread
import android.util.Log
import android.util.Size
import android.view.Surface
import android.view.TextureView
import android.view.WindowManager
import androidx.activity.ComponentActivity
import androidx.activity.compose.setContent
import androidx.activity.result.contract.ActivityResultContracts
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.aspectRatio
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.padding
import androidx.compose.material3.FilledTonalButton
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.Surface
import androidx.compose.material3.Text
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.setValue
import androidx.compose.ui.Modifier
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.unit.dp
import androidx.compose.ui.viewinterop.AndroidView
import edu.pku.harness.HarnessException
import edu.pku.harness.core.PairingScan
import edu.pku.harness.core.ShellEffect
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.util.concurrent.atomic.AtomicBoolean

/** The largest camera frame the scanner asks for: a phone's QR at arm's length reads in it. */
private const val MAX_FRAME_SIDE = 1280

/**
 * 云端's 扫码加入: the back camera through camera2 (in the framework: no artifact), asking for
 * the CAMERA permission here, the first time the student taps it. Each frame's luminance plane
 * (the Y plane of YUV_420_888, with its row stride) is decoded here by ZXing ([qrTextsInFrame]),
 * one frame at a time, and the texts of its QR codes go to the core, which decides: no code
 * (keep scanning), joined (close), or refused (its words under the camera, and keep
 * scanning). The window is kept out of screenshots: the code it films carries
 * the account key. The words are the core's (`ShellEffect.ScanPairingQr`).
 */
class PairingScanActivity : ComponentActivity() {
    private val app get() = application as HarnessApplication
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Main)
    private val busy = AtomicBoolean(false)

    private var refused by mutableStateOf<String?>(null)
    private var denied by mutableStateOf(false)

    // The camera's parts, touched on the main thread; the frames arrive on [thread].
    private var texture: TextureView? = null
    private var thread: HandlerThread? = null
    private var camera: CameraDevice? = null
    private var session: CameraCaptureSession? = null
    private var reader: ImageReader? = null

    private val askCamera = registerForActivityResult(ActivityResultContracts.RequestPermission()) { granted ->
        denied = !granted
        if (granted) open()
    }

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        window.addFlags(WindowManager.LayoutParams.FLAG_SECURE)
        val words = Words.from(intent)
        setContent {
            MaterialTheme {
                Surface(Modifier.fillMaxSize()) {
                    Column(Modifier.fillMaxSize().padding(16.dp)) {
                        Text(words.title, style = MaterialTheme.typography.titleLarge)
                        Text(words.hint, Modifier.padding(vertical = 8.dp))
                        if (denied) {
                            Text(words.cameraDenied, color = MaterialTheme.colorScheme.error, modifier = Modifier.testTag(DENIED_TAG))
                        } else {
                            AndroidView(
                                factory = { context -> preview(context) },
                                modifier = Modifier.fillMaxWidth().aspectRatio(3f / 4f),
                            )
                        }
                        refused?.let { Text(it, color = MaterialTheme.colorScheme.error, modifier = Modifier.padding(vertical = 8.dp)) }
                        FilledTonalButton(onClick = { finish() }, modifier = Modifier.padding(top = 8.dp)) { Text(words.cancel) }
                    }
                }
            }
        }
        if (checkSelfPermission(Manifest.permission.CAMERA) != PackageManager.PERMISSION_GRANTED) {
            askCamera.launch(Manifest.permission.CAMERA)
        }
    }

    override fun onResume() {
        super.onResume()
        open()
    }

    override fun onPause() {
        close()
        super.onPause()
    }

    override fun onDestroy() {
        scope.cancel()
        super.onDestroy()
    }

    private fun preview(context: Context): TextureView = TextureView(context).also { view ->
        texture = view
        view.surfaceTextureListener = object : TextureView.SurfaceTextureListener {
            override fun onSurfaceTextureAvailable(surface: SurfaceTexture, width: Int, height: Int) = open()
            override fun onSurfaceTextureSizeChanged(surface: SurfaceTexture, width: Int, height: Int) {}
            override fun onSurfaceTextureDestroyed(surface: SurfaceTexture): Boolean {
                close()
                return true
            }
            override fun onSurfaceTextureUpdated(surface: SurfaceTexture) {}
        }
    }

    /** Opens the back camera once the permission, a resumed activity and the preview are there. */
    @SuppressLint("MissingPermission")
    private fun open() {
        if (camera != null || thread != null) return
        if (checkSelfPermission(Manifest.permission.CAMERA) != PackageManager.PERMISSION_GRANTED) return
        if (!lifecycle.currentState.isAtLeast(androidx.lifecycle.Lifecycle.State.RESUMED)) return
        val surfaceTexture = texture?.surfaceTexture ?: return
        val manager = getSystemService(CameraManager::class.java) ?: return
        val id = manager.cameraIdList.firstOrNull {
            manager.getCameraCharacteristics(it).get(CameraCharacteristics.LENS_FACING) == CameraCharacteristics.LENS_FACING_BACK
        } ?: manager.cameraIdList.firstOrNull() ?: return
        val sizes = manager.getCameraCharacteristics(id)
            .get(CameraCharacteristics.SCALER_STREAM_CONFIGURATION_MAP)
            ?.getOutputSizes(ImageFormat.YUV_420_888).orEmpty()
        val size = sizes.filter { maxOf(it.width, it.height) <= MAX_FRAME_SIDE }.maxByOrNull { it.width * it.height }
            ?: Size(640, 480)
        val frames = HandlerThread("pairing-scan").also { it.start() }
        thread = frames
        val handler = Handler(frames.looper)
        val images = ImageReader.newInstance(size.width, size.height, ImageFormat.YUV_420_888, 2)
        reader = images
        images.setOnImageAvailableListener({ r -> r.acquireLatestImage()?.let { scan(it) } }, handler)
        surfaceTexture.setDefaultBufferSize(size.width, size.height)
        val shown = Surface(surfaceTexture)
        try {
            manager.openCamera(id, object : CameraDevice.StateCallback() {
                override fun onOpened(device: CameraDevice) {
                    camera = device
                    @Suppress("DEPRECATION") // the List<Surface> form is the one API 26 has
                    device.createCaptureSession(listOf(shown, images.surface), object : CameraCaptureSession.StateCallback() {
                        override fun onConfigured(s: CameraCaptureSession) {
                            session = s
                            val request = device.createCaptureRequest(CameraDevice.TEMPLATE_PREVIEW).apply {
                                addTarget(shown)
                                addTarget(images.surface)
                                set(CaptureRequest.CONTROL_AF_MODE, CaptureRequest.CONTROL_AF_MODE_CONTINUOUS_PICTURE)
                            }.build()
                            s.setRepeatingRequest(request, null, handler)
                        }

                        override fun onConfigureFailed(s: CameraCaptureSession) {
                            Log.w(HarnessApplication.TAG, "the scanner's camera session could not be configured")
                        }
                    }, handler)
                }

                override fun onDisconnected(device: CameraDevice) = device.close()

                override fun onError(device: CameraDevice, error: Int) {
                    Log.w(HarnessApplication.TAG, "the scanner's camera failed: $error")
                    device.close()
                }
            }, handler)
        } catch (e: Exception) {
            Log.w(HarnessApplication.TAG, "the scanner's camera did not open: ${e.message}")
            close()
        }
    }

    private fun close() {
        session?.close()
        session = null
        camera?.close()
        camera = null
        reader?.close()
        reader = null
        thread?.quitSafely()
        thread = null
    }

    /** Reads one frame's QR codes and hands their texts to the core, unless the last frame is still being read. */
    private fun scan(image: Image) {
        image.use {
            if (!busy.compareAndSet(false, true)) return
            val plane = it.planes[0]
            val buffer = plane.buffer
            val luma = ByteArray(buffer.remaining()).also { bytes -> buffer.get(bytes) }
            val (width, height, stride) = Triple(it.width, it.height, plane.rowStride)
            scope.launch {
                try {
                    val texts = withContext(Dispatchers.Default) { qrTextsInFrame(luma, width, height, stride) }
                    val scanned = if (texts.isEmpty()) PairingScan.Nothing else app.harness.cloudScanned(texts)
                    when (scanned) {
                        is PairingScan.Nothing -> {}
                        is PairingScan.Joined -> {
                            setResult(RESULT_OK)
                            finish()
                        }
                        is PairingScan.Refused -> refused = scanned.words
                    }
                } catch (e: HarnessException) {
                    refused = (e.message ?: e.toString()).removePrefix("reason=")
                } finally {
                    busy.set(false)
                }
            }
        }
    }

    /** The core's words for the scanner, carried in the intent. */
    class Words(val title: String, val hint: String, val cameraDenied: String, val cancel: String) {
        fun intent(context: Context): Intent = Intent(context, PairingScanActivity::class.java)
            .putExtra(TITLE, title)
            .putExtra(HINT, hint)
            .putExtra(DENIED, cameraDenied)
            .putExtra(CANCEL, cancel)

        companion object {
            private const val TITLE = "title"
            private const val HINT = "hint"
            private const val DENIED = "cameraDenied"
            private const val CANCEL = "cancel"

            fun of(effect: ShellEffect.ScanPairingQr) = Words(effect.title, effect.hint, effect.cameraDenied, effect.cancel)

            fun from(intent: Intent) = Words(
                intent.getStringExtra(TITLE).orEmpty(),
                intent.getStringExtra(HINT).orEmpty(),
                intent.getStringExtra(DENIED).orEmpty(),
                intent.getStringExtra(CANCEL).orEmpty(),
            )
        }
    }

    companion object {
        /** The test tag of the words shown when the camera is refused. */
        const val DENIED_TAG = "pairing-scan-denied"
    }
}
