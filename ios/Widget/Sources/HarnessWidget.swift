import AppIntents
import Harness
import SwiftUI
import WidgetKit

/// The home-screen widgets (seed 004: "A widget reads it with host.useToolData"): one data
/// source per widget, read through the library opened on the app group's data directory (the
/// same data sources' cache as Today), laid out from the core's `WidgetModel` alone.
@main
struct HarnessWidgets: WidgetBundle {
    var body: some Widget {
        DataSourceWidget()
    }
}

/// An AppIntentConfiguration, not a StaticConfiguration: the student picks the source of each
/// widget from the core's `widgetSources()` when editing it; a new widget shows the campus
/// card's balance, Today's first tile, until then.
struct DataSourceWidget: Widget {
    var body: some WidgetConfiguration {
        AppIntentConfiguration(kind: "edu.pku.harness.data-source", intent: PickSource.self, provider: SourceTimeline()) { entry in
            SourceWidgetView(entry: entry)
        }
        .configurationDisplayName(LocalizedStringResource("widget.name"))
        .description(LocalizedStringResource("widget.description"))
        .supportedFamilies([.systemSmall, .systemMedium])
    }
}

/// The widget's configuration: which data source it shows.
struct PickSource: WidgetConfigurationIntent {
    static var title: LocalizedStringResource = "widget.pick"

    @Parameter(title: "widget.source")
    var source: SourceEntity?
}

/// A data source the core offers a widget (`WidgetSource`), by its title in the student's language.
struct SourceEntity: AppEntity {
    static var typeDisplayRepresentation: TypeDisplayRepresentation = "widget.source"
    static var defaultQuery = SourceQuery()

    let id: String
    let plugin: String
    let source: String
    let title: String

    init(_ offered: ShownSource) {
        id = "\(offered.plugin).\(offered.source)"
        plugin = offered.plugin
        source = offered.source
        title = offered.title
    }

    var displayRepresentation: DisplayRepresentation {
        DisplayRepresentation(title: "\(title)")
    }
}

/// The sources the configuration lists: the library's `widgetSources()`, or the list the app
/// left in the app group while it holds the library.
struct SourceQuery: EntityQuery {
    func entities(for identifiers: [String]) async throws -> [SourceEntity] {
        WidgetLibrary.offered().filter { identifiers.contains($0.id) }
    }

    func suggestedEntities() async throws -> [SourceEntity] {
        WidgetLibrary.offered()
    }

    /// A new widget's source: the campus card's balance, else the first offered.
    func defaultResult() async -> SourceEntity? {
        let offered = WidgetLibrary.offered()
        return offered.first(where: { $0.plugin == "wallet" && $0.source == "balance" }) ?? offered.first
    }
}

/// One widget's content at `date`: what the core said, or nil before anything was read.
struct SourceEntry: TimelineEntry {
    let date: Date
    let shown: WidgetShown?
}

/// Reads the widget's source through the library and asks WidgetKit to reload it after the
/// model's `refreshMs` (the source's TTL, never under 30 minutes: WidgetKit's budget, as
/// Android's floor); while the app holds the library, the last model the app left for it.
struct SourceTimeline: AppIntentTimelineProvider {
    /// When nothing could be read or was left: try again in 15 minutes.
    static let retryMs: UInt64 = 15 * 60_000

    func placeholder(in context: Context) -> SourceEntry {
        SourceEntry(date: Date(), shown: nil)
    }

    func snapshot(for configuration: PickSource, in context: Context) async -> SourceEntry {
        await entry(for: configuration)
    }

    func timeline(for configuration: PickSource, in context: Context) async -> Timeline<SourceEntry> {
        let entry = await entry(for: configuration)
        let after = entry.shown?.refreshMs ?? Self.retryMs
        return Timeline(entries: [entry], policy: .after(entry.date.addingTimeInterval(TimeInterval(after) / 1000)))
    }

    private func entry(for configuration: PickSource) async -> SourceEntry {
        let picked: SourceEntity?
        if let chosen = configuration.source {
            picked = chosen
        } else {
            picked = await SourceQuery().defaultResult()
        }
        guard let picked else {
            return SourceEntry(date: Date(), shown: nil)
        }
        WidgetStore.markShown(plugin: picked.plugin, source: picked.source, title: picked.title)
        if let shown = await WidgetLibrary.read(plugin: picked.plugin, source: picked.source) {
            WidgetStore.save(shown)
            return SourceEntry(date: Date(), shown: shown)
        }
        return SourceEntry(date: Date(), shown: WidgetStore.saved(plugin: picked.plugin, source: picked.source))
    }
}

/// The widget laid out from the core's words: the title, each line's label and value, the age;
/// or the message (登录后显示 while signed out) and no data. A tap opens the plugin's screen.
struct SourceWidgetView: View {
    let entry: SourceEntry

    var body: some View {
        VStack(alignment: .leading, spacing: 4) {
            if let shown = entry.shown {
                Text(shown.title)
                    .font(.headline)
                    .lineLimit(1)
                ForEach(shown.showsData ? shown.lines : [], id: \.self) { line in
                    HStack {
                        Text(line.label)
                            .foregroundStyle(.secondary)
                            .lineLimit(1)
                        Spacer()
                        Text(line.value)
                            .bold()
                            .lineLimit(1)
                    }
                    .font(.subheadline)
                }
                if let message = shown.message {
                    Text(message)
                        .font(.subheadline)
                        .foregroundStyle(.secondary)
                }
                Spacer(minLength: 0)
                if let age = shown.age {
                    Text(age)
                        .font(.caption)
                        .foregroundStyle(.tertiary)
                }
            } else {
                Spacer(minLength: 0)
            }
        }
        .frame(maxWidth: .infinity, maxHeight: .infinity, alignment: .topLeading)
        .containerBackground(.background, for: .widget)
        .widgetURL(entry.shown?.tapURL)
    }
}
