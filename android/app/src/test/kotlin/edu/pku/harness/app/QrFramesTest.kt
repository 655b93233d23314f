package edu.pku.harness.app

import com.google.zxing.BarcodeFormat
import com.google.zxing.qrcode.QRCodeWriter
import org.junit.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith

/**
 * The scanner's decoding of a camera frame's luminance plane on the host JVM: frames laid out
 * as camera2 hands them (rows [STRIDE_PAD] bytes longer than the picture, the last row ending
 * at its width), the codes drawn by ZXing's own encoder.
 */
class QrFramesTest {
    private val pairing = "PKUHARNESS-PAIR-1 eyJzZXJ2ZXIiOiJodHRwczovL2Nsb3VkLmV4YW1wbGUifQ"

    /** A grey frame of [width]×[height] with each code's modules drawn at its left offset. */
    private fun frame(width: Int, height: Int, vararg codes: Pair<String, Int>): Pair<ByteArray, Int> {
        val stride = width + STRIDE_PAD
        val plane = ByteArray(stride * (height - 1) + width) { 0x80.toByte() }
        for (y in 0 until height) for (x in 0 until width) plane[y * stride + x] = 0xF0.toByte()
        for ((text, left) in codes) {
            val side = height - 40
            val matrix = QRCodeWriter().encode(text, BarcodeFormat.QR_CODE, side, side)
            for (y in 0 until side) for (x in 0 until side) {
                if (matrix[x, y]) plane[(20 + y) * stride + left + x] = 0x10
            }
        }
        return plane to stride
    }

    @Test fun a_frame_with_one_code_gives_its_text_whole() {
        val (plane, stride) = frame(400, 320, pairing to 40)
        assertEquals(listOf(pairing), qrTextsInFrame(plane, 400, 320, stride))
    }

    @Test fun a_frame_with_two_codes_gives_both_and_the_core_picks() {
        val link = "https://example.com/harness-cloud:pair"
        val (plane, stride) = frame(640, 300, link to 10, pairing to 330)
        assertEquals(setOf(link, pairing), qrTextsInFrame(plane, 640, 300, stride).toSet())
    }

    @Test fun a_frame_without_a_code_gives_none() {
        val (plane, stride) = frame(400, 320)
        assertEquals(emptyList(), qrTextsInFrame(plane, 400, 320, stride))
    }

    @Test fun rows_shorter_than_the_picture_are_refused_naming_the_frame() {
        val error = assertFailsWith<IllegalArgumentException> { qrTextsInFrame(ByteArray(10), 400, 320, 100) }
        assertEquals("a camera frame of 400×320 with rows 100 bytes apart", error.message)
    }

    private companion object {
        const val STRIDE_PAD = 24
    }
}
