import Foundation

/// What the app and its home-screen widget share (project.yml gives both the app group): the
/// core's data directory, so the widget reads the same data sources' cache through the library,
/// and the Keychain items the campus sessions are kept in.
enum AppGroup {
    static let identifier = "group.edu.pku.harness"

    /// The group's container; nil only when the entitlement is missing from the build.
    static var container: URL? {
        FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: identifier)
    }

    /// The core's data directory in the group's container, made when missing. A data directory
    /// an earlier build kept in the app's own Application Support is moved here once.
    static func dataDirectory() throws -> URL {
        guard let container else {
            throw HarnessDirectoryError.noAppGroup
        }
        let dataDir = container.appendingPathComponent("harness", isDirectory: true)
        let files = FileManager.default
        if !files.fileExists(atPath: dataDir.path),
           let support = try? files.url(for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: false) {
            let earlier = support.appendingPathComponent("harness", isDirectory: true)
            if files.fileExists(atPath: earlier.path) {
                try files.moveItem(at: earlier, to: dataDir)
            }
        }
        try files.createDirectory(at: dataDir, withIntermediateDirectories: true)
        return dataDir
    }
}

enum HarnessDirectoryError: Error, CustomStringConvertible {
    case noAppGroup

    var description: String {
        "the app group \(AppGroup.identifier) is not in this build's entitlements (ios/project.yml)"
    }
}
