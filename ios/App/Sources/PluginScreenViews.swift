import Harness
import SwiftUI

/// Today (`todayScreen()`): the core's tiles, each a data source's first lines with its age; a
/// tile's tap is the core's `open` (where the source is shown), its fix mends what it waits
/// for. Its edit mode is this view's alone: each change in it (remove, move, add) is the core's
/// Action, and the tiles are read again after it.
struct TodayView: View {
    @State private var store: ScreenStore<TodayScreen>
    @State private var editing = false

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try await $0.todayScreen() })
    }

    var body: some View {
        Loaded(store: store) { today in
            List {
                if let payCode = today.payCode {
                    ActionButton(button: payCode, act: store.act).accessibilityIdentifier("today.payCode")
                }
                if let empty = today.empty { Text(empty).foregroundStyle(.secondary) }
                ForEach(Array(today.tiles.enumerated()), id: \.offset) { _, tile in
                    TileView(tile: tile, editing: editing, act: store.act)
                        .accessibilityIdentifier("today.\(tile.plugin).\(tile.source)")
                }
                if editing && !today.addable.isEmpty {
                    Section(today.addLabel) {
                        ForEach(Array(today.addable.enumerated()), id: \.offset) { index, add in
                            ActionButton(button: add, act: store.act).accessibilityIdentifier("today.add.\(index)")
                        }
                    }
                }
            }
            .navigationTitle(today.title)
            .toolbar {
                SwiftUI.Button(editing ? today.doneLabel : today.editLabel) { editing.toggle() }
                    .accessibilityIdentifier("today.edit")
            }
        }
        .onAppear { store.appear() }
        .onDisappear { store.disappear() }
    }
}

private struct TileView: View {
    let tile: TodayTile
    let editing: Bool
    let act: (Action) -> Void

    var body: some View {
        VStack(alignment: .leading, spacing: 4) {
            HStack {
                Text(tile.title).font(.headline)
                Spacer()
                if editing {
                    if let up = tile.moveUp { SwiftUI.Button("↑") { act(up) }.buttonStyle(.borderless) }
                    if let down = tile.moveDown { SwiftUI.Button("↓") { act(down) }.buttonStyle(.borderless) }
                    SwiftUI.Button("✕", role: .destructive) { act(tile.remove) }.buttonStyle(.borderless)
                } else if let age = tile.age {
                    Text(age).font(.caption).foregroundStyle(.secondary)
                }
            }
            ForEach(Array(tile.lines.enumerated()), id: \.offset) { _, line in
                LabeledContent(line.label, value: line.value)
            }
            if let message = tile.message { Text(message).foregroundStyle(.secondary) }
            if !editing, let fix = tile.fix { ActionButton(button: fix, act: act) }
        }
        .contentShape(Rectangle())
        .onTapGesture { if !editing, let open = tile.open { act(open) } }
        .accessibilityValue(tile.screen ?? "")
    }
}

/// A plugin's declared screen (`pluginScreen(plugin:screen:)`), the one renderer for every
/// plugin: each section's values, list or table, its state's words and the tap that mends it.
struct PluginScreenView: View {
    @State private var store: ScreenStore<PluginScreen>

    init(shell: Shell, shown: PluginScreenRef) {
        _store = State(initialValue: ScreenStore(shell: shell) {
            if let source = shown.source {
                return try await $0.sourceScreen(plugin: shown.plugin, source: source)
            }
            return try await $0.pluginScreen(plugin: shown.plugin, screen: shown.screen)
        })
    }

    var body: some View {
        Loaded(store: store) { screen in
            List {
                ForEach(Array(screen.sections.enumerated()), id: \.offset) { index, section in
                    SectionView(section: section, act: store.act)
                        .accessibilityIdentifier("plugin-screen.\(screen.plugin).\(screen.screen).\(index)")
                }
            }
            .navigationTitle(screen.title)
        }
        .onAppear { store.appear() }
        .onDisappear { store.disappear() }
    }
}

private struct SectionView: View {
    let section: ScreenSection
    let act: (Action) -> Void
    /// A form's values as typed, by field name; the core's defaults until the student types.
    @State private var typed: [String: String] = [:]

    var body: some View {
        Section {
            if let age = section.age { Text(age).font(.caption).foregroundStyle(.secondary) }
            if let message = section.message {
                Text(message).foregroundStyle(section.state == .error ? .red : .secondary)
            }
            ForEach(Array(section.values.enumerated()), id: \.offset) { _, value in
                LabeledContent(value.label, value: value.value)
            }
            ForEach(Array(section.rows.enumerated()), id: \.offset) { at, row in
                VStack(alignment: .leading) {
                    ForEach(Array(row.enumerated()), id: \.offset) { column, cell in
                        if column < section.columns.count {
                            LabeledContent(section.columns[column], value: cell)
                        } else {
                            Text(cell)
                        }
                    }
                }
                // An item the section declares opens a screen (a post its thread): the core's tap.
                .contentShape(Rectangle())
                .onTapGesture { if at < section.rowOpens.count { act(section.rowOpens[at]) } }
            }
            ForEach(Array(section.fields.enumerated()), id: \.offset) { _, field in
                FieldInput(field: field, typed: $typed)
                if let hint = field.hint { Text(hint).font(.caption).foregroundStyle(.secondary) }
            }
            if let button = section.button {
                // A form's send carries what was typed; every other tap is the core's as it is.
                if case let .submitScreenForm(plugin, tool, _) = button.action {
                    ActionButton(button: button) { _ in
                        let values = section.fields.map { FieldValue(name: $0.name, value: typed[$0.name] ?? $0.value) }
                        act(.submitScreenForm(plugin: plugin, tool: tool, values: values))
                    }
                } else {
                    ActionButton(button: button, act: act)
                }
            }
        } header: {
            Text(section.title)
        }
        .onAppear { typed = Dictionary(uniqueKeysWithValues: section.fields.map { ($0.name, $0.value) }) }
    }
}
