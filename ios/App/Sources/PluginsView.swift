import Harness
import SwiftUI

/// The installed plugins, load errors, and the link field that previews a plugin to add.
struct PluginsView: View {
    private let shell: Shell
    @State private var store: ScreenStore<PluginsScreen>
    @State private var link = ""
    @State private var remoteURL = ""
    @State private var remoteName = ""
    @State private var remoteToken = ""
    @State private var remoteClient = ""
    @State private var remoteClientSecret = ""

    init(shell: Shell) {
        self.shell = shell
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.pluginsScreen() })
    }

    var body: some View {
        Loaded(store: store) { screen in
            List {
                ForEach(screen.groups, id: \.title) { group in
                    Section(group.title) {
                        ForEach(group.plugins, id: \.id) { row in
                            NavigationLink {
                                PluginDetailView(shell: shell, plugin: row.id)
                            } label: {
                                VStack(alignment: .leading) {
                                    // A plugin the app needs has no switch; the core says why.
                                    if let toggle = row.toggle {
                                        Toggle(row.title, isOn: Binding(get: { row.enabled }, set: { _ in store.act(toggle) }))
                                            .accessibilityIdentifier("plugin.\(row.id).switch")
                                    } else {
                                        Text(row.title)
                                    }
                                    if !row.description.isEmpty { Text(row.description).font(.subheadline) }
                                    Text("\(row.kindLabel) · \(row.stateLabel)").font(.caption).foregroundStyle(.secondary)
                                    if let fixed = row.fixed { Text(fixed).font(.caption).foregroundStyle(.secondary) }
                                    if let fix = row.fix { ActionButton(button: fix, act: store.act) }
                                }
                                .opacity(row.enabled ? 1 : 0.5)
                                .accessibilityValue(String(describing: row.kind))
                            }
                            .accessibilityIdentifier("plugin.\(row.id)")
                        }
                    }
                }
                if !screen.loadErrors.isEmpty {
                    Section { Lines(lines: screen.loadErrors) }
                }
                Section(screen.addLabel) {
                    TextField(screen.linkPlaceholder, text: $link)
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                        .onSubmit { store.act(.previewLink(link: link)) }
                        .accessibilityIdentifier("plugins.link")
                    SwiftUI.Button(screen.addLabel) { store.act(.previewLink(link: link)) }
                        .disabled(link.isEmpty)
                }
                Section(screen.remoteLabel) {
                    TextField(screen.remoteUrlPlaceholder, text: $remoteURL)
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                    TextField(screen.remoteNamePlaceholder, text: $remoteName)
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                    SecureField(screen.remoteTokenPlaceholder, text: $remoteToken)
                    TextField(screen.remoteClientPlaceholder, text: $remoteClient)
                        .textInputAutocapitalization(.never)
                        .autocorrectionDisabled()
                    SecureField(screen.remoteClientSecretPlaceholder, text: $remoteClientSecret)
                    SwiftUI.Button(screen.remoteAddLabel) {
                        // The token and the secret leave with the tap; their fields are emptied
                        // so nothing here keeps them.
                        let token = remoteToken.isEmpty ? nil : remoteToken
                        remoteToken = ""
                        let client = remoteClient.isEmpty ? nil : remoteClient
                        let secret = remoteClientSecret.isEmpty ? nil : remoteClientSecret
                        remoteClientSecret = ""
                        store.act(.addRemoteServer(url: remoteURL, name: remoteName, token: token, clientId: client, clientSecret: secret))
                    }
                    .disabled(remoteURL.isEmpty || remoteName.isEmpty)
                }
            }
            .navigationTitle(screen.title)
            .sheet(item: Binding(get: { store.preview.map(PreviewItem.init) }, set: { if $0 == nil { store.preview = nil } })) { item in
                NavigationStack {
                    AddPluginView(screen: item.screen) { action in
                        store.preview = nil
                        link = ""
                        store.act(action)
                    } cancel: {
                        store.preview = nil
                    }
                }
            }
        }
    }
}

private struct PreviewItem: Identifiable {
    let screen: AddPluginScreen
    var id: String { screen.preview }
}

/// What installing a linked plugin would add, before the user agrees.
struct AddPluginView: View {
    let screen: AddPluginScreen
    let install: (Action) -> Void
    let cancel: () -> Void

    var body: some View {
        List {
            Section {
                Text(screen.pluginTitle).font(.headline)
                LabeledContent(screen.kindLabel, value: screen.plugin)
                Text(screen.link).font(.caption).textSelection(.enabled)
                Text(screen.grantRow)
            }
            if !screen.asksMore.isEmpty { Section { Lines(lines: screen.asksMore) } }
            if !screen.warnings.isEmpty { Section { Lines(lines: screen.warnings).foregroundStyle(.orange) } }
            Section {
                ForEach(Array(screen.modes.enumerated()), id: \.offset) { _, row in LabelValueRow(row: row) }
            }
            Section {
                ForEach(screen.tools, id: \.id) { tool in ToolRow(tool: tool, act: nil) }
            }
            if !screen.dataSources.isEmpty { Section { Lines(lines: screen.dataSources) } }
            if !screen.disclosure.isEmpty { Section { Lines(lines: screen.disclosure) } }
            if !screen.requires.isEmpty { Section { Lines(lines: screen.requires) } }
            Section {
                ActionButton(button: screen.install, act: install)
                SwiftUI.Button(screen.cancelLabel, role: .cancel, action: cancel)
            }
        }
        .navigationTitle(screen.title)
    }
}

/// One plugin: on/off, its modes per effect with their source, its tools, and what it needs.
struct PluginDetailView: View {
    @State private var store: ScreenStore<PluginDetail>

    init(shell: Shell, plugin: String) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.pluginDetailScreen(plugin: plugin) })
    }

    var body: some View {
        Loaded(store: store) { detail in
            List {
                Section {
                    RichText(blocks: detail.about, act: store.act)
                        .accessibilityLabel(detail.description)
                    Text(detail.kindLabel)
                    if let toggle = detail.toggle {
                        Toggle(detail.enabledLabel, isOn: Binding(get: { detail.enabled }, set: { _ in store.act(toggle) }))
                            .accessibilityIdentifier(identifier(toggle))
                    }
                    if let fixed = detail.fixed { Text(fixed).font(.footnote).foregroundStyle(.secondary) }
                    Text(detail.grantRow).font(.footnote)
                    if let unmet = detail.unmet { Text(unmet).foregroundStyle(.orange) }
                    if let fix = detail.unmetFix { ActionButton(button: fix, act: store.act) }
                    ForEach(detail.changedTools, id: \.self) { Text($0).foregroundStyle(.purple) }
                    if let accept = detail.acceptChanges { ActionButton(button: accept, act: store.act) }
                }
                Section(detail.modesLabel) {
                    ForEach(Array(detail.modes.enumerated()), id: \.offset) { _, row in
                        ModeRow(row: row, act: store.act)
                    }
                }
                if !detail.actions.isEmpty {
                    Section {
                        ForEach(Array(detail.actions.enumerated()), id: \.offset) { _, action in
                            ActionButton(button: action, act: store.act)
                        }
                    }
                }
                // The plugin's declared screens: each link opens one (`Acted.openPluginScreen`).
                if !detail.screens.isEmpty {
                    Section {
                        ForEach(Array(detail.screens.enumerated()), id: \.offset) { index, link in
                            ActionButton(button: link, act: store.act)
                                .accessibilityIdentifier("plugin.screen.\(index)")
                        }
                    }
                }
                Section(detail.toolsLabel) {
                    ForEach(detail.tools, id: \.id) { tool in ToolRow(tool: tool, act: store.act) }
                }
                if !detail.warnings.isEmpty { Section { Lines(lines: detail.warnings).foregroundStyle(.orange) } }
                // Each data source opens where the core says it is shown (`Action.openDataSource`).
                if !detail.dataSources.isEmpty {
                    Section(detail.dataSourcesLabel) {
                        ForEach(Array(detail.dataSources.enumerated()), id: \.offset) { index, source in
                            ActionButton(button: source, act: store.act)
                                .accessibilityIdentifier("plugin.source.\(index)")
                        }
                    }
                }
                // Allow cloud, with what the plugin stores online listed beside it (seed 000).
                if let cloud = detail.cloudLabel, let toggle = detail.cloudToggle {
                    Section {
                        Toggle(cloud, isOn: Binding(get: { detail.cloudAllowed }, set: { _ in store.act(toggle) }))
                            .accessibilityIdentifier("plugin.allowCloud")
                        Lines(lines: detail.disclosure)
                    }
                }
                if !detail.campus.isEmpty { Section(detail.campusLabel) { Lines(lines: detail.campus) } }
                Section(detail.developerLabel) {
                    ForEach(Array(detail.developer.enumerated()), id: \.offset) { _, row in
                        LabeledContent(row.label, value: row.id).font(.caption)
                    }
                    Text(detail.developerGrantRow).font(.caption)
                }
                Section {
                    if let update = detail.update { ActionButton(button: update, act: store.act) }
                    if let remove = detail.remove { ActionButton(button: remove, act: store.act) }
                }
            }
            .navigationTitle(detail.title)
        }
    }
}

struct ModeRow: View {
    let row: ModeRowView
    let act: (Action) -> Void

    var body: some View {
        VStack(alignment: .leading, spacing: 4) {
            LabeledContent(row.effectLabel, value: row.modeLabel)
                .accessibilityIdentifier("mode.\(row.effect)")
                .accessibilityValue(String(describing: row.mode))
            Text(row.sourceLabel).font(.caption).foregroundStyle(.secondary)
            if let note = row.note { Text(note).font(.caption).foregroundStyle(.orange) }
            ChoiceRow(choices: row.choices, act: act)
        }
    }
}

struct ToolRow: View {
    let tool: ToolRowView
    /// None where the tool cannot be changed (the add-plugin preview).
    let act: ((Action) -> Void)?

    var body: some View {
        VStack(alignment: .leading, spacing: 4) {
            Text(tool.title)
            Text(tool.description).font(.caption).foregroundStyle(.secondary)
            Text(tool.effectLabel).font(.caption)
            if let act, !tool.reclass.isEmpty {
                ChoiceRow(choices: tool.reclass, act: act)
            }
        }
        .accessibilityIdentifier("tool.\(tool.id)")
    }
}
