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
                if let signed = screen.signedIn {
                    Section {
                        LabeledContent(signed.accountLabel, value: signed.account)
                            .accessibilityIdentifier("campus.account")
                        ForEach(Array(signed.services.enumerated()), id: \.offset) { _, service in
                            LabeledContent(service.label, value: service.value)
                        }
                        ActionButton(button: signed.signOut, act: store.act)
                    }
                }
            }
            .navigationTitle(screen.title)
        }
    }
}

/// Treehole's own SMS check: send the code, then enter it — a step only the student takes.
struct TreeholeCheckView: View {
    @State private var store: ScreenStore<TreeholeCheckScreen>
    @State private var code = ""

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.treeholeCheckScreen() })
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
                    SwiftUI.Button(screen.submitLabel) { store.act(.treeholeVerify(code: code)) }
                }
            }
            .navigationTitle(screen.title)
        }
    }
}
