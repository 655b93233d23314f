import Harness

/// Delivers each event into an AsyncStream. Called on the thread that caused the event.
final class StreamListener: EventListener, @unchecked Sendable {
    private let continuation: AsyncStream<HarnessEvent>.Continuation

    init(_ continuation: AsyncStream<HarnessEvent>.Continuation) {
        self.continuation = continuation
    }

    func onEvent(event: HarnessEvent) throws {
        continuation.yield(event)
    }
}

extension Harness {
    /// The Harness's events as an `AsyncStream`:
    ///
    ///     for await event in try harness.events() { … }
    ///
    /// Delivery stops when the consuming task ends or is cancelled.
    public func events() throws -> AsyncStream<HarnessEvent> {
        let (stream, continuation) = AsyncStream<HarnessEvent>.makeStream(bufferingPolicy: .unbounded)
        let subscription = try subscribe(listener: StreamListener(continuation))
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }
}
