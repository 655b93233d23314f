import Harness
import SwiftUI

/// 云端: the core's CloudScreen drawn as it is — the server address (typed while not set up), the
/// account's state, devices (this one marked, 移除 on the others) and space, the recovery code the one time the core hands it out,
/// joining by a recovery code, the backup switch with its disclosure and last time, 连同对话内容
/// with its line, restore and what it left for the student, and the pending values' rows. Set up,
/// it offers the pairing QR another phone scans (read again when it expires); not set up,
/// 扫码加入 opens the scanner (`PairingScannerView`).
struct CloudView: View {
    @State private var store: ScreenStore<CloudScreen>
    private let shell: Shell
    @State private var address: String?
    @State private var code = ""

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try await $0.cloudScreen() })
        self.shell = shell
    }

    var body: some View {
        Loaded(store: store) { screen in
            Form {
                Section {
                    Text(screen.stateWords)
                        .accessibilityIdentifier("cloud.state")
                    TextField(screen.addressLabel, text: Binding(get: { address ?? screen.address }, set: { address = $0 }))
                        .textInputAutocapitalization(.never)
                        .disabled(screen.setupLabel == nil)
                        .accessibilityIdentifier("cloud.address")
                    if let devices = screen.devices {
                        LabeledContent(devices.label, value: devices.value)
                    }
                    if let space = screen.space {
                        LabeledContent(space.label, value: space.value)
                    }
                }
                if let show = screen.showPairing {
                    Section {
                        ActionButton(button: show) { store.act($0) }
                            .accessibilityIdentifier("cloud.showPairing")
                    }
                }
                if let pairing = screen.pairing {
                    Section {
                        ModuleGrid(modules: pairing.qrModules, width: Int(pairing.qrWidth), quiet: 4)
                            .aspectRatio(1, contentMode: .fit)
                            .frame(maxWidth: 280)
                            .accessibilityIdentifier("cloud.pairingQr")
                        LabeledContent(pairing.expires.label, value: pairing.expires.value)
                        ActionButton(button: pairing.hide) { store.act($0) }
                            .accessibilityIdentifier("cloud.hidePairing")
                    } footer: {
                        Text(pairing.note)
                    }
                    // The QR is gone from the model once it expires: read it again then.
                    .task(id: pairing.refreshAfterMs) {
                        try? await Task.sleep(nanoseconds: UInt64(max(pairing.refreshAfterMs, 0)) * 1_000_000)
                        store.reload()
                    }
                }
                if let scan = screen.scanJoin {
                    Section {
                        ActionButton(button: scan) { store.act($0) }
                            .accessibilityIdentifier("cloud.scanJoin")
                    }
                }
                if !screen.deviceRows.isEmpty {
                    Section {
                        // Two devices may join in the same minute: rows are told apart by place.
                        ForEach(Array(screen.deviceRows.enumerated()), id: \.offset) { _, row in
                            DeviceRowView(row: row) { store.act($0) }
                        }
                    } footer: {
                        if let leave = screen.leaveNote { Text(leave) }
                    }
                }
                if let recovery = screen.recoveryCode {
                    Section {
                        Text(recovery).font(.body.monospaced()).textSelection(.enabled)
                            .accessibilityIdentifier("cloud.recoveryCode")
                    } footer: {
                        Text(screen.recoveryNote)
                    }
                }
                if let setup = screen.setupLabel {
                    Section {
                        SwiftUI.Button(setup) { store.act(.cloudSetup(server: address ?? screen.address)) }
                            .accessibilityIdentifier("cloud.setup")
                    }
                }
                if let codeLabel = screen.codeLabel, let join = screen.joinLabel {
                    Section {
                        TextField(codeLabel, text: $code)
                            .textInputAutocapitalization(.characters)
                            .accessibilityIdentifier("cloud.code")
                        SwiftUI.Button(join) { store.act(.cloudJoin(server: address ?? screen.address, code: code)) }
                            .accessibilityIdentifier("cloud.join")
                    }
                }
                Section {
                    Toggle(screen.backupLabel, isOn: Binding(get: { screen.backupOn }, set: { store.act(.setCloudBackup(allowed: $0)) }))
                        .accessibilityIdentifier("cloud.backup")
                    ForEach(screen.disclosure, id: \.self) { Text("• \($0)").font(.footnote) }
                    Toggle(screen.historiesLabel, isOn: Binding(get: { screen.historiesOn }, set: { store.act(.setCloudBackupHistories(included: $0)) }))
                        .accessibilityIdentifier("cloud.histories")
                    Text("• \(screen.historiesDisclosure)").font(.footnote)
                    LabeledContent(screen.lastBackup.label, value: screen.lastBackup.value)
                    if let now = screen.backupNow {
                        ActionButton(button: now) { store.act($0) }
                    }
                }
                if let restore = screen.restore {
                    Section {
                        ActionButton(button: restore) { store.act($0) }
                        ForEach(screen.restored, id: \.self) { Text($0) }
                    }
                }
                if let pendingTitle = screen.pendingTitle {
                    Section {
                        ForEach(Array(screen.pending.enumerated()), id: \.offset) { _, row in
                            PendingRowView(row: row) { store.act($0) }
                        }
                    } header: {
                        Text(pendingTitle)
                    }
                }
            }
            .navigationTitle(screen.title)
            .sheet(item: Binding(get: { shell.router.scanning }, set: { shell.router.scanning = $0 }), onDismiss: { store.reload() }) { words in
                PairingScannerView(words: words, shell: shell)
            }
        }
    }
}

/// A value a restore left for the student: what it is, 应用 and 不用了.
private struct PendingRowView: View {
    let row: CloudPendingRow
    let act: (Action) -> Void

    var body: some View {
        VStack(alignment: .leading) {
            Text(row.words)
            HStack {
                ActionButton(button: row.apply) { act($0) }
                    .accessibilityIdentifier("cloud.pending.apply")
                ActionButton(button: row.dismiss) { act($0) }
                    .accessibilityIdentifier("cloud.pending.dismiss")
            }
        }
    }
}

/// One device of the account: its kind, when it joined, 本机 on this one, 移除 on the others.
private struct DeviceRowView: View {
    let row: CloudDeviceRow
    let act: (Action) -> Void

    var body: some View {
        VStack(alignment: .leading) {
            HStack {
                Text(row.name).fontWeight(.medium)
                Spacer()
                if row.thisDevice, let mark = row.thisLabel { Text(mark).font(.caption) }
            }
            LabeledContent(row.joined.label, value: row.joined.value)
            if let remove = row.remove {
                ActionButton(button: remove) { act($0) }
                    .accessibilityIdentifier("cloud.removeDevice")
            }
        }
    }
}
