import Harness
import SwiftUI

extension ButtonRole {
    var swiftUI: SwiftUI.ButtonRole? {
        switch self {
        case .destructive: return .destructive
        case .primary, .normal, .permanent: return nil
        }
    }
}

/// A stable accessibility identifier for a tap, for the UI tests (never shown).
func identifier(_ action: Action) -> String {
    switch action {
    case .setMode(let plugin, let effect, let mode): return "set-mode.\(plugin).\(effect).\(mode)"
    case .setEnabled(let plugin, _): return "set-enabled.\(plugin)"
    case .decideMemory(let memory, let approve): return "decide-memory.\(memory).\(approve)"
    case .requestPermission(let permission): return "request-permission.\(permission)"
    case .openPermissionSettings(let permission): return "open-permission-settings.\(permission)"
    case .cancelTurn: return "cancel-turn"
    case .pickDocument: return "pick-document"
    case .setPreset(_, let preset): return "set-preset.\(preset)"
    case .setPlanMode(_, let on): return "set-plan-mode.\(on)"
    case .acceptTerms: return "accept-terms"
    default: return String(describing: action)
    }
}

/// The model's Button: its label, role and Action, nothing else.
struct ActionButton: View {
    let button: Harness.Button
    let act: (Action) -> Void

    var body: some View {
        SwiftUI.Button(role: button.role.swiftUI) {
            act(button.action)
        } label: {
            Text(button.label)
                .fontWeight(button.role == .primary ? .semibold : .regular)
        }
        .accessibilityIdentifier(identifier(button.action))
    }
}

/// The model's choices as a row of selectable buttons; the selected one is marked.
struct ChoiceRow: View {
    let choices: [Choice]
    let act: (Action) -> Void

    var body: some View {
        ScrollView(.horizontal, showsIndicators: false) {
            HStack {
                ForEach(Array(choices.enumerated()), id: \.offset) { _, choice in
                    SwiftUI.Button {
                        act(choice.action)
                    } label: {
                        HStack(spacing: 4) {
                            if choice.selected { Image(systemName: "checkmark") }
                            Text(choice.label)
                        }
                    }
                    .buttonStyle(.bordered)
                    .tint(choice.selected ? .accentColor : .secondary)
                    .accessibilityIdentifier(identifier(choice.action))
                    .accessibilityAddTraits(choice.selected ? .isSelected : [])
                }
            }
        }
    }
}

/// Each line of a list of texts (warnings, disclosures, data sources).
struct Lines: View {
    let lines: [String]

    var body: some View {
        ForEach(Array(lines.enumerated()), id: \.offset) { _, line in
            Text(line).font(.callout)
        }
    }
}

/// A label and its value, as the model gives them.
struct LabelValueRow: View {
    let row: LabelValue

    var body: some View {
        LabeledContent(row.label, value: row.value)
    }
}

/// The store's model when read, with the core's error above it.
struct Loaded<Model, Content: View>: View {
    let store: ScreenStore<Model>
    @ViewBuilder let content: (Model) -> Content

    var body: some View {
        VStack(spacing: 0) {
            if let error = store.error {
                Text(error)
                    .font(.footnote)
                    .foregroundStyle(.red)
                    .padding(8)
                    .accessibilityIdentifier("error")
            }
            if let model = store.model {
                content(model)
            } else {
                ProgressView()
            }
        }
        .onAppear { store.appear() }
        .onDisappear { store.disappear() }
    }
}

/// Markdown as the core laid it out (`TextBlock`s of styled spans): headings, list items with
/// the core's marker, code in a fixed-width face, and links whose tap is the core's action.
struct RichText: View {
    let blocks: [TextBlock]
    let act: (Action) -> Void

    var body: some View {
        VStack(alignment: .leading, spacing: 4) {
            ForEach(Array(blocks.enumerated()), id: \.offset) { _, block in
                Text(line(block))
                    .font(block.kind == .heading ? .headline : block.kind == .code ? .footnote.monospaced() : .body)
                    .padding(.leading, CGFloat(16 * block.level))
            }
        }
        // A link's tap goes to the core, which hands the page to the browser.
        .environment(\.openURL, OpenURLAction { url in
            act(.openInBrowser(url: url.absoluteString))
            return .handled
        })
    }

    private func line(_ block: TextBlock) -> AttributedString {
        var line = AttributedString(block.marker.isEmpty ? "" : block.marker + " ")
        for span in block.spans {
            var part = AttributedString(span.text)
            var intent: InlinePresentationIntent = []
            if span.bold { intent.insert(.stronglyEmphasized) }
            if span.italic { intent.insert(.emphasized) }
            if span.code { intent.insert(.code) }
            part.inlinePresentationIntent = intent
            if case .openInBrowser(let url)? = span.link { part.link = URL(string: url) }
            line += part
        }
        return line
    }
}
