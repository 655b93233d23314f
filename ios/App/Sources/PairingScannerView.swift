import AVFoundation
import Harness
import SwiftUI
import UIKit

/// The core's words for 云端's 扫码加入 scanner (`ShellEffect.scanPairingQr`).
struct PairingScanWords: Identifiable {
    let title: String
    let hint: String
    let cameraDenied: String
    let cancel: String
    var id: String { title }
}

/// 扫码加入: the back camera through AVCaptureSession, its AVCaptureMetadataOutput reading QR
/// codes; each code's text goes to the core (`Action.cloudJoinScanned`), which decides: joined
/// (the sheet closes) or refused (its words under the camera, and the camera keeps looking; the
/// core answers the same refused code again without asking the server). The camera permission
/// is asked here, the first time the student taps 扫码加入 (Info.plist's NSCameraUsageDescription).
struct PairingScannerView: View {
    let words: PairingScanWords
    let shell: Shell
    @Environment(\.dismiss) private var dismiss
    @State private var allowed: Bool?
    @State private var refused: String?
    @State private var joining = false

    var body: some View {
        NavigationStack {
            VStack(alignment: .leading, spacing: 12) {
                Text(words.hint)
                switch allowed {
                case .some(true):
                    QRCameraView { join($0) }
                        .aspectRatio(3.0 / 4.0, contentMode: .fit)
                        .accessibilityIdentifier("scan.camera")
                case .some(false):
                    Text(words.cameraDenied).foregroundStyle(.red)
                        .accessibilityIdentifier("scan.denied")
                case .none:
                    ProgressView()
                }
                if let refused {
                    Text(refused).foregroundStyle(.red).accessibilityIdentifier("scan.refused")
                }
                Spacer()
            }
            .padding()
            .navigationTitle(words.title)
            .toolbar {
                ToolbarItem(placement: .cancellationAction) {
                    SwiftUI.Button(words.cancel) { dismiss() }
                }
            }
        }
        .task {
            switch AVCaptureDevice.authorizationStatus(for: .video) {
            case .authorized: allowed = true
            case .notDetermined: allowed = await AVCaptureDevice.requestAccess(for: .video)
            default: allowed = false
            }
        }
    }

    /// One code's text to the core; a second code while one is being joined waits its turn.
    private func join(_ payload: String) {
        guard !joining else { return }
        joining = true
        let shell = self.shell
        Task {
            do {
                _ = try await Task.detached { try await shell.act(.cloudJoinScanned(payload: payload)) }.value
                dismiss()
            } catch {
                refused = String(describing: error)
            }
            joining = false
        }
    }
}

/// The camera's picture with a QR reader on it: each code's text, as AVFoundation reads it.
private struct QRCameraView: UIViewControllerRepresentable {
    let found: (String) -> Void

    func makeUIViewController(context: Context) -> QRCameraController {
        QRCameraController(found: found)
    }

    func updateUIViewController(_ controller: QRCameraController, context: Context) {
        controller.found = found
    }
}

private final class QRCameraController: UIViewController, AVCaptureMetadataOutputObjectsDelegate {
    var found: (String) -> Void
    private let session = AVCaptureSession()
    private var preview: AVCaptureVideoPreviewLayer?
    /// AVCaptureSession's start and stop block: off the main thread.
    private let queue = DispatchQueue(label: "edu.pku.harness.scan")

    init(found: @escaping (String) -> Void) {
        self.found = found
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) { nil }

    override func viewDidLoad() {
        super.viewDidLoad()
        guard let camera = AVCaptureDevice.default(for: .video),
              let input = try? AVCaptureDeviceInput(device: camera),
              session.canAddInput(input) else { return }
        session.addInput(input)
        let output = AVCaptureMetadataOutput()
        guard session.canAddOutput(output) else { return }
        session.addOutput(output)
        output.setMetadataObjectsDelegate(self, queue: .main)
        output.metadataObjectTypes = [.qr]
        let layer = AVCaptureVideoPreviewLayer(session: session)
        layer.videoGravity = .resizeAspectFill
        view.layer.addSublayer(layer)
        preview = layer
    }

    override func viewDidLayoutSubviews() {
        super.viewDidLayoutSubviews()
        preview?.frame = view.bounds
    }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        let session = self.session
        queue.async { session.startRunning() }
    }

    override func viewWillDisappear(_ animated: Bool) {
        super.viewWillDisappear(animated)
        let session = self.session
        queue.async { session.stopRunning() }
    }

    func metadataOutput(_ output: AVCaptureMetadataOutput, didOutput objects: [AVMetadataObject], from connection: AVCaptureConnection) {
        for case let code as AVMetadataMachineReadableCodeObject in objects {
            if let text = code.stringValue {
                found(text)
                return
            }
        }
    }
}
