import AuthenticationServices
import BackgroundTasks
import Foundation
import Harness
import Security
import UIKit
import UniformTypeIdentifiers
import UserNotifications

/// The identifier of the one armed wake-up notification; arming replaces it.
let wakeNotificationIdentifier = "harness-wake"
/// The category of an ask's notification: its one action opens the sheet after unlock.
let approvalCategory = "harness-approval"

/// What the core asks of the phone (the `Platform` of the bindings): approval sheets, the
/// Keychain, notifications and the wake-up, and the file picker and permission prompt a plugin's
/// tool the student tapped opens. The core never calls it while holding a lock.
final class IOSPlatform: Platform, @unchecked Sendable {
    private let approvals: ApprovalCenter
    private let servers: ServerSheets
    private let router: Router
    private let lock = NSLock()
    private weak var harness: Harness?
    private var authorization: UNAuthorizationStatus = .notDetermined

    init(approvals: ApprovalCenter, servers: ServerSheets, router: Router) {
        self.approvals = approvals
        self.servers = servers
        self.router = router
    }

    /// The Harness this platform serves, for the wake-up's text (read from the jobs screen).
    func attach(_ harness: Harness) {
        lock.withLock { self.harness = harness }
    }

    /// The notification authorization last read from the system: `permissionState` is
    /// synchronous and must not wait on the notification center.
    var notificationAuthorization: UNAuthorizationStatus {
        get { lock.withLock { authorization } }
        set { lock.withLock { authorization = newValue } }
    }

    // ---- approvals

    func askApproval(id: UInt64, prompt: ApprovalPrompt) async throws -> Answer {
        guard let sheet = prompt.sheet else {
            // Fail closed: without the core's sheet there is nothing to show the user.
            return .deny
        }
        return await approvals.ask(id: id, sheet: sheet)
    }

    // ---- remote servers: a sign-in, a question

    /// The sign-in sheet, then the page in ASWebAuthenticationSession, which hands back the
    /// address the authorization server sent the browser to (the app's link, `redirectUri`).
    func signIn(sheet: SignInSheet, redirectUri: String) async throws -> String {
        guard await servers.confirm(sheet: sheet) else {
            throw HarnessError.Platform(reason: "you cancelled the sign-in")
        }
        guard let page = URL(string: sheet.page), let scheme = URL(string: redirectUri)?.scheme else {
            throw HarnessError.Platform(reason: "the sign-in page is not an address")
        }
        let back: URL = try await withCheckedThrowingContinuation { continuation in
            Task { @MainActor in
                let session = ASWebAuthenticationSession(url: page, callbackURLScheme: scheme) { url, error in
                    if let url {
                        continuation.resume(returning: url)
                    } else {
                        continuation.resume(throwing: HarnessError.Platform(reason: "the sign-in was not finished (\(error.map { String(describing: $0) } ?? "no answer"))"))
                    }
                }
                session.presentationContextProvider = WindowAnchor.shared
                session.start()
            }
        }
        return back.absoluteString
    }

    /// A remote server's question on its sheet; a page the student chose to open is opened.
    func askElicitation(id: UInt64, sheet: ElicitationSheet) async throws -> ElicitationReply {
        let reply = await servers.ask(id: id, sheet: sheet)
        if reply.action == .accept, let page = sheet.page, let url = URL(string: page.url) {
            await MainActor.run { UIApplication.shared.open(url) }
        }
        return reply
    }

    // ---- notifications and the wake-up

    func postNotification(notification: AppNotification) throws {
        let content = UNMutableNotificationContent()
        content.title = notification.title
        content.body = notification.body
        content.sound = .default
        if let plugin = notification.plugin {
            content.threadIdentifier = plugin
        }
        // The id is stable per job, so a later run's notification replaces the earlier one.
        let request = UNNotificationRequest(identifier: notification.id, content: content, trigger: nil)
        UNUserNotificationCenter.current().add(request)
    }

    /// An ask's notification while the app is not in front: the core's words (the plugin and
    /// tool, never the call's inputs), and one action that opens the sheet only after the
    /// phone is unlocked (`.authenticationRequired`). It never carries an answer.
    func postApprovalNotice(id: UInt64, notice: ApprovalNotice) {
        let center = UNUserNotificationCenter.current()
        let open = UNNotificationAction(
            identifier: "approval.open", title: notice.body,
            options: [.authenticationRequired, .foreground])
        center.setNotificationCategories([
            UNNotificationCategory(
                identifier: approvalCategory, actions: [open], intentIdentifiers: [],
                options: [.hiddenPreviewsShowTitle])
        ])
        let content = UNMutableNotificationContent()
        content.title = notice.title
        content.body = notice.body
        content.categoryIdentifier = approvalCategory
        center.add(UNNotificationRequest(identifier: "approval-\(id)", content: content, trigger: nil))
    }

    /// The ask was answered or withdrawn: its notification goes.
    func removeApprovalNotice(id: UInt64) {
        UNUserNotificationCenter.current().removeDeliveredNotifications(withIdentifiers: ["approval-\(id)"])
    }

    /// iOS has no exact alarms, whatever `exact` says: a local notification at the due time
    /// (tapping it, or its arrival with the app open, runs due jobs) plus a background refresh
    /// no earlier than then; the app also runs due jobs whenever it becomes active.
    func armWakeUp(atEpochMs: Int64, exact: Bool) throws {
        let due = Date(timeIntervalSince1970: TimeInterval(atEpochMs) / 1000)
        let center = UNUserNotificationCenter.current()
        center.removePendingNotificationRequests(withIdentifiers: [wakeNotificationIdentifier])
        if let content = wakeContent() {
            let trigger = UNTimeIntervalNotificationTrigger(
                timeInterval: max(1, due.timeIntervalSinceNow), repeats: false)
            center.add(UNNotificationRequest(identifier: wakeNotificationIdentifier, content: content, trigger: trigger))
        }
        BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: wakeTaskIdentifier)
        let refresh = BGAppRefreshTaskRequest(identifier: wakeTaskIdentifier)
        refresh.earliestBeginDate = due
        do {
            try BGTaskScheduler.shared.submit(refresh)
        } catch {
            throw HarnessError.Platform(reason: "iOS refused the background refresh for the next job (\(error)); due jobs still run when the app opens")
        }
    }

    func cancelWakeUp() throws {
        UNUserNotificationCenter.current().removePendingNotificationRequests(withIdentifiers: [wakeNotificationIdentifier])
        BGTaskScheduler.shared.cancel(taskRequestWithIdentifier: wakeTaskIdentifier)
    }

    /// The wake-up's words come from the core: the jobs screen's title, and the jobs that have
    /// a next run. None when notifications are off (the request would be dropped anyway).
    private func wakeContent() -> UNMutableNotificationContent? {
        guard notificationAuthorization == .authorized || notificationAuthorization == .provisional,
              let harness = lock.withLock({ self.harness }),
              let jobs = try? harness.jobsScreen()
        else { return nil }
        let content = UNMutableNotificationContent()
        content.title = jobs.title
        content.body = jobs.jobs.filter { !$0.nextRun.isEmpty }.map(\.name).joined(separator: "\n")
        content.sound = .default
        return content
    }

    // ---- screens

    func openScreen(route: String) throws {
        let router = self.router
        Task { @MainActor in router.open(screen: route) }
    }

    // ---- the Keychain

    func readSecret(key: String) throws -> String? {
        try Keychain.read(key)
    }

    func writeSecret(key: String, value: String?) throws {
        if let value {
            try Keychain.write(key, value)
        } else {
            try Keychain.delete(key)
        }
    }

    // ---- permissions

    func permissionState(permission: Permission) throws -> PermissionState {
        switch permission {
        case .notifications:
            switch notificationAuthorization {
            case .authorized, .provisional, .ephemeral: return .granted
            case .denied: return .denied
            case .notDetermined: return .unknown
            @unknown default: return .unknown
            }
        case .exactAlarm:
            // iOS has none; the capability `exact-alarm-unsupported` keeps the screens honest.
            return .denied
        }
    }

    /// The system's prompt, shown only because the user tapped (ShellEffect.requestPermission),
    /// then its answer reported to the core.
    func requestAndReport(_ permission: Permission) async throws {
        guard let harness = lock.withLock({ self.harness }) else { return }
        let state = try await requestPermission(permission: permission)
        try harness.reportPermission(permission: permission, state: state)
    }

    /// The system's prompt for `permission` and what the system says after it: for a plugin's
    /// tool the student tapped (its `notify.fix`), the core records it; for the app's own
    /// screens, `requestAndReport` reports it. iOS has no exact alarms: denied, as
    /// `permissionState` says.
    func requestPermission(permission: Permission) async throws -> PermissionState {
        switch permission {
        case .notifications:
            let center = UNUserNotificationCenter.current()
            _ = try? await center.requestAuthorization(options: [.alert, .sound, .badge])
            notificationAuthorization = await center.notificationSettings().authorizationStatus
            return try permissionState(permission: .notifications)
        case .exactAlarm:
            return .denied
        }
    }

    // ---- a plugin's tool the student tapped: the file picker

    /// The most of a picked file read: one byte past the core's bound on a file it reads
    /// (harness_core::picked::FILE_BYTES, 16 MiB), so a larger one is never read whole and the
    /// core refuses it by its size in the student's words (as the chat's picker does).
    private static let pickedFileBytes = (16 << 20) + 1

    /// The system's document picker for a plugin's tool the student tapped (its `files.pick`),
    /// offering what the chat's picker offers (text, Markdown, PDF); the file picked, or nil when
    /// the student cancels. The core reads the bytes by the documents' rule.
    func pickFile(pluginTitle: String) async throws -> PickedDocument? {
        guard let url = try await DocumentPicker.pick() else { return nil }
        let scoped = url.startAccessingSecurityScopedResource()
        defer { if scoped { url.stopAccessingSecurityScopedResource() } }
        let name = url.lastPathComponent
        do {
            let file = try FileHandle(forReadingFrom: url)
            defer { try? file.close() }
            // nil at once is an empty file, handed on as one.
            let data = try file.read(upToCount: Self.pickedFileBytes) ?? Data()
            return PickedDocument(name: name, bytes: data)
        } catch {
            throw HarnessError.Platform(reason: "\"\(name)\" cannot be read (\(error.localizedDescription))")
        }
    }

    @MainActor
    func openSettings(for permission: Permission) async {
        let address = permission == .notifications
            ? UIApplication.openNotificationSettingsURLString
            : UIApplication.openSettingsURLString
        if let url = URL(string: address) {
            await UIApplication.shared.open(url)
        }
    }
}

/// The system's document picker over the app's front screen, opened in place (not copied, so
/// that a huge file is never copied whole): the one file picked, or nil when cancelled.
@MainActor
final class DocumentPicker: NSObject, UIDocumentPickerDelegate {
    /// What the chat's picker offers (ChatView's fileImporter); the core decides what it takes.
    private static let types = [UTType.plainText, UTType("net.daringfireball.markdown") ?? .plainText, .pdf]

    private var answer: CheckedContinuation<URL?, Never>?
    /// Itself while shown: the picker holds its delegate weakly.
    private var shown: DocumentPicker?

    static func pick() async throws -> URL? {
        guard let front = WindowAnchor.frontViewController() else {
            throw HarnessError.Platform(reason: "no screen of the app is open to show the file picker on")
        }
        return await DocumentPicker().show(over: front)
    }

    private func show(over front: UIViewController) async -> URL? {
        await withCheckedContinuation { continuation in
            answer = continuation
            shown = self
            let picker = UIDocumentPickerViewController(forOpeningContentTypes: Self.types, asCopy: false)
            picker.allowsMultipleSelection = false
            picker.delegate = self
            front.present(picker, animated: true)
        }
    }

    func documentPicker(_ controller: UIDocumentPickerViewController, didPickDocumentsAt urls: [URL]) {
        finish(urls.first)
    }

    func documentPickerWasCancelled(_ controller: UIDocumentPickerViewController) {
        finish(nil)
    }

    private func finish(_ url: URL?) {
        answer?.resume(returning: url)
        answer = nil
        shown = nil
    }
}

/// The window ASWebAuthenticationSession presents over.
final class WindowAnchor: NSObject, ASWebAuthenticationPresentationContextProviding {
    static let shared = WindowAnchor()

    func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
        let scenes = UIApplication.shared.connectedScenes.compactMap { $0 as? UIWindowScene }
        return scenes.flatMap(\.windows).first { $0.isKeyWindow } ?? ASPresentationAnchor()
    }

    /// The screen in front in the key window (the last one presented), to present a picker over.
    @MainActor
    static func frontViewController() -> UIViewController? {
        let scenes = UIApplication.shared.connectedScenes.compactMap { $0 as? UIWindowScene }
        var front = scenes.flatMap(\.windows).first { $0.isKeyWindow }?.rootViewController
        while let presented = front?.presentedViewController {
            front = presented
        }
        return front
    }
}
