import Foundation
import Harness

/// The library in the widget's process, opened on the app group's data directory for one read
/// and let go after it: the core locks its data directory for as long as a Harness is open,
/// and the app's own open must not find it held by the widget.
enum WidgetLibrary {
    /// The source's model read through the core, or nil when the library cannot be opened now
    /// (the app holds it) or the read failed.
    static func read(plugin: String, source: String) async -> WidgetShown? {
        guard let harness = open() else { return nil }
        guard let model = try? await harness.widget(plugin: plugin, source: source) else { return nil }
        return WidgetShown(model: model)
    }

    /// The sources a widget may show: the core's, else those the app left in the app group.
    static func offered() -> [SourceEntity] {
        if let harness = open(), let offered = try? harness.widgetSources() {
            let sources = offered.map(ShownSource.init)
            WidgetStore.saveOffered(sources)
            return sources.map(SourceEntity.init)
        }
        return WidgetStore.offered().map(SourceEntity.init)
    }

    private static func open() -> Harness? {
        guard let dataDir = try? AppGroup.dataDirectory() else { return nil }
        return try? Harness.open(dataDir: dataDir.path, platform: WidgetPlatform())
    }
}

/// The Platform of the widget's library: it only reads a data source through the cache, so it
/// asks nothing, posts nothing and arms nothing (the app's own wake-up stays as the app armed
/// it); the campus sessions are read and renewed in the Keychain the app shares.
final class WidgetPlatform: Platform, @unchecked Sendable {
    func askApproval(id: UInt64, prompt: ApprovalPrompt) async throws -> Answer {
        // A widget's read never asks; anything that would is declined (fail closed).
        .deny
    }

    func postNotification(notification: AppNotification) throws {}

    func armWakeUp(atEpochMs: Int64, exact: Bool) throws {}

    func cancelWakeUp() throws {}

    func openScreen(route: String) throws {}

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

    func permissionState(permission: Permission) throws -> PermissionState {
        .unknown
    }

    func signIn(sheet: SignInSheet, redirectUri: String) async throws -> String {
        throw HarnessError.Platform(reason: "a widget cannot sign in")
    }

    func askElicitation(id: UInt64, sheet: ElicitationSheet) async throws -> ElicitationReply {
        throw HarnessError.Platform(reason: "a widget cannot answer a question")
    }

    func pickFile(pluginTitle: String) async throws -> PickedDocument? {
        nil
    }

    func requestPermission(permission: Permission) async throws -> PermissionState {
        .unknown
    }
}
