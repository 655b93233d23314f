import Foundation
import Harness

/// One line of a widget: the core's label and value.
struct ShownLine: Codable, Hashable {
    let label: String
    let value: String
}

/// A data source a widget may show, by the core's title (`WidgetSource`).
struct ShownSource: Codable, Hashable {
    let plugin: String
    let source: String
    let title: String

    init(plugin: String, source: String, title: String) {
        self.plugin = plugin
        self.source = source
        self.title = title
    }

    init(_ offered: WidgetSource) {
        self.init(plugin: offered.plugin, source: offered.source, title: offered.title)
    }
}

/// What a widget shows: the core's `WidgetModel` as it was read, every word the core's.
struct WidgetShown: Codable, Hashable {
    let plugin: String
    let source: String
    let title: String
    /// The model's state is `.shown`: anything else (signed out, nothing to show) shows
    /// `message` (登录后显示 while signed out) and no data.
    let showsData: Bool
    let lines: [ShownLine]
    let message: String?
    let age: String?
    /// The tap: the plugin and source of the model's `open` (`Action.openDataSource`).
    let opensPlugin: String?
    let opensSource: String?
    /// When WidgetKit reloads it: the source's TTL, never under 30 minutes.
    let refreshMs: UInt64

    init(model: WidgetModel) {
        plugin = model.plugin
        source = model.source
        title = model.title
        showsData = model.state == .shown
        lines = model.lines.map { ShownLine(label: $0.label, value: $0.value) }
        message = model.message
        age = model.age
        if case .openDataSource(let plugin, let source)? = model.open {
            opensPlugin = plugin
            opensSource = source
        } else {
            opensPlugin = nil
            opensSource = nil
        }
        refreshMs = model.refreshMs
    }

    /// The app's link a tap opens (`HarnessApp`'s onOpenURL hands it back to the core).
    var tapURL: URL? {
        guard let plugin = opensPlugin, let source = opensSource else { return nil }
        var link = URLComponents()
        link.scheme = WidgetStore.tapScheme
        link.host = "open-data-source"
        link.queryItems = [URLQueryItem(name: "plugin", value: plugin), URLQueryItem(name: "source", value: source)]
        return link.url
    }
}

/// The widgets' files in the app group. The core holds its data directory's lock for as long
/// as the app's process lives, suspended too, so the widget's own read of the library fails
/// while the app is alive: the app leaves what the widgets show here as it goes to the
/// background (`Shell.saveWidgets`), and the widget shows the last of it until it can read.
enum WidgetStore {
    /// The link scheme of a widget's tap (project.yml's CFBundleURLTypes).
    static let tapScheme = "edu.pku.harness.widget"

    private static var directory: URL? {
        guard let container = AppGroup.container else { return nil }
        let dir = container.appendingPathComponent("widgets", isDirectory: true)
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    private static func file(_ name: String) -> URL? {
        directory?.appendingPathComponent(name)
    }

    private static func write<T: Encodable>(_ value: T, to name: String) {
        guard let url = file(name), let data = try? JSONEncoder().encode(value) else { return }
        try? data.write(to: url, options: .atomic)
    }

    private static func read<T: Decodable>(_ type: T.Type, from name: String) -> T? {
        guard let url = file(name), let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }

    private static func key(plugin: String, source: String) -> String {
        "shown-\(plugin).\(source).json"
    }

    static func save(_ shown: WidgetShown) {
        write(shown, to: key(plugin: shown.plugin, source: shown.source))
    }

    static func saved(plugin: String, source: String) -> WidgetShown? {
        read(WidgetShown.self, from: key(plugin: plugin, source: source))
    }

    /// The sources the configuration lists when the library cannot be opened.
    static func saveOffered(_ offered: [ShownSource]) {
        write(offered, to: "offered.json")
    }

    static func offered() -> [ShownSource] {
        read([ShownSource].self, from: "offered.json") ?? []
    }

    /// The sources the widgets on the home screen show, which the app reads for them.
    static func markShown(plugin: String, source: String, title: String) {
        var shown = read([ShownSource].self, from: "on-home-screen.json") ?? []
        if !shown.contains(where: { $0.plugin == plugin && $0.source == source }) {
            shown.append(ShownSource(plugin: plugin, source: source, title: title))
            write(shown, to: "on-home-screen.json")
        }
    }

    static func onHomeScreen() -> [ShownSource] {
        read([ShownSource].self, from: "on-home-screen.json") ?? []
    }
}
