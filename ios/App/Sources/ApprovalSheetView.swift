import Harness
import SwiftUI

/// The core's approval sheet: its title, headline, the exact inputs, why the user is asked,
/// and exactly `sheet.answers` as buttons. Taps count only 500 ms after the sheet appears, so
/// a tap meant for the screen below cannot answer it.
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
                ForEach(Array(sheet.answers.enumerated()), id: \.offset) { _, answer in
                    SwiftUI.Button(role: answer.role.swiftUI) {
                        guard armed else { return }
                        approvals.finish(id: pending.id, with: answer.answer)
                    } label: {
                        Text(answer.label).frame(maxWidth: .infinity)
                    }
                    .buttonStyle(.borderedProminent)
                    .tint(answer.role == .primary ? .accentColor : (answer.role == .destructive ? .red : .gray))
                    .disabled(!armed)
                    .accessibilityIdentifier("answer-\(answer.answer)")
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
