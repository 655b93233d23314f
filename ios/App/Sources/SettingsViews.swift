import Harness
import SwiftUI

/// The conversation's model, thinking effort, preset, plan mode, scope and rules.
struct ConversationSettingsView: View {
    @State private var store: ScreenStore<ConversationSettingsScreen>
    @State private var model = ""
    @State private var site = ""

    init(shell: Shell, conversation: String) {
        _store = State(initialValue: ScreenStore(shell: shell) { harness in
            _ = try harness.openConversation(conversation: conversation)
            return try harness.conversationSettingsScreen(conversation: conversation)
        })
    }

    var body: some View {
        Loaded(store: store) { screen in
            Form {
                Section(screen.modelLabel) {
                    TextField(screen.defaultModel, text: $model)
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                        .onAppear { model = screen.model ?? "" }
                        .onSubmit {
                            let name = model.trimmingCharacters(in: .whitespaces)
                            store.act(.setConversationModel(conversation: screen.conversation, model: name.isEmpty ? nil : name))
                        }
                }
                Section(screen.thinkingLabel) { ChoiceRow(choices: screen.thinking, act: store.act) }
                Section {
                    ChoiceRow(choices: screen.presets, act: store.act)
                } header: { Text(screen.presetLabel) } footer: { Text(screen.presetNote) }
                Section {
                    Toggle(screen.planModeLabel, isOn: Binding(get: { screen.planMode }, set: { _ in store.act(screen.planModeToggle) }))
                        .accessibilityIdentifier("plan-mode")
                }
                Section {
                    ForEach(Array(screen.scope.enumerated()), id: \.offset) { _, row in
                        LabeledContent(row.kind, value: row.value)
                            .swipeActions { SwiftUI.Button(role: .destructive) { store.act(row.remove) } label: { Image(systemName: "trash") } }
                    }
                    TextField(screen.addHostLabel, text: $site, prompt: Text(screen.hostHint))
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                        .keyboardType(.URL)
                        .onSubmit {
                            store.act(.setScopeEntry(conversation: screen.conversation, kind: .host, value: site, on: true))
                            site = ""
                        }
                    ForEach(Array(screen.addFolders.enumerated()), id: \.offset) { _, folder in
                        SwiftUI.Button(folder.label) { store.act(folder.action) }
                    }
                } header: { Text(screen.scopeLabel) } footer: { Text(screen.scopeNote) }
                Section {
                    RuleRows(rules: screen.rules, act: store.act)
                } header: { Text(screen.rulesLabel) } footer: { if let note = screen.noRulesNote { Text(note) } }
                Section(screen.globalRulesLabel) { RuleRows(rules: screen.globalRules, act: store.act) }
                RuleFormSection(form: screen.addRule, act: store.act)
            }
            .navigationTitle(screen.title)
        }
    }
}

/// The rule form: what the rule does (with the core's sentence for it), a plugin, one of its
/// tools, and where it applies; the view keeps only the picks.
struct RuleFormSection: View {
    let form: RuleForm
    let act: (Action) -> Void
    @State private var kind = 0
    @State private var plugin = 0
    @State private var tool = 0
    @State private var place = 0

    var body: some View {
        if !form.kinds.isEmpty, !form.plugins.isEmpty, !form.places.isEmpty {
            let picked = form.plugins[min(plugin, form.plugins.count - 1)]
            Section {
                Picker(form.kindLabel, selection: $kind) {
                    ForEach(Array(form.kinds.enumerated()), id: \.offset) { index, choice in Text(choice.label).tag(index) }
                }
                Text(form.kinds[min(kind, form.kinds.count - 1)].note).font(.footnote)
                Picker(form.pluginLabel, selection: $plugin) {
                    ForEach(Array(form.plugins.enumerated()), id: \.offset) { index, choice in Text(choice.title).tag(index) }
                }
                .onChange(of: plugin) { tool = 0 }
                Picker(form.toolLabel, selection: $tool) {
                    ForEach(Array(picked.tools.enumerated()), id: \.offset) { index, choice in Text(choice.label).tag(index) }
                }
                Picker(form.placeLabel, selection: $place) {
                    ForEach(Array(form.places.enumerated()), id: \.offset) { index, choice in Text(choice.label).tag(index) }
                }
                SwiftUI.Button(form.addLabel) {
                    let target = picked.tools[min(tool, picked.tools.count - 1)]
                    act(.addRule(conversation: form.places[min(place, form.places.count - 1)].conversation,
                                 kind: form.kinds[min(kind, form.kinds.count - 1)].kind, tool: target.tool))
                }
            } header: { Text(form.title) }
        }
    }
}

struct RuleRows: View {
    let rules: [RuleRow]
    let act: (Action) -> Void

    var body: some View {
        ForEach(Array(rules.enumerated()), id: \.offset) { _, rule in
            Text(rule.text)
                .swipeActions { SwiftUI.Button(role: .destructive) { act(rule.remove) } label: { Image(systemName: "trash") } }
        }
    }
}

/// The terms, the campus account, cloud consent per plugin, and the system permissions with
/// the tap that fixes each.
struct ConsentView: View {
    @State private var store: ScreenStore<ConsentScreen>

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.consentScreen() })
    }

    var body: some View {
        Loaded(store: store) { screen in
            Form {
                Section(screen.termsLabel) {
                    Text(screen.termsState)
                    DisclosureGroup(screen.readTermsLabel) {
                        ForEach(Array(screen.terms.enumerated()), id: \.offset) { _, paragraph in
                            Text(paragraph).font(.footnote)
                        }
                    }
                    .accessibilityIdentifier("consent.read-terms")
                    if let accept = screen.acceptTerms { ActionButton(button: accept, act: store.act) }
                }
                Section(screen.campusLabel) {
                    Text(screen.campusState)
                        .accessibilityIdentifier("campus.state")
                        .accessibilityValue(screen.campusSignedIn ? "1" : "0")
                    ActionButton(button: screen.campusOpen, act: store.act)
                }
                Section(screen.cloudLabel) {
                    ForEach(screen.cloud, id: \.plugin) { row in
                        Toggle(row.title, isOn: Binding(get: { row.allowed }, set: { _ in store.act(row.toggle) }))
                        Lines(lines: row.disclosure)
                    }
                }
                Section(screen.permissionsLabel) {
                    ForEach(Array(screen.permissions.enumerated()), id: \.offset) { _, row in
                        VStack(alignment: .leading, spacing: 4) {
                            LabeledContent(row.label, value: row.stateLabel)
                                .accessibilityIdentifier("permission.\(row.permission)")
                                .accessibilityValue(String(describing: row.state))
                            Lines(lines: row.neededBy)
                            if let fix = row.fix { ActionButton(button: fix, act: store.act) }
                        }
                    }
                }
            }
            .navigationTitle(screen.title)
        }
    }
}

/// The model in one tap (issue 42): a provider from the core's list, its suggested models, where
/// to get a key, the key (never shown: it goes from the SecureField straight to the core, which
/// keeps it in the Keychain, one per provider), and Test connection, whose words the core writes.
struct ModelSettingsView: View {
    @State private var store: ScreenStore<ModelSettingsScreen>
    @State private var endpoint = ""
    @State private var name = ""
    @State private var key = ""

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.modelSettingsScreen() })
    }

    /// What was typed, handed to the core before a save or a test; the key leaves at once.
    private func handOver(_ screen: ModelSettingsScreen) {
        if screen.endpointEditable && endpoint != screen.endpoint { store.act(.setModelEndpoint(endpoint: endpoint)) }
        if name != screen.model { store.act(.setModelName(name: name)) }
        if !key.isEmpty {
            store.act(.setApiKey(key: key))
            key = ""
        }
    }

    var body: some View {
        Loaded(store: store) { screen in
            Form {
                Section(screen.providerLabel) {
                    ForEach(screen.providers, id: \.id) { provider in
                        SwiftUI.Button {
                            store.act(provider.choose)
                        } label: {
                            HStack {
                                Text(provider.name)
                                Spacer()
                                if provider.chosen { Image(systemName: "checkmark") }
                            }
                        }
                        .accessibilityIdentifier("model-provider-\(provider.id)")
                    }
                }
                Section(screen.endpointLabel) {
                    TextField(screen.endpointLabel, text: $endpoint)
                        .keyboardType(.URL)
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                        .disabled(!screen.endpointEditable)
                        .onAppear { endpoint = screen.endpoint }
                        .onChange(of: screen.endpoint) { _, new in endpoint = new }
                }
                Section(screen.modelLabel) {
                    TextField(screen.modelLabel, text: $name)
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                        .onAppear { name = screen.model }
                        .onChange(of: screen.model) { _, new in name = new }
                    ForEach(screen.suggestedModels, id: \.label) { suggested in
                        ActionButton(button: suggested, act: store.act)
                    }
                }
                Section(screen.keyLabel) {
                    Text(screen.keyState).accessibilityValue(screen.keySet ? "1" : "0")
                    SecureField(screen.keyLabel, text: $key)
                        .textContentType(.password)
                    if let get = screen.getKey { ActionButton(button: get, act: store.act) }
                    if let clear = screen.clearKey { ActionButton(button: clear, act: store.act) }
                }
                Section {
                    SwiftUI.Button(screen.saveLabel) { handOver(screen) }
                    SwiftUI.Button(screen.test.label) {
                        handOver(screen)
                        store.act(screen.test.action)
                    }
                    .accessibilityIdentifier("model-test")
                    if let result = screen.testResult {
                        Text(result)
                            .foregroundStyle(screen.testWorks ? Color.accentColor : Color.red)
                            .accessibilityIdentifier("model-test-result")
                    }
                    // The month's spend in 元 and the cap, or where to set one.
                    Text(screen.monthSpend)
                        .font(.footnote)
                        .foregroundStyle(.secondary)
                        .accessibilityIdentifier("model-month-spend")
                }
            }
            .navigationTitle(screen.title)
        }
    }
}

/// The first run's step the core says is next, over the whole app: its words, the terms in
/// full, or the model's or the campus account's own screen inside the step, then its taps.
struct FirstRunView: View {
    let shell: Shell
    let page: FirstRunPage
    let act: (Action) -> Void

    var body: some View {
        VStack(alignment: .leading, spacing: 12) {
            Text(page.progress).font(.footnote).foregroundStyle(.secondary)
            Text(page.title).font(.title2).bold()
            Text(page.explanation)
            switch page.step {
            case .terms:
                ScrollView {
                    VStack(alignment: .leading, spacing: 10) {
                        ForEach(Array(page.terms.enumerated()), id: \.offset) { _, paragraph in
                            Text(paragraph)
                        }
                    }
                }
                .accessibilityIdentifier("first-run-terms")
            case .model: ModelSettingsView(shell: shell)
            case .campus: CampusAccountView(shell: shell)
            case .notifications: Spacer()
            }
            HStack {
                ActionButton(button: page.next, act: act).buttonStyle(.borderedProminent)
                if let skip = page.skip { ActionButton(button: skip, act: act) }
            }
        }
        .padding()
    }
}
