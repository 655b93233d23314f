import Harness
import SwiftUI

/// A remote server's question as the core wrote it: which plugin's server asks, its words
/// marked as the server's, the fields with the server's defaults filled in (text, numbers, a
/// toggle, one or several choices) or the page it asks to open with its host, why the last
/// answer was not sent, and the core's three answers. What was typed goes back as text; the
/// core reads it and asks again, saying why, while it does not fit the server's form.
struct QuestionSheetView: View {
    let question: ServerSheets.Question
    let sheets: ServerSheets
    @State private var typed: [String: String] = [:]

    private var sheet: ElicitationSheet { question.sheet }

    var body: some View {
        NavigationStack {
            Form {
                // Why the last answer was not sent, where the sheet opens again: at its top.
                if let error = sheet.error {
                    Text(error).foregroundStyle(.red).accessibilityIdentifier("question.error")
                }
                Section {
                    Text(sheet.message)
                } header: {
                    Text(sheet.wordsFromServerLabel)
                }
                if let note = sheet.taintedNote {
                    Text(note).font(.callout).accessibilityIdentifier("question.tainted")
                }
                if let page = sheet.page {
                    Section {
                        Text(page.label)
                        Text(page.host).font(.headline)
                        Text(page.url).font(.system(.footnote, design: .monospaced))
                    }
                    .accessibilityIdentifier("question.page")
                }
                ForEach(Array(sheet.fields.enumerated()), id: \.offset) { _, field in
                    input(field)
                }
                Section {
                    ForEach(Array(sheet.answers.enumerated()), id: \.offset) { _, answer in
                        SwiftUI.Button(answer.label) {
                            let values = sheet.fields.map { FieldValue(name: $0.name, value: typed[$0.name] ?? $0.value) }
                            sheets.reply(ElicitationReply(action: answer.action, values: values))
                        }
                        .fontWeight(answer.role == .primary ? .semibold : .regular)
                        .accessibilityIdentifier("question.\(answer.action)")
                    }
                }
            }
            .navigationTitle(sheet.title)
            .accessibilityValue(sheet.pluginTitle)
        }
        .onAppear {
            typed = Dictionary(uniqueKeysWithValues: sheet.fields.map { ($0.name, $0.value) })
        }
    }

    /// One field of the server's form, drawn by its kind, with the server's description.
    private func input(_ field: FormFieldRow) -> some View {
        Section {
            FieldInput(field: field, typed: $typed)
        } footer: {
            if let hint = field.hint { Text(hint) }
        }
        .accessibilityIdentifier("question.field.\(field.name)")
    }
}

/// One form field drawn by its kind (a server's question, a plugin screen's form); what is
/// typed is kept as text under the field's name, which is how the core reads it back.
struct FieldInput: View {
    let field: FormFieldRow
    @Binding var typed: [String: String]

    private func binding(_ name: String) -> Binding<String> {
        Binding(get: { typed[name] ?? "" }, set: { typed[name] = $0 })
    }

    var body: some View {
        let label = field.required ? "\(field.label) *" : field.label
        switch field.kind {
        case .toggle:
            Toggle(label, isOn: Binding(get: { typed[field.name] == "true" }, set: { typed[field.name] = $0 ? "true" : "false" }))
        case .choice:
            Picker(label, selection: binding(field.name)) {
                ForEach(Array(field.options.enumerated()), id: \.offset) { _, option in
                    Text(option.label).tag(option.value)
                }
            }
        case .choices:
            ForEach(Array(field.options.enumerated()), id: \.offset) { _, option in
                let picked = (typed[field.name] ?? "").split(separator: "\n").map(String.init)
                Toggle(option.label, isOn: Binding(get: { picked.contains(option.value) }, set: { on in
                    let now = on ? picked + [option.value] : picked.filter { $0 != option.value }
                    typed[field.name] = now.joined(separator: "\n")
                }))
            }
        case .email:
            TextField(label, text: binding(field.name)).keyboardType(.emailAddress).textInputAutocapitalization(.never)
        case .link:
            TextField(label, text: binding(field.name)).keyboardType(.URL).textInputAutocapitalization(.never)
        case .integer:
            TextField(label, text: binding(field.name)).keyboardType(.numberPad)
        case .number:
            TextField(label, text: binding(field.name)).keyboardType(.decimalPad)
        case .text, .date:
            TextField(label, text: binding(field.name))
        }
    }
}

/// The sheet before a remote server's sign-in page opens: which server, where the student signs
/// in, that the app never sees the password, and what it asks to be allowed. Continue opens the
/// page in ASWebAuthenticationSession; Cancel adds nothing.
struct SignInSheetView: View {
    let signIn: ServerSheets.SignIn
    let sheets: ServerSheets

    private var sheet: SignInSheet { signIn.sheet }

    var body: some View {
        NavigationStack {
            Form {
                Section {
                    Text(sheet.server).font(.headline)
                    Text(sheet.serverUrl).font(.system(.footnote, design: .monospaced))
                    Text(sheet.explanation)
                }
                Section(sheet.accountLabel) {
                    Text(sheet.authorizationServer)
                }
                if !sheet.scopes.isEmpty {
                    Section(sheet.scopesLabel) {
                        ForEach(sheet.scopes, id: \.self) { Text($0).font(.system(.body, design: .monospaced)) }
                    }
                }
                Section {
                    Text(sheet.page).font(.system(.footnote, design: .monospaced)).lineLimit(2)
                    SwiftUI.Button(sheet.continueLabel) { sheets.answerSignIn(go: true) }
                        .fontWeight(.semibold)
                        .accessibilityIdentifier("sign-in.continue")
                    SwiftUI.Button(sheet.cancelLabel, role: .cancel) { sheets.answerSignIn(go: false) }
                        .accessibilityIdentifier("sign-in.cancel")
                }
            }
            .navigationTitle(sheet.title)
        }
    }
}
