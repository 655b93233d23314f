package edu.pku.harness.ui

import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.size
import androidx.compose.material3.FilledTonalButton
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.OutlinedTextField
import androidx.compose.material3.Switch
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.DisposableEffect
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontFamily
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.Action
import edu.pku.harness.core.CloudDeviceRow
import edu.pku.harness.core.CloudPairing
import edu.pku.harness.core.CloudPendingRow
import edu.pku.harness.core.CloudScreen
import edu.pku.harness.core.LabelValue
import kotlinx.coroutines.delay

/** Test tags of 云端. */
object CloudTags {
    const val STATE = "cloud-state"
    const val ADDRESS = "cloud-address"
    const val SETUP = "cloud-setup"
    const val CODE = "cloud-code"
    const val JOIN = "cloud-join"
    const val RECOVERY_CODE = "cloud-recovery-code"
    const val BACKUP_SWITCH = "cloud-backup-switch"
    const val BACKUP_NOW = "cloud-backup-now"
    const val RESTORE = "cloud-restore"
    const val DEVICE = "cloud-device"
    const val REMOVE_DEVICE = "cloud-remove-device"
    const val HISTORIES_SWITCH = "cloud-histories-switch"
    const val PENDING = "cloud-pending"
    const val PENDING_APPLY = "cloud-pending-apply"
    const val PENDING_DISMISS = "cloud-pending-dismiss"
    const val SHOW_PAIRING = "cloud-show-pairing"
    const val PAIRING = "cloud-pairing"
    const val PAIRING_QR = "cloud-pairing-qr"
    const val HIDE_PAIRING = "cloud-hide-pairing"
    const val SCAN_JOIN = "cloud-scan-join"
}

/**
 * 云端: the core's [CloudScreen] drawn as it is — the server address (typed while not set up),
 * the account's state, devices (this one marked, 移除 on the others) and space, the recovery code the one time the core hands it
 * out, joining by a recovery code, the backup switch with its disclosure and last time, 连同对话内容
 * with its line, restore and what it left for the student, and the pending values' rows. Set
 * up, it offers the pairing QR another phone scans (the window kept out of screenshots while it
 * is shown, and the screen read again when it expires); not set up, 扫码加入 opens the scanner.
 */
@Composable
fun CloudPage(holder: ScreenModel<CloudScreen>) {
    val screen = holder.model ?: return
    Page(holder.message) {
        Title(screen.title)
        Text(screen.stateWords, Modifier.testTag(CloudTags.STATE))
        var address by remember(screen.address) { mutableStateOf(screen.address) }
        OutlinedTextField(
            address,
            { address = it },
            label = { Text(screen.addressLabel) },
            singleLine = true,
            readOnly = screen.setupLabel == null,
            modifier = Modifier.fillMaxWidth().testTag(CloudTags.ADDRESS),
        )
        screen.showPairing?.let { CoreButton(it, Modifier.testTag(CloudTags.SHOW_PAIRING)) { a -> holder.act(a) } }
        screen.pairing?.let { PairingCard(it) { a -> holder.act(a) } }
        val secret = screen.pairing != null
        DisposableEffect(secret) {
            holder.keepOffScreenshots(secret)
            onDispose { if (secret) holder.keepOffScreenshots(false) }
        }
        LaunchedEffect(screen.pairing?.refreshAfterMs) {
            val after = screen.pairing?.refreshAfterMs ?: return@LaunchedEffect
            delay(after)
            holder.refresh()
        }
        screen.scanJoin?.let { CoreButton(it, Modifier.testTag(CloudTags.SCAN_JOIN)) { a -> holder.act(a) } }
        screen.devices?.let { CloudRow(it) }
        for (row in screen.deviceRows) DeviceCard(row) { a -> holder.act(a) }
        screen.leaveNote?.let { Small(it) }
        screen.space?.let { CloudRow(it) }
        screen.recoveryCode?.let { code ->
            Card(Modifier.testTag(CloudTags.RECOVERY_CODE)) {
                Text(code, fontFamily = FontFamily.Monospace, fontWeight = FontWeight.Medium)
                Small(screen.recoveryNote)
            }
        }
        screen.setupLabel?.let { label ->
            FilledTonalButton(
                onClick = { holder.act(Action.CloudSetup(address)) },
                modifier = Modifier.testTag(CloudTags.SETUP),
            ) { Text(label) }
        }
        val codeLabel = screen.codeLabel
        val joinLabel = screen.joinLabel
        if (codeLabel != null && joinLabel != null) {
            var code by remember { mutableStateOf("") }
            OutlinedTextField(
                code,
                { code = it },
                label = { Text(codeLabel) },
                singleLine = true,
                modifier = Modifier.fillMaxWidth().testTag(CloudTags.CODE),
            )
            FilledTonalButton(
                onClick = { holder.act(Action.CloudJoin(address, code)) },
                modifier = Modifier.testTag(CloudTags.JOIN),
            ) { Text(joinLabel) }
        }
        Card {
            Row(Modifier.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
                Text(screen.backupLabel, modifier = Modifier.weight(1f))
                Switch(
                    checked = screen.backupOn,
                    onCheckedChange = { holder.act(Action.SetCloudBackup(!screen.backupOn)) },
                    modifier = Modifier.testTag(CloudTags.BACKUP_SWITCH),
                )
            }
            for (line in screen.disclosure) Small("• $line")
            Row(Modifier.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
                Text(screen.historiesLabel, modifier = Modifier.weight(1f))
                Switch(
                    checked = screen.historiesOn,
                    onCheckedChange = { holder.act(Action.SetCloudBackupHistories(!screen.historiesOn)) },
                    modifier = Modifier.testTag(CloudTags.HISTORIES_SWITCH),
                )
            }
            Small("• ${screen.historiesDisclosure}")
            CloudRow(screen.lastBackup)
            screen.backupNow?.let { CoreButton(it, Modifier.testTag(CloudTags.BACKUP_NOW)) { a -> holder.act(a) } }
        }
        screen.restore?.let { CoreButton(it, Modifier.testTag(CloudTags.RESTORE)) { a -> holder.act(a) } }
        for (line in screen.restored) Text(line, style = MaterialTheme.typography.bodyMedium)
        screen.pendingTitle?.let { Text(it, fontWeight = FontWeight.Medium) }
        for (row in screen.pending) PendingCard(row) { a -> holder.act(a) }
    }
}

/** The pairing QR the core drew, when it stops working, what it does, 隐藏. */
@Composable
private fun PairingCard(pairing: CloudPairing, act: (Action) -> Unit) {
    Card(Modifier.testTag(CloudTags.PAIRING)) {
        QrCode(pairing.qrModules, pairing.qrWidth.toInt(), Modifier.size(240.dp).testTag(CloudTags.PAIRING_QR))
        CloudRow(pairing.expires)
        Small(pairing.note)
        CoreButton(pairing.hide, Modifier.testTag(CloudTags.HIDE_PAIRING), act)
    }
}

/** A value a restore left for the student: what it is, 应用 and 不用了. */
@Composable
private fun PendingCard(row: CloudPendingRow, act: (Action) -> Unit) {
    Card(Modifier.testTag(CloudTags.PENDING)) {
        Text(row.words)
        Row {
            CoreButton(row.apply, Modifier.testTag(CloudTags.PENDING_APPLY), act)
            CoreButton(row.dismiss, Modifier.testTag(CloudTags.PENDING_DISMISS), act)
        }
    }
}

@Composable
private fun CloudRow(row: LabelValue) {
    Row(Modifier.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
        Text(row.label, modifier = Modifier.weight(1f))
        Text(row.value, fontWeight = FontWeight.Medium)
    }
}

/** One device of the account: its kind, when it joined, 本机 on this one, 移除 on the others. */
@Composable
private fun DeviceCard(row: CloudDeviceRow, act: (Action) -> Unit) {
    Card(Modifier.testTag(CloudTags.DEVICE)) {
        Row(Modifier.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
            Text(row.name, fontWeight = FontWeight.Medium, modifier = Modifier.weight(1f))
            row.thisLabel?.let { Text(it, style = MaterialTheme.typography.labelLarge) }
        }
        CloudRow(row.joined)
        row.remove?.let { CoreButton(it, Modifier.testTag(CloudTags.REMOVE_DEVICE), act) }
    }
}
