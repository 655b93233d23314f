package edu.pku.harness.ui

import androidx.compose.foundation.Canvas
import androidx.compose.foundation.background
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.height
import androidx.compose.foundation.layout.size
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.ui.Modifier
import androidx.compose.ui.geometry.Offset
import androidx.compose.ui.geometry.Size
import androidx.compose.ui.graphics.Color
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontFamily
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.PayCodeScreen
import edu.pku.harness.core.RideCodeScreen
import kotlinx.coroutines.delay

object PayCodeTags {
    const val QR = "pay-code-qr"
    const val BARCODE = "pay-code-barcode"
    const val PAYLOAD = "pay-code-payload"
    const val BALANCE = "pay-code-balance"
    const val PROBLEM = "pay-code-problem"
}

object RideCodeTags {
    const val QR = "ride-code-qr"
    const val PAYLOAD = "ride-code-payload"
    const val DEPARTURE = "ride-code-departure"
    const val PROBLEM = "ride-code-problem"
}

/** Modules of white around a QR code (its standard's quiet zone) and around a barcode. */
private const val QR_QUIET = 4
private const val BARCODE_QUIET = 10

/**
 * The campus card's pay code: the core's payload drawn as a QR code and a barcode from the
 * modules the core computed, read again every `refreshAfterMs` while this page is shown (the
 * holder is made for this page and closed with it, so no code is read while it is not).
 */
@Composable
fun PayCodePage(holder: ScreenModel<PayCodeScreen>) {
    LaunchedEffect(holder) {
        holder.refresh()
        while (true) {
            delay(holder.model?.refreshAfterMs ?: 60_000L)
            holder.refresh()
        }
    }
    val screen = holder.model ?: return
    Page(holder.message) {
        Title(screen.title)
        Text(screen.explanation)
        screen.code?.let { code ->
            Text(code.account, fontWeight = FontWeight.Medium)
            QrCode(code.qrModules, code.qrWidth.toInt(), Modifier.size(240.dp).testTag(PayCodeTags.QR))
            Barcode(code.barcodeModules, Modifier.fillMaxWidth().height(88.dp).testTag(PayCodeTags.BARCODE))
            Text(code.payload, fontFamily = FontFamily.Monospace, modifier = Modifier.testTag(PayCodeTags.PAYLOAD))
            Text(code.balance, modifier = Modifier.testTag(PayCodeTags.BALANCE))
        }
        screen.problem?.let { Text(it, color = MaterialTheme.colorScheme.error, modifier = Modifier.testTag(PayCodeTags.PROBLEM)) }
        screen.fix?.let { CoreButton(it) { action -> holder.act(action) } }
        CoreButton(screen.recharge) { holder.act(it) }
    }
}

/**
 * The shuttle bus's ride codes: each current booking's route and departure and its payload
 * drawn as a QR code from the modules the core computed. The holder is made for this page and
 * closed with it, so no code is read while it is not shown.
 */
@Composable
fun RideCodePage(holder: ScreenModel<RideCodeScreen>) {
    LaunchedEffect(holder) { holder.refresh() }
    val screen = holder.model ?: return
    Page(holder.message) {
        Title(screen.title)
        Text(screen.explanation)
        screen.rides.forEach { ride ->
            Text(ride.route, fontWeight = FontWeight.Medium)
            Text(ride.departure, modifier = Modifier.testTag(RideCodeTags.DEPARTURE))
            QrCode(ride.qrModules, ride.qrWidth.toInt(), Modifier.size(240.dp).testTag(RideCodeTags.QR))
            Text(ride.payload, fontFamily = FontFamily.Monospace, modifier = Modifier.testTag(RideCodeTags.PAYLOAD))
        }
        screen.problem?.let { Text(it, color = MaterialTheme.colorScheme.error, modifier = Modifier.testTag(RideCodeTags.PROBLEM)) }
        screen.fix?.let { CoreButton(it) { action -> holder.act(action) } }
    }
}

/**
 * A QR code: [modules] row after row, [width] to a row, each dark one a black square (the pay
 * code's, the ride codes' and 云端's pairing code).
 */
@Composable
internal fun QrCode(modules: List<Boolean>, width: Int, modifier: Modifier) {
    Canvas(modifier.background(Color.White)) {
        val cell = size.minDimension / (width + 2 * QR_QUIET)
        for (index in modules.indices) {
            if (!modules[index]) continue
            val x = (index % width + QR_QUIET) * cell
            val y = (index / width + QR_QUIET) * cell
            drawRect(Color.Black, Offset(x, y), Size(cell, cell))
        }
    }
}

/** A barcode: [modules] left to right, each dark one a bar one module wide. */
@Composable
private fun Barcode(modules: List<Boolean>, modifier: Modifier) {
    Canvas(modifier.background(Color.White)) {
        val bar = size.width / (modules.size + 2 * BARCODE_QUIET)
        for (index in modules.indices) {
            if (modules[index]) drawRect(Color.Black, Offset((index + BARCODE_QUIET) * bar, 0f), Size(bar, size.height))
        }
    }
}
