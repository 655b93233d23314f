import Foundation
import Network

/// An OpenAI-compatible server on 127.0.0.1 answering each request with the next scripted
/// stream of `data:` events, as the providers stream chat completions (the same chunks as
/// android/src/test/kotlin/edu/pku/harness/ScriptedModel.kt). The simulator's app reaches the
/// test runner's loopback address.
final class ScriptedModel: @unchecked Sendable {
    private let listener: NWListener
    private let queue = DispatchQueue(label: "scripted-model")
    private let lock = NSLock()
    private var script: [[String]]
    private var received: [String] = []

    /// The request bodies, in order.
    var bodies: [String] { lock.withLock { received } }

    init(_ streams: [String]...) throws {
        script = streams
        let parameters = NWParameters.tcp
        parameters.requiredLocalEndpoint = .hostPort(host: "127.0.0.1", port: .any)
        listener = try NWListener(using: parameters)
        let ready = DispatchSemaphore(value: 0)
        listener.stateUpdateHandler = { state in
            if case .ready = state { ready.signal() }
        }
        listener.newConnectionHandler = { [weak self] connection in self?.serve(connection) }
        listener.start(queue: queue)
        guard ready.wait(timeout: .now() + 5) == .success, listener.port != nil else {
            throw NSError(domain: "ScriptedModel", code: 1, userInfo: [NSLocalizedDescriptionKey: "the listener on 127.0.0.1 did not start"])
        }
    }

    var endpoint: String { "http://127.0.0.1:\(listener.port!.rawValue)/v1" }

    func close() {
        listener.cancel()
    }

    private func serve(_ connection: NWConnection) {
        connection.start(queue: queue)
        read(connection, Data())
    }

    /// Reads the request head, then `Content-Length` bytes of body, then answers.
    private func read(_ connection: NWConnection, _ buffer: Data) {
        connection.receive(minimumIncompleteLength: 1, maximumLength: 65536) { [weak self] data, _, done, error in
            guard let self else { return }
            var buffer = buffer
            if let data { buffer.append(data) }
            if let head = buffer.range(of: Data("\r\n\r\n".utf8)) {
                let header = String(decoding: buffer[..<head.lowerBound], as: UTF8.self)
                let length = header.split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                let body = buffer[head.upperBound...]
                if body.count >= length {
                    self.answer(connection, body: String(decoding: body.prefix(length), as: UTF8.self))
                    return
                }
            }
            if done || error != nil {
                connection.cancel()
                return
            }
            self.read(connection, buffer)
        }
    }

    private func answer(_ connection: NWConnection, body: String) {
        let events: [String] = lock.withLock {
            received.append(body)
            return script.isEmpty ? [] : script.removeFirst()
        }
        var response = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        for event in events { response += "data: \(event)\n\n" }
        connection.send(content: Data(response.utf8), completion: .contentProcessed { _ in connection.cancel() })
    }
}

/// One streamed chunk of a chat completion: `delta` as JSON, and the finish reason if any.
func chunk(_ delta: String, finish: String? = nil) -> String {
    let reason = finish.map { "\"\($0)\"" } ?? "null"
    return "{\"choices\":[{\"index\":0,\"delta\":\(delta),\"finish_reason\":\(reason)}]}"
}

/// `text` as a JSON string literal.
func jsonString(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

/// A streamed tool call by the model: `name` is the model-facing name (`canteen__reserve`).
func toolCall(id: String, name: String, arguments: String) -> [String] {
    let call = "{\"tool_calls\":[{\"index\":0,\"id\":\"\(id)\",\"type\":\"function\",\"function\":{\"name\":\"\(name)\",\"arguments\":\(jsonString(arguments))}}]}"
    return [chunk(call), chunk("{}", finish: "tool_calls"), "[DONE]"]
}

/// A streamed answer in words.
func answer(_ words: String) -> [String] {
    [chunk("{\"content\":\(jsonString(words))}", finish: "stop"), "[DONE]"]
}
