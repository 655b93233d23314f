import Harness
import SwiftUI

/// The memories the assistant keeps, pending ones first with Approve and Reject.
struct MemoryInboxView: View {
    @State private var store: ScreenStore<MemoryInbox>

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.memoryInboxScreen() })
    }

    var body: some View {
        Loaded(store: store) { inbox in
            List {
                Section {
                    Text(inbox.explanation).font(.footnote)
                }
                .accessibilityValue(String(inbox.pendingCount))
                if inbox.memories.isEmpty {
                    Text(inbox.emptyLabel).foregroundStyle(.secondary)
                }
                ForEach(inbox.memories, id: \.id) { row in
                    VStack(alignment: .leading, spacing: 4) {
                        Text(row.text).fontWeight(row.pending ? .semibold : .regular)
                        Text("\(row.stateLabel) · \(row.when)").font(.caption).foregroundStyle(.secondary)
                            .accessibilityIdentifier("memory.\(row.id).state")
                        HStack {
                            if let approve = row.approve { ActionButton(button: approve, act: store.act) }
                            if let reject = row.reject { ActionButton(button: reject, act: store.act) }
                        }
                        .buttonStyle(.bordered)
                    }
                }
            }
            .navigationTitle(inbox.title)
        }
    }
}

/// Every decision, answer and outcome, filtered by plugin and actor.
struct AuditView: View {
    @State private var store: ScreenStore<AuditScreen>
    private let shell: Shell

    init(shell: Shell) {
        self.shell = shell
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.auditScreen(filter: AuditFilter(plugin: nil, actor: nil, verdict: nil)) })
    }

    var body: some View {
        Loaded(store: store) { screen in
            List {
                Section {
                    Picker(selection: Binding(get: { screen.filter.plugin }, set: { select(plugin: $0, actor: screen.filter.actor) })) {
                        Image(systemName: "line.3.horizontal.decrease.circle").tag(String?.none)
                        ForEach(screen.plugins, id: \.self) { Text($0).tag(String?.some($0)) }
                    } label: { EmptyView() }
                    Picker(selection: Binding(get: { screen.filter.actor }, set: { select(plugin: screen.filter.plugin, actor: $0) })) {
                        Image(systemName: "line.3.horizontal.decrease.circle").tag(String?.none)
                        ForEach(screen.actors, id: \.self) { Text($0).tag(String?.some($0)) }
                    } label: { EmptyView() }
                }
                if screen.rows.isEmpty {
                    Text(screen.emptyLabel).foregroundStyle(.secondary)
                }
                ForEach(Array(screen.rows.enumerated()), id: \.offset) { _, row in
                    VStack(alignment: .leading, spacing: 2) {
                        Text("\(row.when) · \(row.actor)").font(.caption).foregroundStyle(.secondary)
                        Text(row.tool).font(.subheadline.weight(.semibold))
                        Text(row.event)
                        if let detail = row.detail { Text(detail).font(.caption) }
                    }
                }
            }
            .navigationTitle(screen.title)
        }
    }

    /// A new filter is a new read of the screen (`verdict` is kept as the core returned it).
    private func select(plugin: String?, actor: String?) {
        let next = AuditFilter(plugin: plugin, actor: actor, verdict: store.model?.filter.verdict)
        store.disappear()
        store = ScreenStore(shell: shell) { try $0.auditScreen(filter: next) }
        store.appear()
    }
}

/// The scheduled jobs, and how this phone wakes for them (iOS: no exact alarms).
struct JobsView: View {
    @State private var store: ScreenStore<JobsScreen>

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.jobsScreen() })
    }

    var body: some View {
        Loaded(store: store) { screen in
            List {
                Section { Text(screen.wakeNote).font(.footnote).accessibilityIdentifier("jobs.wake-note") }
                if screen.jobs.isEmpty {
                    Text(screen.emptyLabel).foregroundStyle(.secondary)
                }
                ForEach(screen.jobs, id: \.id) { job in
                    VStack(alignment: .leading, spacing: 4) {
                        Text(job.name).font(.headline)
                        Text(job.stateLabel).font(.caption)
                        if !job.nextRun.isEmpty { Text(job.nextRun).font(.caption) }
                        Text(job.lastOutcome).font(.caption).foregroundStyle(.secondary)
                        HStack {
                            if let toggle = job.pauseOrResume { ActionButton(button: toggle, act: store.act) }
                            ActionButton(button: job.remove, act: store.act)
                        }
                        .buttonStyle(.bordered)
                    }
                }
            }
            .navigationTitle(screen.title)
        }
    }
}
