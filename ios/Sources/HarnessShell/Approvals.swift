import Harness

/// Approval prompts waiting for the user. A `Platform` implementation calls `wait(id:prompt:)`
/// from `askApproval`; the approval sheet calls `answer(id:with:)` or `dismiss(id:)`.
///
///     func askApproval(id: UInt64, prompt: ApprovalPrompt) async throws -> Answer {
///         try await approvals.wait(id: id, prompt: prompt)
///     }
public actor PendingApprovals {
    private var waiting: [UInt64: (prompt: ApprovalPrompt, continuation: CheckedContinuation<Answer, Error>)] = [:]

    public init() {}

    /// The prompts on screen now, oldest first.
    public var prompts: [(id: UInt64, prompt: ApprovalPrompt)] {
        waiting.keys.sorted().compactMap { id in waiting[id].map { (id: id, prompt: $0.prompt) } }
    }

    /// Suspends until the user answers prompt `id`, or throws when it is dismissed.
    public func wait(id: UInt64, prompt: ApprovalPrompt) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            waiting[id] = (prompt: prompt, continuation: continuation)
        }
    }

    /// The user chose `answer`, one of the prompt's `offers`.
    public func answer(id: UInt64, with answer: Answer) {
        waiting.removeValue(forKey: id)?.continuation.resume(returning: answer)
    }

    /// The sheet went away without an answer; the core declines the call (fail closed).
    public func dismiss(id: UInt64) {
        waiting.removeValue(forKey: id)?.continuation.resume(
            throwing: HarnessError.Platform(reason: "the approval sheet was dismissed"))
    }
}
