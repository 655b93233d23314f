import Foundation
import Harness
import WidgetKit

extension Shell {
    /// Leaves what each home-screen widget shows in the app group and asks WidgetKit to reload
    /// them: the app holds the data directory's lock while it lives, so the widget cannot read
    /// the library itself until the app's process ends (WidgetStore).
    func saveWidgets() async {
        if let offered = try? harness.widgetSources() {
            WidgetStore.saveOffered(offered.map(ShownSource.init))
        }
        for shown in WidgetStore.onHomeScreen() {
            if let model = try? await harness.widget(plugin: shown.plugin, source: shown.source) {
                WidgetStore.save(WidgetShown(model: model))
            }
        }
        WidgetCenter.shared.reloadAllTimelines()
    }

    /// A widget's tap (`WidgetShown.tapURL`): the model's `open` handed back to the core, whose
    /// answer names the screen, as a Today tile's tap does.
    func openFromWidget(_ url: URL) async {
        guard url.scheme == WidgetStore.tapScheme,
              let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems,
              let plugin = items.first(where: { $0.name == "plugin" })?.value,
              let source = items.first(where: { $0.name == "source" })?.value
        else { return }
        // The plugin was turned off or removed since: the app opens where it is.
        guard let acted = try? await act(.openDataSource(plugin: plugin, source: source)) else { return }
        let router = self.router
        await MainActor.run {
            switch acted {
            case .openPluginScreen(let plugin, let screen):
                router.showPluginScreen(plugin: plugin, screen: screen)
            case .openDataSource(let plugin, let source):
                router.showDataSource(plugin: plugin, source: source)
            default:
                break
            }
        }
    }
}
