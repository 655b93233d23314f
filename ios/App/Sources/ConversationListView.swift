import Harness
import SwiftUI

/// The conversation list: rows newest first (title, last activity, preview), a new chat, and
/// per row a rename and a delete; after a delete, its undo bar until the core's window ends.
struct ConversationListView: View {
    private let shell: Shell
    @State private var store: ScreenStore<ConversationListScreen>
    @State private var renaming: String?
    @State private var draft = ""

    init(shell: Shell) {
        self.shell = shell
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.conversationListScreen() })
    }

    var body: some View {
        Loaded(store: store) { screen in
            List {
                if let undo = screen.undo {
                    HStack {
                        Text(undo.text)
                        Spacer()
                        ActionButton(button: undo.undo, act: store.act)
                            .accessibilityIdentifier("conversations.undo")
                    }
                    // The bar leaves when the window ends: read the screen again then.
                    .task(id: undo.untilMs) {
                        let wait = max(0, undo.untilMs - Int64(Date().timeIntervalSince1970 * 1000)) + 50
                        try? await Task.sleep(nanoseconds: UInt64(wait) * 1_000_000)
                        store.reload()
                    }
                }
                if let empty = screen.empty {
                    Text(empty).foregroundStyle(.secondary)
                }
                ForEach(screen.rows, id: \.conversation) { row in
                    VStack(alignment: .leading, spacing: 4) {
                        SwiftUI.Button {
                            store.act(row.open)
                        } label: {
                            HStack {
                                Text(row.title).font(.headline).lineLimit(1)
                                Spacer()
                                Text(row.lastActive).font(.caption).foregroundStyle(.secondary)
                            }
                        }
                        .accessibilityIdentifier("conversation.\(row.conversation)")
                        if !row.preview.isEmpty {
                            Text(row.preview).font(.subheadline).foregroundStyle(.secondary).lineLimit(1)
                        }
                        // This month's turns and spend in 元, when the conversation has any.
                        if !row.spend.isEmpty {
                            Text(row.spend).font(.caption).foregroundStyle(.secondary)
                                .accessibilityIdentifier("conversation-spend.\(row.conversation)")
                        }
                        HStack {
                            if renaming == row.conversation {
                                TextField(row.renameLabel, text: $draft)
                                SwiftUI.Button(row.renameLabel) {
                                    renaming = nil
                                    store.act(.renameConversation(conversation: row.conversation, title: draft))
                                }
                            } else {
                                SwiftUI.Button(row.renameLabel) {
                                    draft = row.title
                                    renaming = row.conversation
                                }
                            }
                            Spacer()
                            ActionButton(button: row.delete, act: store.act)
                                .accessibilityIdentifier("conversation.\(row.conversation).delete")
                        }
                        .buttonStyle(.borderless)
                    }
                }
            }
            .navigationTitle(screen.title)
            .toolbar {
                ActionButton(button: screen.newChat, act: store.act)
                    .accessibilityIdentifier("conversations.new")
            }
        }
    }
}
