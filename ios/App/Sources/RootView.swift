import Harness
import SwiftUI

/// The tabs from `navigation()`: their labels and the pending-memory badge come from the core.
struct RootView: View {
    let shell: Shell
    @State private var nav: ScreenStore<Navigation>
    @State private var firstRun: ScreenStore<FirstRunScreen>
    /// The conversation the chat tab shows: the one a tap opened, else the latest (`main` on a
    /// data directory with none).
    private var conversation: String {
        shell.router.conversation ?? ((try? shell.harness.latestConversation()) ?? "main")
    }

    init(shell: Shell) {
        self.shell = shell
        _nav = State(initialValue: ScreenStore(shell: shell) { try $0.navigation() })
        _firstRun = State(initialValue: ScreenStore(shell: shell) { try $0.firstRunScreen() })
    }

    var body: some View {
        Loaded(store: firstRun) { first in
            if let page = first.page {
                FirstRunView(shell: shell, page: page, act: firstRun.act)
            } else {
                tabs
            }
        }
    }

    @ViewBuilder
    private var tabs: some View {
        @Bindable var router = shell.router
        Loaded(store: nav) { navigation in
            TabView(selection: $router.selected) {
                ForEach(Array(navigation.items.enumerated()), id: \.offset) { _, item in
                    NavigationStack {
                        screen(item.route)
                    }
                    .tabItem { Text(item.label) }
                    .badge(Int(item.badge ?? 0))
                    .tag(item.route)
                    .accessibilityIdentifier("tab.\(item.route)")
                }
            }
        }
        // The 撤销 bar of each public call waiting out its window, over every tab; while it is
        // drawn the core holds such a call (`showUndo`), else it is sent at once.
        .safeAreaInset(edge: .bottom) { HeldCallsBar(shell: shell) }
        .onAppear { shell.harness.showUndo(shown: true) }
        .onDisappear { shell.harness.showUndo(shown: false) }
        // A screen that is not a tab (the campus account, Treehole's check).
        .sheet(item: $router.presented) { presented in
            NavigationStack { screen(presented.route) }
        }
        // The sheet shows while a question waits; only an answer or a withdrawal closes it.
        .sheet(item: Binding(get: { shell.approvals.current }, set: { _ in })) { pending in
            ApprovalSheetView(pending: pending, approvals: shell.approvals)
                .interactiveDismissDisabled()
        }
        // A remote server's question and sign-in sheet: only their own answers close them.
        .sheet(item: Binding(get: { shell.servers.question }, set: { _ in })) { question in
            QuestionSheetView(question: question, sheets: shell.servers)
                .interactiveDismissDisabled()
        }
        .sheet(item: Binding(get: { shell.servers.signIn }, set: { _ in })) { signIn in
            SignInSheetView(signIn: signIn, sheets: shell.servers)
                .interactiveDismissDisabled()
        }
    }

    @ViewBuilder
    private func screen(_ route: Route) -> some View {
        switch route {
        case .today: TodayView(shell: shell)
        case .pluginScreen:
            if let shown = shell.router.pluginScreen {
                PluginScreenView(shell: shell, shown: shown).id(shown)
            }
        case .chat: ChatView(shell: shell, conversation: conversation).id(conversation)
        case .conversations: ConversationListView(shell: shell)
        case .conversationSettings: ConversationSettingsView(shell: shell, conversation: conversation)
        case .plugins: PluginsView(shell: shell)
        case .memory: MemoryInboxView(shell: shell)
        case .jobs: JobsView(shell: shell)
        case .activity: ActivityView(shell: shell)
        case .allowances: AllowancesView(shell: shell)
        case .spending: SpendingView(shell: shell)
        case .cloud: CloudView(shell: shell)
        case .consent: ConsentView(shell: shell)
        case .model: ModelSettingsView(shell: shell)
        case .campusAccount: CampusAccountView(shell: shell)
        case .treeholeCheck: CampusCheckView(shell: shell, check: .treehole)
        case .gradesCheck: CampusCheckView(shell: shell, check: .grades)
        case .payCode: PayCodeView(shell: shell)
        case .rideCode: RideCodeView(shell: shell)
        case .more: MoreView(shell: shell, items: nav.model?.more ?? [])
        }
    }
}

/// What does not fit the bar (`navigation().more`), each a row that opens its screen.
struct MoreView: View {
    let shell: Shell
    let items: [NavItem]

    var body: some View {
        List(Array(items.enumerated()), id: \.offset) { _, item in
            NavigationLink(item.label) { destination(item.route) }
                .accessibilityIdentifier("more.\(item.route)")
        }
    }

    @ViewBuilder
    private func destination(_ route: Route) -> some View {
        switch route {
        case .consent: ConsentView(shell: shell)
        case .campusAccount: CampusAccountView(shell: shell)
        case .model: ModelSettingsView(shell: shell)
        case .activity: ActivityView(shell: shell)
        case .allowances: AllowancesView(shell: shell)
        case .spending: SpendingView(shell: shell)
        case .cloud: CloudView(shell: shell)
        case .treeholeCheck: CampusCheckView(shell: shell, check: .treehole)
        case .gradesCheck: CampusCheckView(shell: shell, check: .grades)
        default: EmptyView()
        }
    }
}

/// The 撤销 bar (`heldCallsScreen()`): each public call waiting out its undo window in the core's
/// words, with the tap that takes it back before anything is sent. Nothing while none waits.
struct HeldCallsBar: View {
    @State private var store: ScreenStore<[UndoBar]>

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.heldCallsScreen() })
    }

    var body: some View {
        VStack(spacing: 8) {
            ForEach(Array((store.model ?? []).enumerated()), id: \.offset) { index, bar in
                HStack {
                    Text(bar.text).frame(maxWidth: .infinity, alignment: .leading)
                    ActionButton(button: bar.undo, act: store.act)
                        .accessibilityIdentifier("held.\(index).undo")
                }
                .padding(12)
                .background(.regularMaterial, in: RoundedRectangle(cornerRadius: 12))
                // The window's end, for VoiceOver: the bar goes when the core says it ended.
                .accessibilityValue(Text(Date(timeIntervalSince1970: Double(bar.untilMs) / 1000), style: .timer))
            }
        }
        .padding(.horizontal, 12)
        .onAppear { store.appear() }
        .onDisappear { store.disappear() }
    }
}
