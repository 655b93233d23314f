import Foundation
import Harness
import Observation

/// The approval sheets the core is waiting on. The core's question stays suspended in a
/// CheckedContinuation until the user taps one of the sheet's answers; a cancelled question
/// (the turn stopped, the prompt withdrawn) resumes with Deny and its sheet closes.
@MainActor
@Observable
final class ApprovalCenter {
    struct Pending: Identifiable {
        let id: UInt64
        let sheet: ApprovalSheet
    }

    /// The oldest question is shown; the others wait behind it.
    private(set) var queue: [Pending] = []
    @ObservationIgnored private var waiting: [UInt64: CheckedContinuation<Answer, Never>] = [:]

    var current: Pending? { queue.first }

    nonisolated init() {}

    nonisolated func ask(id: UInt64, sheet: ApprovalSheet) async -> Answer {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                Task { @MainActor in self.enqueue(id: id, sheet: sheet, continuation) }
            }
        } onCancel: {
            Task { @MainActor in self.finish(id: id, with: .deny) }
        }
    }

    private func enqueue(id: UInt64, sheet: ApprovalSheet, _ continuation: CheckedContinuation<Answer, Never>) {
        if waiting[id] != nil || queue.contains(where: { $0.id == id }) {
            continuation.resume(returning: .deny)
            return
        }
        waiting[id] = continuation
        queue.append(Pending(id: id, sheet: sheet))
    }

    /// The user's tap (one of `sheet.answers`), a withdrawal, or a cancellation: each question
    /// is resumed exactly once, and a cancellation that arrives before the sheet is a no-op.
    func finish(id: UInt64, with answer: Answer) {
        queue.removeAll { $0.id == id }
        waiting.removeValue(forKey: id)?.resume(returning: answer)
    }
}

/// Which tab is shown, the document picker's pending conversation, and Platform.openScreen.
@MainActor
@Observable
final class Router {
    /// The bar's first tab, Today (the core's `navigation().items`), is where the app opens.
    var selected: Route = .today
    /// The plugin's declared screen `.pluginScreen` shows: its plugin and screen ids.
    var pluginScreen: PluginScreenRef?
    /// The conversation the chat shows: the core's latest until a tap opens another.
    var conversation: String?
    /// A screen that is not in the bar (the campus account, Treehole's check, what More
    /// lists), shown over the tabs when the core or a tap opens it.
    var presented: Presented?
    /// Set while the file importer is open for a conversation (after the attach button's tap).
    var pickingFor: String?
    /// Set while 云端's 扫码加入 scanner is open (`ShellEffect.scanPairingQr`), with its words.
    var scanning: PairingScanWords?
    @ObservationIgnored var routeFor: ((String) -> Route?)?
    /// The bar item a route is shown under (the core's `tabFor`).
    @ObservationIgnored var tabFor: ((Route) -> Route)?

    nonisolated init() {}

    func open(screen: String) {
        if let route = routeFor?(screen) {
            show(route)
        }
    }

    /// Shows `route`: its tab, or over the tabs when it has none in the bar.
    func show(_ route: Route) {
        if tabFor?(route) == route {
            selected = route
        } else {
            presented = Presented(route: route)
        }
    }

    /// Shows a plugin's declared screen a tap asked for (`Acted.openPluginScreen`).
    func showPluginScreen(plugin: String, screen: String) {
        pluginScreen = PluginScreenRef(plugin: plugin, screen: screen, source: nil)
        show(.pluginScreen)
    }

    /// Shows a data source no declared screen shows, a tap asked for (`Acted.openDataSource`).
    func showDataSource(plugin: String, source: String) {
        pluginScreen = PluginScreenRef(plugin: plugin, screen: "", source: source)
        show(.pluginScreen)
    }

    func pickDocument(conversation: String) {
        pickingFor = conversation
    }

    func scanPairingQr(words: PairingScanWords) {
        scanning = words
    }
}

/// Which plugin's declared screen is shown, or which of its data sources (`source`) when no
/// declared screen shows it.
struct PluginScreenRef: Hashable {
    let plugin: String
    let screen: String
    let source: String?
}

/// A route shown as a sheet.
struct Presented: Identifiable {
    let route: Route
    var id: String { String(describing: route) }
}

/// The core's events: approvals withdrawn close their sheet, and every event makes the stores
/// on screen read their model again (coalesced: one re-read per burst).
final class EventHub: EventListener, @unchecked Sendable {
    private let lock = NSLock()
    private var subscription: EventSubscription?
    private weak var approvals: ApprovalCenter?
    private weak var servers: ServerSheets?
    private var stores: [UUID: () -> Void] = [:]
    private var scheduled = false

    func start(harness: Harness, approvals: ApprovalCenter, servers: ServerSheets) throws {
        self.approvals = approvals
        self.servers = servers
        let subscription = try harness.subscribe(listener: self)
        lock.withLock { self.subscription = subscription }
    }

    func onEvent(event: HarnessEvent) throws {
        if case .approvalWithdrawn(let id) = event, let approvals {
            Task { @MainActor in approvals.finish(id: id, with: .deny) }
        }
        // A server's question whose call stopped waiting shares the approvals' ids.
        if case .approvalWithdrawn(let id) = event, let servers {
            Task { @MainActor in servers.withdraw(id: id) }
        }
        changed()
    }

    /// Something changed in the core: every store on screen re-reads, once per burst.
    func changed() {
        let first = lock.withLock { () -> Bool in
            defer { scheduled = true }
            return !scheduled
        }
        guard first else { return }
        Task { @MainActor in
            try? await Task.sleep(for: .milliseconds(50))
            let reloads = self.lock.withLock { () -> [() -> Void] in
                self.scheduled = false
                return Array(self.stores.values)
            }
            for reload in reloads { reload() }
        }
    }

    func register(_ id: UUID, reload: @escaping () -> Void) {
        lock.withLock { stores[id] = reload }
    }

    func unregister(_ id: UUID) {
        lock.withLock { _ = stores.removeValue(forKey: id) }
    }
}

/// One screen's store: reads the screen's model whole, re-reads after every tap and on every
/// event, and performs taps off the main actor. Errors are the core's own text.
@MainActor
@Observable
final class ScreenStore<Model> {
    private(set) var model: Model?
    private(set) var error: String?
    /// A tap's result the screen shows next (the add-plugin preview).
    var preview: AddPluginScreen?
    @ObservationIgnored let shell: Shell
    @ObservationIgnored private let read: (Harness) async throws -> Model
    @ObservationIgnored private let id = UUID()

    init(shell: Shell, read: @escaping (Harness) async throws -> Model) {
        self.shell = shell
        self.read = read
    }

    /// Starts following the core's events while the screen is visible.
    func appear() {
        shell.events.register(id) { [weak self] in self?.reload() }
        reload()
    }

    func disappear() {
        shell.events.unregister(id)
    }

    func reload() {
        Task { await load() }
    }

    /// Reads the model now (a screen that reads from a service, the pay code, waits for it).
    func load() async {
        do {
            model = try await read(shell.harness)
        } catch {
            self.error = String(describing: error)
        }
    }

    /// A tap: the Action from the model's Button or Choice, or built from typed text.
    func act(_ action: Action) {
        let shell = self.shell
        Task {
            do {
                let acted = try await Task.detached { try await shell.act(action) }.value
                error = nil
                switch acted {
                case .preview(let screen): preview = screen
                case .open(let route): shell.router.show(route)
                case .openConversation(let conversation):
                    shell.router.conversation = conversation
                    shell.router.show(.chat)
                case .openPluginScreen(let plugin, let screen):
                    shell.router.showPluginScreen(plugin: plugin, screen: screen)
                case .openDataSource(let plugin, let source):
                    shell.router.showDataSource(plugin: plugin, source: source)
                default: break
                }
            } catch {
                self.error = String(describing: error)
            }
            reload()
        }
    }
}

/// A remote server's sheets the core is waiting on: its question while its tool runs, and the
/// sheet before its sign-in page opens. Each waits in a CheckedContinuation until the student
/// taps; a cancelled wait (the turn stopped) resumes with Cancel and its sheet closes.
@MainActor
@Observable
final class ServerSheets {
    struct Question: Identifiable {
        let id: UInt64
        let sheet: ElicitationSheet
    }

    struct SignIn: Identifiable {
        let id = UUID()
        let sheet: SignInSheet
    }

    private(set) var question: Question?
    private(set) var signIn: SignIn?
    @ObservationIgnored private var replying: CheckedContinuation<ElicitationReply, Never>?
    @ObservationIgnored private var going: CheckedContinuation<Bool, Never>?

    nonisolated init() {}

    nonisolated func ask(id: UInt64, sheet: ElicitationSheet) async -> ElicitationReply {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                Task { @MainActor in
                    self.replying?.resume(returning: ElicitationReply(action: .cancel, values: []))
                    self.replying = continuation
                    self.question = Question(id: id, sheet: sheet)
                }
            }
        } onCancel: {
            Task { @MainActor in self.reply(ElicitationReply(action: .cancel, values: [])) }
        }
    }

    /// The core stopped waiting for question `id` (its call's turn stopped): it closes.
    func withdraw(id: UInt64) {
        if question?.id == id {
            reply(ElicitationReply(action: .cancel, values: []))
        }
    }

    /// The student's tap on the question's sheet, with what they typed.
    func reply(_ reply: ElicitationReply) {
        question = nil
        replying?.resume(returning: reply)
        replying = nil
    }

    nonisolated func confirm(sheet: SignInSheet) async -> Bool {
        await withCheckedContinuation { continuation in
            Task { @MainActor in
                self.going?.resume(returning: false)
                self.going = continuation
                self.signIn = SignIn(sheet: sheet)
            }
        }
    }

    /// Continue (`go`) or Cancel on the sign-in sheet.
    func answerSignIn(go: Bool) {
        signIn = nil
        going?.resume(returning: go)
        going = nil
    }
}
