package edu.pku.harness.app

import android.Manifest
import android.content.Context
import android.content.pm.PackageManager
import android.view.WindowManager
import androidx.test.core.app.ApplicationProvider
import androidx.test.ext.junit.runners.AndroidJUnit4
import org.junit.After
import org.junit.Test
import org.junit.runner.RunWith
import org.robolectric.Robolectric
import org.robolectric.Shadows.shadowOf
import kotlin.test.assertEquals
import kotlin.test.assertNotEquals
import kotlin.test.assertNull
import kotlin.test.assertTrue

/**
 * 云端's 扫码加入 scanner: the camera is asked for when the scanner opens without it, and not
 * again once granted; its window is kept out of screenshots either way. (No camera frames here:
 * the core's reading of frames is tested in cloud/tests/screen.rs.)
 */
@RunWith(AndroidJUnit4::class)
class PairingScanActivityTest {
    private val words = PairingScanActivity.Words("扫码加入", "把相机对准配对二维码。", "没有相机权限就不能扫码", "取消")
    private val scanners = mutableListOf<org.robolectric.android.controller.ActivityController<PairingScanActivity>>()

    /** Each scanner goes with its test, its camera's attempt with it. */
    @After fun closeScanners() = scanners.forEach { it.pause().stop().destroy() }

    @Test fun the_scanner_asks_for_the_camera_only_when_it_is_not_granted_and_keeps_out_of_screenshots() {
        val context = ApplicationProvider.getApplicationContext<Context>()
        shadowOf(context as android.app.Application).denyPermissions(Manifest.permission.CAMERA)
        val askingScanner = Robolectric.buildActivity(PairingScanActivity::class.java, words.intent(context)).setup()
        scanners += askingScanner
        val asking = askingScanner.get()
        val request = shadowOf(asking).lastRequestedPermission
        assertEquals(listOf(Manifest.permission.CAMERA), request?.requestedPermissions?.toList())
        assertNotEquals(0, asking.window.attributes.flags and WindowManager.LayoutParams.FLAG_SECURE)
        // Refused: the scanner stays open (its words say to join with the recovery code).
        @Suppress("DEPRECATION")
        asking.onRequestPermissionsResult(request!!.requestCode, request.requestedPermissions, intArrayOf(PackageManager.PERMISSION_DENIED))
        assertTrue(!asking.isFinishing)

        shadowOf(context).grantPermissions(Manifest.permission.CAMERA)
        val grantedScanner = Robolectric.buildActivity(PairingScanActivity::class.java, words.intent(context)).setup()
        scanners += grantedScanner
        val granted = grantedScanner.get()
        assertNull(shadowOf(granted).lastRequestedPermission)
        assertNotEquals(0, granted.window.attributes.flags and WindowManager.LayoutParams.FLAG_SECURE)
    }
}
