import BackgroundTasks
import Harness
import SwiftUI
import UserNotifications

/// The background refresh the wake-up asks iOS for (listed in Info.plist's
/// BGTaskSchedulerPermittedIdentifiers by project.yml).
let wakeTaskIdentifier = "edu.pku.harness.wake"

@main
struct HarnessApp: App {
    @State private var app = AppModel.open()
    @Environment(\.scenePhase) private var scenePhase

    var body: some Scene {
        WindowGroup {
            Group {
                switch app.state {
                case .ready(let shell):
                    RootView(shell: shell)
                case .failed(let message):
                    // The core's own error text: nothing else can be said without the core.
                    Text(message).padding()
                }
            }
            // A home-screen widget's tap: the plugin's screen, as the core answers it.
            .onOpenURL { url in
                if case .ready(let shell) = app.state {
                    Task.detached { await shell.openFromWidget(url) }
                }
            }
        }
        .onChange(of: scenePhase) { _, phase in
            // An ask's notification is for when the app is not in front; in front, the sheet.
            if case .ready(let shell) = app.state {
                shell.alerts.inFront(phase == .active)
            }
            // iOS has no exact alarms: due jobs also run whenever the app comes to the front.
            if phase == .active, case .ready(let shell) = app.state {
                Task.detached { await shell.becameActive() }
            }
            // The widgets cannot read the library while the app lives: it leaves them theirs.
            if phase == .background, case .ready(let shell) = app.state {
                Task.detached { await shell.saveWidgets() }
            }
        }
        .backgroundTask(.appRefresh(wakeTaskIdentifier)) {
            if case .ready(let shell) = app.state {
                await shell.runDue()
            }
        }
    }
}

/// The one Harness of the app, or why it could not be opened; fixed at launch.
final class AppModel: Sendable {
    enum State {
        case ready(Shell)
        case failed(String)
    }

    let state: State

    private init(state: State) {
        self.state = state
    }

    @MainActor
    static func open() -> AppModel {
        do {
            return AppModel(state: .ready(try Shell.open(environment: ProcessInfo.processInfo.environment)))
        } catch {
            return AppModel(state: .failed(String(describing: error)))
        }
    }
}

/// The Harness, its Platform, the approval sheets and the router, shared by every screen.
final class Shell: @unchecked Sendable {
    let harness: Harness
    let platform: IOSPlatform
    let approvals: ApprovalCenter
    let servers: ServerSheets
    let router: Router
    let events: EventHub
    /// Posts an ask's notification while the app is not in front (the scene's phase says when).
    let alerts: ApprovalAlerts
    private let notifications: NotificationDelegate

    private init(harness: Harness, platform: IOSPlatform, approvals: ApprovalCenter, servers: ServerSheets, router: Router, events: EventHub) {
        self.harness = harness
        self.platform = platform
        self.approvals = approvals
        self.servers = servers
        self.router = router
        self.events = events
        self.alerts = ApprovalAlerts(platform: platform)
        self.notifications = NotificationDelegate()
    }

    /// Opens the Harness in the app group's container, where the home-screen widget reads it
    /// too (AppGroup.dataDirectory). The UI tests set the environment:
    /// HARNESS_RESET=1 starts from an empty data directory, HARNESS_SAMPLE_PLUGINS=1 installs the
    /// sample plugins and accepts the terms, HARNESS_MODEL_ENDPOINT / HARNESS_MODEL_NAME /
    /// HARNESS_API_KEY point the app at the tests' scripted model server, and
    /// HARNESS_OPEN_SCREEN opens a screen by its Platform.openScreen route.
    @MainActor
    static func open(environment: [String: String]) throws -> Shell {
        let dataDir = try AppGroup.dataDirectory()
        if environment["HARNESS_RESET"] == "1" {
            try? FileManager.default.removeItem(at: dataDir)
            Keychain.deleteAll()
        }
        try FileManager.default.createDirectory(at: dataDir, withIntermediateDirectories: true)

        let approvals = ApprovalCenter()
        let servers = ServerSheets()
        let router = Router()
        let platform = IOSPlatform(approvals: approvals, servers: servers, router: router)
        // The UI tests' app: the sample plugins and the campus simulator, which only a library
        // built with the development feature has (scripts/build-ios.sh --development).
        let development = environment["HARNESS_SAMPLE_PLUGINS"] == "1"
        let harness = development
            ? try Harness.openForDevelopment(
                dataDir: dataDir.path, platform: platform,
                options: DevelopmentOptions(samplePlugins: true, campusOrigin: environment["HARNESS_CAMPUS_ORIGIN"]))
            : try Harness.open(dataDir: dataDir.path, platform: platform)
        platform.attach(harness)
        // iOS has no exact alarms: say so once, so the jobs and consent screens tell the truth.
        try harness.reportCapabilities(capabilities: ["exact-alarm-unsupported"])
        try harness.reportPermission(permission: .exactAlarm, state: .denied)

        if development {
            // The UI tests' app: the terms accepted and the first run's other steps left for later.
            try harness.installSamplePlugins()
            try harness.acceptTerms()
            for step in [SetupStep.model, .campus, .notifications] {
                try harness.passSetupStep(step: step)
            }
        }
        if let endpoint = environment["HARNESS_MODEL_ENDPOINT"] {
            try harness.changeSetting(key: "model.endpoint", valueJson: jsonString(endpoint))
        }
        if let name = environment["HARNESS_MODEL_NAME"] {
            try harness.changeSetting(key: "model.name", valueJson: jsonString(name))
        }
        if let key = environment["HARNESS_API_KEY"] {
            try platform.writeSecret(key: "model.apiKey", value: key)
        }

        let events = EventHub()
        try events.start(harness: harness, approvals: approvals, servers: servers)
        let shell = Shell(harness: harness, platform: platform, approvals: approvals, servers: servers, router: router, events: events)
        shell.notifications.shell = shell
        try shell.alerts.start(harness: harness)
        UNUserNotificationCenter.current().delegate = shell.notifications
        router.routeFor = { [weak harness] screen in harness?.routeFor(screen: screen) }
        router.tabFor = { [weak harness] route in (try? harness?.tabFor(route: route)) ?? .chat }
        if let screen = environment["HARNESS_OPEN_SCREEN"] {
            router.open(screen: screen)
        }
        return shell
    }

    /// The app came to the front: the permission the user may have changed in Settings, then
    /// any job that fell due while iOS kept the app asleep.
    func becameActive() async {
        let settings = await UNUserNotificationCenter.current().notificationSettings()
        platform.notificationAuthorization = settings.authorizationStatus
        try? harness.refreshPermissions()
        await runDue()
    }

    /// Runs every job that is due now; the core arms the next wake-up itself.
    func runDue() async {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        _ = try? await harness.runDue(nowEpochMs: now)
        events.changed()
    }

    /// Performs a tap off the main actor and does what only the phone can.
    func act(_ action: Action) async throws -> Acted {
        let acted = try await harness.act(action: action)
        if case .shell(let effect) = acted {
            try await perform(effect)
        }
        events.changed()
        return acted
    }

    private func perform(_ effect: ShellEffect) async throws {
        switch effect {
        case .requestPermission(let permission):
            try await platform.requestAndReport(permission)
        case .openPermissionSettings(let permission):
            await platform.openSettings(for: permission)
        case .pickDocument(let conversation):
            await router.pickDocument(conversation: conversation)
        case .scanPairingQr(let title, let hint, let cameraDenied, let cancel):
            await router.scanPairingQr(words: PairingScanWords(title: title, hint: hint, cameraDenied: cameraDenied, cancel: cancel))
        case .openBrowser(let url):
            // Safari, outside the app: what is paid or signed there is the page's own.
            if let page = URL(string: url) {
                await UIApplication.shared.open(page)
            }
        }
    }
}

/// A JSON string literal for `changeSetting`.
func jsonString(_ text: String) -> String {
    let data = try? JSONSerialization.data(withJSONObject: [text], options: [])
    let array = data.flatMap { String(data: $0, encoding: .utf8) } ?? "[\"\"]"
    return String(array.dropFirst().dropLast())
}

/// The wake-up notification: tapping it, or its arrival while the app is open, runs due jobs.
final class NotificationDelegate: NSObject, UNUserNotificationCenterDelegate, @unchecked Sendable {
    weak var shell: Shell?

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse
    ) async {
        await shell?.runDue()
    }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification
    ) async -> UNNotificationPresentationOptions {
        if notification.request.identifier == wakeNotificationIdentifier {
            await shell?.runDue()
            return []
        }
        return [.banner, .list, .sound]
    }
}

/// When an ask's notification is posted (issue 41.3): while the app is not in front, each ask
/// waiting on the sheet posts the core's notice (`IOSPlatform.postApprovalNotice`: never the
/// inputs, its action only after unlock); answered, withdrawn, or the app back in front where
/// the sheet shows it, the notification goes. Nothing is posted without the permission.
final class ApprovalAlerts: EventListener, @unchecked Sendable {
    private let lock = NSLock()
    private let platform: IOSPlatform
    private var waiting: [UInt64: ApprovalNotice] = [:]
    private var posted: Set<UInt64> = []
    /// Not in front until the scene says it is active.
    private var front = false
    private var subscription: EventSubscription?

    init(platform: IOSPlatform) {
        self.platform = platform
    }

    func start(harness: Harness) throws {
        let subscription = try harness.subscribe(listener: self)
        lock.withLock { self.subscription = subscription }
    }

    private var allowed: Bool {
        [.authorized, .provisional, .ephemeral].contains(platform.notificationAuthorization)
    }

    /// The scene became active (true) or left the front (false).
    func inFront(_ shown: Bool) {
        let (post, remove) = lock.withLock { () -> ([(UInt64, ApprovalNotice)], [UInt64]) in
            front = shown
            if shown {
                defer { posted.removeAll() }
                return ([], Array(posted))
            }
            let post = waiting.filter { !posted.contains($0.key) }.map { ($0.key, $0.value) }
            posted.formUnion(post.map { $0.0 })
            return (post, [])
        }
        remove.forEach { platform.removeApprovalNotice(id: $0) }
        if allowed {
            post.forEach { platform.postApprovalNotice(id: $0.0, notice: $0.1) }
        }
    }

    func onEvent(event: HarnessEvent) throws {
        switch event {
        case .approvalRequested(let id, let prompt):
            guard let notice = prompt.notice else { return }
            let away = lock.withLock { () -> Bool in
                waiting[id] = notice
                if !front { posted.insert(id) }
                return !front
            }
            if away && allowed { platform.postApprovalNotice(id: id, notice: notice) }
        case .approvalAnswered(let id, _), .approvalWithdrawn(let id):
            let shown = lock.withLock { () -> Bool in
                waiting.removeValue(forKey: id)
                return posted.remove(id) != nil
            }
            if shown { platform.removeApprovalNotice(id: id) }
        default:
            break
        }
    }
}
