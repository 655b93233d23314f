package edu.pku.harness.app

import com.google.zxing.BinaryBitmap
import com.google.zxing.DecodeHintType
import com.google.zxing.NotFoundException
import com.google.zxing.PlanarYUVLuminanceSource
import com.google.zxing.common.HybridBinarizer
import com.google.zxing.multi.qrcode.QRCodeMultiReader

/**
 * The texts of the QR codes in one camera frame's luminance plane (the Y plane of
 * YUV_420_888: [height] rows of [width] bytes, each [rowStride] bytes after the last; the
 * last row may end at its width), decoded by ZXing; none when the frame shows none. What a
 * text means, and whether it joins an account, is the core's (`Harness.cloudScanned`): only
 * the texts leave the phone's camera code, never the picture.
 */
fun qrTextsInFrame(luma: ByteArray, width: Int, height: Int, rowStride: Int): List<String> {
    require(width > 0 && height > 0 && rowStride >= width) {
        "a camera frame of ${width}×$height with rows $rowStride bytes apart"
    }
    val whole = rowStride * height
    // ZXing reads the plane as rowStride × height; a last row that ends at its width is padded.
    val plane = if (luma.size >= whole) luma else luma.copyOf(whole)
    val source = PlanarYUVLuminanceSource(plane, rowStride, height, 0, 0, width, height, false)
    val hints = mapOf(DecodeHintType.CHARACTER_SET to "UTF-8")
    return try {
        QRCodeMultiReader().decodeMultiple(BinaryBitmap(HybridBinarizer(source)), hints).map { it.text }
    } catch (e: NotFoundException) {
        emptyList()
    }
}
