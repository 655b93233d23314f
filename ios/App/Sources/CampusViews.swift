import Harness
import SwiftUI

/// The campus account as the core shows it: the sign-in form (the password in a SecureField,
/// handed to the core with the tap and kept nowhere here), the code IAAA asks for (with the
/// one-time-code autofill of the SMS just received), or the account with its services.
struct CampusAccountView: View {
    @State private var store: ScreenStore<CampusAccountScreen>
    @State private var user = ""
    @State private var password = ""
    @State private var remember = false
    @State private var code = ""
    @State private var captcha = ""

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.campusAccountScreen() })
    }

    var body: some View {
        Loaded(store: store) { screen in
            Form {
                Section { Text(screen.explanation).font(.footnote) }
                if let form = screen.form {
                    Section {
                        TextField(form.studentIdLabel, text: $user)
                            .keyboardType(.numberPad)
                            .textContentType(.username)
                            .accessibilityIdentifier("campus.studentId")
                        SecureField(form.passwordLabel, text: $password)
                            .textContentType(.password)
                            .accessibilityIdentifier("campus.password")
                        Toggle(form.rememberLabel, isOn: $remember)
                        Text(form.rememberHint).font(.footnote)
                        SwiftUI.Button(form.submitLabel) {
                            store.act(.campusSignIn(user: user, password: password, remember: remember))
                            password = ""
                        }
                        .accessibilityIdentifier("campus.signIn")
                    }
                }
                if let step = screen.code {
                    Section(step.account) {
                        Text(step.prompt)
                        TextField(step.codeLabel, text: $code)
                            .keyboardType(.numberPad)
                            .textContentType(.oneTimeCode)
                            .accessibilityIdentifier("campus.code")
                        SwiftUI.Button(step.submitLabel) { store.act(.campusSubmitCode(code: code)) }
                        if let resend = step.resend { ActionButton(button: resend, act: store.act) }
                        if let wait = step.resendWait { Text(wait).font(.footnote) }
                        ActionButton(button: step.cancel, act: store.act)
                    }
                }
                if let step = screen.captcha {
                    Section(step.account) {
                        Text(step.prompt)
                        // The core hands over only a picture whose header it read; it is
                        // decoded with the chat's bound.
                        if let bytes = step.image, let picture = boundedPicture(bytes) {
                            Image(uiImage: picture)
                                .resizable()
                                .scaledToFit()
                                .frame(maxHeight: 60)
                                .accessibilityLabel(step.codeLabel)
                        }
                        TextField(step.codeLabel, text: $captcha)
                            .textInputAutocapitalization(.never)
                            .autocorrectionDisabled()
                            .accessibilityIdentifier("campus.captcha")
                        SwiftUI.Button(step.submitLabel) {
                            store.act(.campusSubmitCaptcha(code: captcha))
                            captcha = ""
                        }
                        ActionButton(button: step.refresh, act: store.act)
                        ActionButton(button: step.cancel, act: store.act)
                    }
                }
                if let signed = screen.signedIn {
                    Section {
                        LabeledContent(signed.accountLabel, value: signed.account)
                            .accessibilityIdentifier("campus.account")
                        ForEach(Array(signed.services.enumerated()), id: \.offset) { _, service in
                            LabeledContent(service.label, value: service.value)
                        }
                        if let retry = signed.retry { ActionButton(button: retry, act: store.act) }
                        ActionButton(button: signed.signOut, act: store.act)
                    }
                }
            }
            .navigationTitle(screen.title)
        }
    }
}

/// A campus check (Treehole's SMS check, the course API's authorization for grades): send the
/// code, then enter it, or the authenticator's code — a step only the student takes. The screen
/// names its check, which the actions made from the code typed carry.
struct CampusCheckView: View {
    @State private var store: ScreenStore<CampusCheckScreen>
    @State private var code = ""

    init(shell: Shell, check: CampusCheck) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.campusCheckScreen(check: check) })
    }

    var body: some View {
        Loaded(store: store) { screen in
            Form {
                Section {
                    Text(screen.explanation)
                    ActionButton(button: screen.send, act: store.act)
                    TextField(screen.codeLabel, text: $code)
                        .keyboardType(.numberPad)
                        .textContentType(.oneTimeCode)
                    SwiftUI.Button(screen.submitLabel) { store.act(.campusCheckVerify(check: screen.check, code: code)) }
                    SwiftUI.Button(screen.otpSubmitLabel) { store.act(.campusCheckVerifyOtp(check: screen.check, code: code)) }
                }
            }
            .navigationTitle(screen.title)
        }
    }
}

/// The campus card's pay code: the core's payload drawn as a QR code and a barcode from the
/// modules the core computed, read again every `refreshAfterMs` while the page is shown (the
/// task ends with the page, so no code is read while it is not).
struct PayCodeView: View {
    @State private var store: ScreenStore<PayCodeScreen>

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try await $0.payCodeScreen() })
    }

    var body: some View {
        Loaded(store: store) { screen in
            Form {
                Section {
                    Text(screen.explanation)
                    if let code = screen.code {
                        Text(code.account).fontWeight(.medium)
                        ModuleGrid(modules: code.qrModules, width: Int(code.qrWidth), quiet: 4)
                            .aspectRatio(1, contentMode: .fit)
                            .accessibilityIdentifier("pay-code-qr")
                        ModuleGrid(modules: code.barcodeModules, width: code.barcodeModules.count, quiet: 10)
                            .frame(height: 88)
                            .accessibilityIdentifier("pay-code-barcode")
                        Text(code.payload).font(.body.monospaced())
                        Text(code.balance)
                    }
                    if let problem = screen.problem { Text(problem).foregroundStyle(.red) }
                    if let fix = screen.fix { ActionButton(button: fix, act: store.act) }
                    ActionButton(button: screen.recharge, act: store.act)
                }
            }
            .navigationTitle(screen.title)
        }
        .task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: UInt64(store.model?.refreshAfterMs ?? 60_000) * 1_000_000)
                await store.load()
            }
        }
    }
}

/// The shuttle bus's ride codes: each current booking's route and departure and its payload
/// drawn as a QR code from the modules the core computed, read while the page is shown.
struct RideCodeView: View {
    @State private var store: ScreenStore<RideCodeScreen>

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try await $0.rideCodeScreen() })
    }

    var body: some View {
        Loaded(store: store) { screen in
            Form {
                Section { Text(screen.explanation) }
                ForEach(Array(screen.rides.enumerated()), id: \.offset) { _, ride in
                    Section(ride.route) {
                        Text(ride.departure)
                        ModuleGrid(modules: ride.qrModules, width: Int(ride.qrWidth), quiet: 4)
                            .aspectRatio(1, contentMode: .fit)
                            .accessibilityIdentifier("ride-code-qr")
                        Text(ride.payload).font(.body.monospaced())
                    }
                }
                if let problem = screen.problem { Text(problem).foregroundStyle(.red) }
                if let fix = screen.fix { ActionButton(button: fix, act: store.act) }
            }
            .navigationTitle(screen.title)
        }
    }
}

/// Dark modules on white: rows of `width` (a QR code), or one row (a barcode's bars, stretched
/// to the height), with `quiet` modules of white around them.
struct ModuleGrid: View {
    let modules: [Bool]
    let width: Int
    let quiet: Int

    var body: some View {
        Canvas { context, size in
            let rows = max(modules.count / max(width, 1), 1)
            let cellWidth = size.width / CGFloat(width + 2 * quiet)
            let cellHeight = rows == 1 ? size.height : cellWidth
            context.fill(Path(CGRect(origin: .zero, size: size)), with: .color(.white))
            for (index, dark) in modules.enumerated() where dark {
                let x = CGFloat(index % width + quiet) * cellWidth
                let y = rows == 1 ? 0 : CGFloat(index / width + quiet) * cellWidth
                context.fill(Path(CGRect(x: x, y: y, width: cellWidth, height: cellHeight)), with: .color(.black))
            }
        }
    }
}
