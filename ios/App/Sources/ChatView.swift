import Harness
import ImageIO
import SwiftUI
import UniformTypeIdentifiers

/// The chat: its items by kind, the status line, the plan-mode note, stop, attach and send.
struct ChatView: View {
    @State private var store: ScreenStore<ChatScreen>
    @State private var draft = ""
    private let shell: Shell

    init(shell: Shell, conversation: String) {
        self.shell = shell
        _store = State(initialValue: ScreenStore(shell: shell) { harness in
            _ = try harness.openConversation(conversation: conversation)
            return try harness.chatScreen(conversation: conversation)
        })
    }

    var body: some View {
        Loaded(store: store) { chat in
            VStack(spacing: 0) {
                ScrollViewReader { scroll in
                    List {
                        ForEach(Array(chat.items.enumerated()), id: \.offset) { index, item in
                            ChatItemView(item: item, act: store.act).id(index)
                        }
                        // An empty chat: what the installed plugins can do, each a tap that sends it.
                        if !chat.examples.isEmpty {
                            Section(chat.examplesLabel) {
                                ForEach(Array(chat.examples.enumerated()), id: \.offset) { index, example in
                                    ActionButton(button: example, act: store.act)
                                        .accessibilityIdentifier("chat.example.\(index)")
                                }
                            }
                        }
                    }
                    .listStyle(.plain)
                    .onChange(of: chat.items.count) { _, count in
                        if count > 0 { scroll.scrollTo(count - 1, anchor: .bottom) }
                    }
                }
                if let note = chat.planModeNote {
                    Text(note).font(.footnote).padding(6).accessibilityIdentifier("chat.plan-mode")
                }
                if let notice = chat.campusNotice {
                    ActionButton(button: notice, act: store.act)
                        .padding(.horizontal)
                        .accessibilityIdentifier("chat.campus-notice")
                }
                if !chat.documents.isEmpty {
                    ScrollView(.horizontal) {
                        HStack { Lines(lines: chat.documents) }
                    }
                    .padding(.horizontal)
                    .accessibilityIdentifier("chat.documents")
                }
                HStack {
                    Text(chat.status)
                        .font(.caption)
                        .foregroundStyle(.secondary)
                        .accessibilityIdentifier("chat.status")
                        .accessibilityValue(chat.runningTurn ?? "")
                    Spacer()
                    if let cancel = chat.cancel {
                        ActionButton(button: cancel, act: store.act)
                    }
                }
                .padding(.horizontal)
                HStack {
                    SwiftUI.Button {
                        // The picker opens only after this tap, when the core answers pickDocument.
                        store.act(chat.attach.action)
                    } label: {
                        Text(chat.attach.label)
                    }
                    .accessibilityIdentifier("chat.attach")
                    TextField(chat.placeholder, text: $draft, axis: .vertical)
                        .textFieldStyle(.roundedBorder)
                        .accessibilityIdentifier("chat.draft")
                    SwiftUI.Button(chat.sendLabel) {
                        let text = draft
                        draft = ""
                        store.act(.sendMessage(conversation: chat.conversation, text: text))
                    }
                    .disabled(!chat.canSend || draft.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
                    .accessibilityIdentifier("chat.send")
                }
                .padding()
            }
            .navigationTitle(chat.title)
            .toolbar {
                ToolbarItemGroup {
                    ActionButton(button: chat.conversations, act: store.act)
                        .accessibilityIdentifier("chat.conversations")
                    ActionButton(button: chat.newChat, act: store.act)
                        .accessibilityIdentifier("chat.new")
                }
            }
            .fileImporter(
                isPresented: Binding(
                    get: { shell.router.pickingFor == chat.conversation },
                    set: { if !$0 { shell.router.pickingFor = nil } }
                ),
                allowedContentTypes: [.plainText, UTType("net.daringfireball.markdown") ?? .plainText, .pdf]
            ) { result in
                attach(result, conversation: chat.conversation)
            }
        }
    }

    /// The most of a picked file read: one byte past the core's bound on a file it reads
    /// (harness_core::screens::FILE_BYTES, 16 MiB), so a larger one is never read whole and the
    /// core refuses it in the student's words.
    private static let documentBytes = (16 << 20) + 1

    /// Reads the picked file's bytes on the phone and hands them to the core, which reads its
    /// text by its kind (text, Markdown, PDF) and refuses anything else naming it.
    private func attach(_ result: Result<URL, Error>, conversation: String) {
        guard case .success(let url) = result else { return }
        let scoped = url.startAccessingSecurityScopedResource()
        defer { if scoped { url.stopAccessingSecurityScopedResource() } }
        guard let file = try? FileHandle(forReadingFrom: url) else { return }
        defer { try? file.close() }
        // nil at once is an empty file, handed on as one.
        guard let data = try? file.read(upToCount: Self.documentBytes) ?? Data() else { return }
        store.act(.attachFile(conversation: conversation, name: url.lastPathComponent, bytes: data))
    }
}

/// One chat item, drawn by its kind.
struct ChatItemView: View {
    let item: ChatItem
    let act: (Action) -> Void
    @State private var showUsage = false

    var body: some View {
        switch item.kind {
        case .user:
            HStack {
                Spacer()
                Text(item.text).padding(8).background(.blue.opacity(0.15), in: .rect(cornerRadius: 10))
            }
            .accessibilityIdentifier("chat.user")
        case .assistant:
            // The turn's usage, shown when the student taps the answer (issue 42: on request).
            VStack(alignment: .leading, spacing: 2) {
                Text(item.text).accessibilityIdentifier("chat.assistant")
                if showUsage, let usage = item.usage {
                    Text(usage).font(.caption2).foregroundStyle(.secondary)
                        .accessibilityIdentifier("chat.usage")
                }
            }
            .onTapGesture { if item.usage != nil { showUsage.toggle() } }
        case .thinking:
            Text(item.text).font(.footnote).italic().foregroundStyle(.secondary)
                .accessibilityIdentifier("chat.thinking")
        case .notice:
            Text(item.text).font(.footnote).foregroundStyle(.orange).accessibilityIdentifier("chat.notice")
        case .toolCall:
            if let call = item.toolCall {
                ToolCallRow(call: call, text: item.text, act: act)
            } else {
                Text(item.text)
            }
        case .plan:
            if let plan = item.plan {
                PlanCardView(text: item.text, card: plan, act: act)
            } else {
                Text(item.text)
            }
        }
    }
}

/// Plan mode's plan: the agent's words under the core's heading, its accept tap and its hint.
struct PlanCardView: View {
    let text: String
    let card: PlanCard
    let act: (Action) -> Void

    var body: some View {
        VStack(alignment: .leading, spacing: 8) {
            Text(card.heading).font(.subheadline.weight(.semibold))
            Text(text)
            ActionButton(button: card.accept, act: act)
            Text(card.hint).font(.caption).foregroundStyle(.secondary)
        }
        .padding(10)
        .background(.purple.opacity(0.1), in: .rect(cornerRadius: 10))
        .accessibilityElement(children: .contain)
        .accessibilityIdentifier("chat.plan")
    }
}

/// A tool call as the core words it: its title and its plugin's, one line of what happened, the
/// result's labelled rows, the card with the tap that fixes it, and the raw JSON behind a toggle.
struct ToolCallRow: View {
    let call: ToolCallView
    let text: String
    let act: (Action) -> Void
    @State private var raw = false

    var body: some View {
        VStack(alignment: .leading, spacing: 4) {
            HStack(spacing: 8) {
                Text(call.title).font(.subheadline.weight(.semibold))
                if !call.pluginTitle.isEmpty {
                    Text(call.pluginTitle).font(.caption).foregroundStyle(.secondary)
                }
            }
            if !text.isEmpty { Text(text).font(.footnote) }
            if !call.summary.isEmpty {
                Text(call.summary)
                    .font(.caption)
                    .foregroundStyle(call.ok == false ? .red : .accentColor)
                    .accessibilityIdentifier("tool-call.summary")
            }
            ForEach(Array(call.rows.enumerated()), id: \.offset) { _, row in
                HStack(alignment: .top) {
                    Text(row.label).font(.caption).foregroundStyle(.secondary)
                    Spacer()
                    Text(row.value).font(.callout)
                }
                .accessibilityElement(children: .combine)
            }
            // A server's pictures, drawn; one that does not decode is its words.
            ForEach(Array(call.images.enumerated()), id: \.offset) { _, image in
                if let picture = boundedPicture(image.bytes) {
                    Image(uiImage: picture)
                        .resizable()
                        .scaledToFit()
                        .frame(maxWidth: 240, maxHeight: 240, alignment: .leading)
                        .accessibilityLabel(image.description)
                } else {
                    Text(image.description).font(.caption).foregroundStyle(.secondary)
                }
            }
            // A server's links: an https page opens in the browser; another address is shown.
            ForEach(Array(call.links.enumerated()), id: \.offset) { _, link in
                VStack(alignment: .leading, spacing: 2) {
                    if let open = link.open {
                        SwiftUI.Button(link.title) { act(open) }.font(.callout)
                    } else {
                        Text(link.title).font(.callout)
                    }
                    if let detail = link.detail {
                        Text(detail).font(.caption)
                    }
                    Text(link.address).font(.caption2).foregroundStyle(.secondary)
                }
                .accessibilityElement(children: .combine)
                .accessibilityIdentifier("tool-call.link")
            }
            if let card = call.card {
                VStack(alignment: .leading, spacing: 6) {
                    Text(card.text).font(.callout)
                    if let button = card.button {
                        ActionButton(button: button, act: act)
                    }
                }
                .padding(8)
                .background(.yellow.opacity(0.15), in: .rect(cornerRadius: 8))
                .accessibilityIdentifier("tool-call.card")
            }
            SwiftUI.Button(raw ? call.hideRawLabel : call.showRawLabel) { raw.toggle() }
                .font(.caption)
                .accessibilityIdentifier("tool-call.raw")
            if raw {
                Text(call.inputJson).font(.system(.caption, design: .monospaced))
                if let json = call.rawJson {
                    Text(json)
                        .font(.system(.caption, design: .monospaced))
                        .accessibilityIdentifier("tool-call.raw-json")
                }
            }
        }
        .accessibilityElement(children: .contain)
        .accessibilityIdentifier("tool-call.\(call.call)")
    }
}

/// The most pixels a side a tool's picture is decoded at: more than the chat draws it at
/// (240 points), far less than a header may claim.
private let maxPictureSide = 2048

/// A tool's picture through ImageIO with a bound: the header is read first and the picture is
/// decoded as a thumbnail at most `maxPictureSide` pixels on its longer side, so no header can
/// make the phone allocate what it claims (the core already refuses a picture over 4096 pixels
/// a side; this holds whatever reaches the shell). Nil for bytes ImageIO cannot read.
func boundedPicture(_ bytes: Data) -> UIImage? {
    let noCache = [kCGImageSourceShouldCache: false] as CFDictionary
    guard let source = CGImageSourceCreateWithData(bytes as CFData, noCache) else { return nil }
    let options = [
        kCGImageSourceCreateThumbnailFromImageAlways: true,
        kCGImageSourceCreateThumbnailWithTransform: true,
        kCGImageSourceShouldCacheImmediately: true,
        kCGImageSourceThumbnailMaxPixelSize: maxPictureSide,
    ] as CFDictionary
    guard let thumbnail = CGImageSourceCreateThumbnailAtIndex(source, 0, options) else { return nil }
    return UIImage(cgImage: thumbnail)
}
