import Harness
import SwiftUI

/// The core's approval sheet: its title, headline, the exact inputs, why the user is asked,
/// and exactly `sheet.answers` as buttons: Allow prominent, Deny plain, and "Always allow" (role
/// `.permanent`) below a divider, borderless, with the core's words for what it changes under
/// it, so it never looks like Allow. Taps count only 500 ms after the sheet appears, so a tap
/// meant for the screen below cannot answer it.
struct ApprovalSheetView: View {
    let pending: ApprovalCenter.Pending
    let approvals: ApprovalCenter
    @State private var armed = false

    private var sheet: ApprovalSheet { pending.sheet }

    var body: some View {
        ScrollView {
            VStack(alignment: .leading, spacing: 12) {
                Text(sheet.title).font(.headline)
                Text(sheet.headline).font(.title3).accessibilityIdentifier("approval.headline")
                // A remote server's title is third-party text (DESIGN.md §5): say so above it.
                if sheet.wordsFromServer {
                    Text(sheet.wordsFromServerLabel).font(.caption).foregroundStyle(.secondary)
                }
                LabeledContent(sheet.pluginTitle, value: sheet.toolTitle)
                Text(sheet.effectLabel)
                    .font(.caption)
                    .accessibilityValue(String(describing: sheet.effect))
                inputs
                VStack(alignment: .leading, spacing: 4) {
                    Text(sheet.reasonLabel).font(.caption).foregroundStyle(.secondary)
                    Text(sheet.reason).accessibilityIdentifier("approval.reason")
                }
                // In a tainted turn: why nothing lasting is offered (DESIGN.md §3).
                if let note = sheet.taintedNote {
                    Text(note)
                        .font(.callout)
                        .padding(10)
                        .frame(maxWidth: .infinity, alignment: .leading)
                        .background(Color.orange.opacity(0.15), in: RoundedRectangle(cornerRadius: 8))
                        .accessibilityIdentifier("approval.tainted")
                }
                // A remote server's word that the tool may delete or overwrite.
                if let note = sheet.destructiveNote {
                    Text(note).font(.callout).foregroundStyle(.red)
                        .accessibilityIdentifier("approval.destructive")
                }
                HStack {
                    Spacer()
                    ForEach(Array(now.enumerated()), id: \.offset) { _, answer in
                        answerButton(answer)
                    }
                }
                ForEach(Array(lasting.enumerated()), id: \.offset) { _, answer in
                    Divider()
                    VStack(alignment: .leading, spacing: 4) {
                        answerButton(answer)
                        if let consequence = answer.consequence {
                            Text(consequence)
                                .font(.footnote)
                                .foregroundStyle(.secondary)
                                .accessibilityIdentifier("consequence-\(answer.answer)")
                        }
                    }
                }
            }
            .padding()
        }
        .accessibilityIdentifier("approval.sheet")
        .accessibilityValue(String(describing: sheet.kind))
        .task {
            try? await Task.sleep(for: .milliseconds(500))
            armed = true
        }
    }

    /// The answers for this call alone, in the core's order.
    private var now: [AnswerButton] { sheet.answers.filter { $0.role != .permanent } }
    /// The answers whose effect outlasts the call, shown apart: "Always allow" with its scopes
    /// (this conversation, today, always) where the core offers them, else as one answer.
    private var lasting: [AnswerButton] {
        sheet.alwaysScopes.isEmpty ? sheet.answers.filter { $0.role == .permanent } : sheet.alwaysScopes
    }

    /// One answer in its role's style: Allow prominent, Deny bordered, Always allow borderless.
    @ViewBuilder
    private func answerButton(_ answer: AnswerButton) -> some View {
        let button = SwiftUI.Button(role: answer.role.swiftUI) {
            guard armed else { return }
            approvals.finish(id: pending.id, with: answer.answer)
        } label: {
            Text(answer.label)
        }
        .disabled(!armed)
        .accessibilityIdentifier("answer-\(answer.answer)")
        switch answer.role {
        case .primary: button.buttonStyle(.borderedProminent)
        case .permanent: button.buttonStyle(.borderless)
        case .normal, .destructive: button.buttonStyle(.bordered)
        }
    }

    /// Each input exactly as the tool receives it; the raw JSON when there are none to list.
    @ViewBuilder
    private var inputs: some View {
        if sheet.inputs.isEmpty {
            Text(sheet.inputJson)
                .font(.system(.footnote, design: .monospaced))
                .textSelection(.enabled)
                .accessibilityIdentifier("approval.inputs")
        } else {
            VStack(alignment: .leading, spacing: 4) {
                ForEach(Array(sheet.inputs.enumerated()), id: \.offset) { _, row in
                    LabeledContent(row.name) {
                        Text(row.value).font(.system(.body, design: .monospaced)).textSelection(.enabled)
                    }
                }
            }
            .accessibilityIdentifier("approval.inputs")
            .accessibilityValue(sheet.inputJson)
        }
    }
}
