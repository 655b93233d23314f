// swift-tools-version:5.9
// The Swift shell's package: the Rust core as an xcframework (module HarnessFFI), the generated
// Swift bindings (module Harness), and a thin hand-written layer (module HarnessShell).
//
// scripts/build-ios.sh (macOS with Xcode) builds HarnessFFI.xcframework beside this file and
// copies the generated Harness.swift and HarnessCore.swift into Sources/Harness; none of them
// is committed.
import PackageDescription

let package = Package(
    name: "Harness",
    platforms: [.iOS(.v15)],
    products: [
        .library(name: "Harness", targets: ["Harness", "HarnessShell"]),
    ],
    targets: [
        // The static libraries for iOS devices and the simulator, with HarnessFFI.h,
        // HarnessCoreFFI.h and their one module map.
        .binaryTarget(name: "HarnessFFI", path: "HarnessFFI.xcframework"),
        // UniFFI's generated Swift: the Harness object, the Platform protocol, records, enums
        // (Harness.swift), and the core's records and enums that cross as they are, the screen
        // models among them (HarnessCore.swift).
        .target(name: "Harness", dependencies: ["HarnessFFI"], path: "Sources/Harness", exclude: ["README.md"]),
        // Async helpers over the generated API for SwiftUI shells.
        .target(name: "HarnessShell", dependencies: ["Harness"], path: "Sources/HarnessShell"),
    ]
)
