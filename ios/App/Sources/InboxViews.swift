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

/// 活动: today's calls in the core's words, grouped by conversation (the student's taps and the
/// scheduled checks apart), filtered by plugin and effect, with the day's spend. It replaced the
/// audit log's screen.
struct ActivityView: View {
    @State private var store: ScreenStore<ActivityScreen>
    private let shell: Shell

    init(shell: Shell) {
        self.shell = shell
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.activityScreen(filter: ActivityFilter(plugin: nil, effect: nil)) })
    }

    var body: some View {
        Loaded(store: store) { screen in
            List {
                Section {
                    Text(screen.day).font(.caption).foregroundStyle(.secondary)
                    LabeledContent(screen.spent.label, value: screen.spent.value)
                        .accessibilityIdentifier("activity.spent")
                    Picker(selection: Binding(get: { screen.filter.plugin }, set: { select(ActivityFilter(plugin: $0, effect: screen.filter.effect)) })) {
                        Image(systemName: "line.3.horizontal.decrease.circle").tag(String?.none)
                        ForEach(screen.plugins, id: \.id) { Text($0.label).tag(String?.some($0.id)) }
                    } label: { EmptyView() }
                    Picker(selection: Binding(get: { screen.filter.effect }, set: { select(ActivityFilter(plugin: screen.filter.plugin, effect: $0)) })) {
                        Image(systemName: "line.3.horizontal.decrease.circle").tag(Effect?.none)
                        ForEach(screen.effects, id: \.effect) { Text($0.label).tag(Effect?.some($0.effect)) }
                    } label: { EmptyView() }
                }
                if let empty = screen.empty {
                    Text(empty).foregroundStyle(.secondary)
                }
                ForEach(Array(screen.groups.enumerated()), id: \.offset) { _, group in
                    Section(group.title) {
                        ForEach(Array(group.calls.enumerated()), id: \.offset) { _, call in
                            VStack(alignment: .leading, spacing: 2) {
                                Text(call.when).font(.caption).foregroundStyle(.secondary)
                                Text(call.tool).font(.subheadline.weight(.semibold))
                                if !call.effectLabel.isEmpty { Text(call.effectLabel).font(.caption) }
                                Text(call.what)
                            }
                        }
                    }
                }
            }
            .navigationTitle(screen.title)
        }
    }

    /// A new filter is a new read of the screen.
    private func select(_ next: ActivityFilter) {
        store.disappear()
        store = ScreenStore(shell: shell) { try $0.activityScreen(filter: next) }
        store.appear()
    }
}

/// 已允许: each "Always allow" in force (tool, scope, since, until), each with its revoke.
struct AllowancesView: View {
    @State private var store: ScreenStore<AllowancesScreen>

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.allowancesScreen() })
    }

    var body: some View {
        Loaded(store: store) { screen in
            List {
                Section { Text(screen.note).font(.footnote) }
                if let empty = screen.empty {
                    Text(empty).foregroundStyle(.secondary)
                }
                ForEach(Array(screen.rows.enumerated()), id: \.offset) { index, row in
                    VStack(alignment: .leading, spacing: 4) {
                        Text("\(row.pluginTitle) · \(row.toolTitle)").font(.subheadline.weight(.semibold))
                        Text("\(row.effectLabel) · \(row.scopeLabel)").font(.caption)
                        Text(row.since).font(.caption).foregroundStyle(.secondary)
                        Text(row.until).font(.caption).foregroundStyle(.secondary)
                        ActionButton(button: row.revoke, act: store.act)
                            .accessibilityIdentifier("allowance.\(index).revoke")
                    }
                }
            }
            .navigationTitle(screen.title)
        }
    }
}

/// 花钱: the two money limits, each set from what the student types, and today's spend.
struct SpendingView: View {
    @State private var store: ScreenStore<SpendingScreen>
    /// What is typed in each limit's field, by its settings key, until saved.
    @State private var typed: [String: String] = [:]

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.spendingScreen() })
    }

    var body: some View {
        Loaded(store: store) { screen in
            Form {
                Section {
                    LabeledContent(screen.today.label, value: screen.today.value)
                        .accessibilityIdentifier("spending.today")
                }
                Section {
                    ForEach(screen.limits, id: \.key) { limit in
                        HStack {
                            TextField(limit.label, text: Binding(get: { typed[limit.key] ?? limit.yuan }, set: { typed[limit.key] = $0 }))
                                .keyboardType(.numberPad)
                                .accessibilityIdentifier("spending.\(limit.key)")
                            Button(screen.saveLabel) {
                                store.act(.setMoneyLimit(key: limit.key, yuan: typed[limit.key] ?? limit.yuan))
                                typed[limit.key] = nil
                            }
                        }
                    }
                } footer: {
                    Text(screen.note)
                }
            }
            .navigationTitle(screen.title)
        }
    }
}

/// The scheduled jobs, how this phone wakes for them (iOS: no exact alarms), whether their
/// notifications can be shown, and the core's form for a new check.
struct JobsView: View {
    @State private var store: ScreenStore<JobsScreen>

    init(shell: Shell) {
        _store = State(initialValue: ScreenStore(shell: shell) { try $0.jobsScreen() })
    }

    var body: some View {
        Loaded(store: store) { screen in
            List {
                Section { Text(screen.wakeNote).font(.footnote).accessibilityIdentifier("jobs.wake-note") }
                if let note = screen.notificationsNote {
                    Section {
                        Text(note).foregroundStyle(.red).accessibilityIdentifier("jobs.notifications-note")
                        if let fix = screen.notificationsFix { ActionButton(button: fix, act: store.act) }
                    }
                }
                if screen.jobs.isEmpty {
                    Text(screen.emptyLabel).foregroundStyle(.secondary)
                }
                ForEach(screen.jobs, id: \.id) { job in
                    VStack(alignment: .leading, spacing: 4) {
                        Text(job.name).font(.headline)
                        Text(job.summary).font(.caption).accessibilityIdentifier("job.summary.\(job.id)")
                        Text(job.stateLabel).font(.caption)
                        if !job.nextRun.isEmpty { Text(job.nextRun).font(.caption) }
                        Text(job.lastOutcome).font(.caption).foregroundStyle(.secondary)
                        if let notice = job.notice { Text(notice).font(.caption).foregroundStyle(.red) }
                        HStack {
                            if let fix = job.fix { ActionButton(button: fix, act: store.act) }
                            if let toggle = job.pauseOrResume { ActionButton(button: toggle, act: store.act) }
                            ActionButton(button: job.remove, act: store.act)
                        }
                        .buttonStyle(.bordered)
                    }
                }
                JobFormSection(form: screen.form, words: { [shell = store.shell] draft in
                    try? shell.harness.jobWords(draft: draft)
                }, act: store.act)
            }
            .navigationTitle(screen.title)
        }
    }
}

/// The core's new-job form (issue 37.3): a reminder first, or a check built from choices —
/// what to watch, which of its fields (by its words), a comparison in words, a value in the
/// field's unit. The notification's words are the core's for these choices until the student
/// edits them; nothing is typed but the name, the time, the value and the words.
struct JobFormSection: View {
    let form: JobForm
    let words: (JobDraft) -> JobWords?
    let act: (Action) -> Void
    @State private var kindAt = 0
    @State private var source = 0
    @State private var fieldAt = 0
    @State private var schedule = 0
    @State private var comparison = 0
    @State private var name = ""
    @State private var whenText = ""
    @State private var value = ""
    @State private var notifyTitle: String?
    @State private var notifyBody: String?

    private var checking: Bool { form.kinds[min(kindAt, form.kinds.count - 1)].kind == .check }
    private var chosen: JobSourceOption? { form.sources.isEmpty ? nil : form.sources[min(source, form.sources.count - 1)] }
    private var field: JobFieldOption? {
        guard let fields = chosen?.fields, !fields.isEmpty else { return nil }
        return fields[min(fieldAt, fields.count - 1)]
    }
    private var compare: JobComparisonOption { form.comparisons[min(comparison, form.comparisons.count - 1)] }

    private var draft: JobDraft {
        JobDraft(
            kind: form.kinds[min(kindAt, form.kinds.count - 1)].kind,
            name: name, plugin: chosen?.plugin ?? "", source: chosen?.source ?? "",
            schedule: form.schedules[min(schedule, form.schedules.count - 1)].kind, scheduleValue: whenText,
            field: checking ? (field?.key ?? "") : "", comparison: compare.comparison, value: value,
            notifyTitle: "", notifyBody: ""
        )
    }

    var body: some View {
        let written = words(draft)
        let title = Binding(get: { notifyTitle ?? written?.title ?? "" }, set: { notifyTitle = $0 })
        let text = Binding(get: { notifyBody ?? written?.body ?? "" }, set: { notifyBody = $0 })
        Section(form.title) {
            Picker("", selection: $kindAt) {
                ForEach(Array(form.kinds.enumerated()), id: \.offset) { i, option in
                    Text(option.label).tag(i)
                }
            }
            .pickerStyle(.segmented)
            .accessibilityIdentifier("job.kind")
            TextField(form.nameLabel, text: $name).accessibilityIdentifier("job.name")
            if checking {
                if let chosen {
                    Picker(form.sourceLabel, selection: $source) {
                        ForEach(Array(form.sources.enumerated()), id: \.offset) { i, option in
                            Text(option.title).tag(i)
                        }
                    }
                    if !chosen.fields.isEmpty {
                        Picker(form.fieldLabel, selection: $fieldAt) {
                            ForEach(Array(chosen.fields.enumerated()), id: \.offset) { i, option in
                                Text(option.label).tag(i)
                            }
                        }
                        .accessibilityIdentifier("job.field")
                    }
                    Picker(form.comparisonLabel, selection: $comparison) {
                        ForEach(Array(form.comparisons.enumerated()), id: \.offset) { i, option in
                            Text(option.label).tag(i)
                        }
                    }
                    if compare.takesValue {
                        HStack {
                            TextField(form.valueLabel, text: $value).accessibilityIdentifier("job.value")
                            if let unit = field?.unit { Text(unit).foregroundStyle(.secondary) }
                        }
                    }
                } else {
                    Text(form.noSourcesLabel).foregroundStyle(.secondary)
                }
            }
            Picker(form.scheduleLabel, selection: $schedule) {
                ForEach(Array(form.schedules.enumerated()), id: \.offset) { i, option in
                    Text(option.label).tag(i)
                }
            }
            TextField(form.schedules[min(schedule, form.schedules.count - 1)].valueHint, text: $whenText)
                .accessibilityIdentifier("job.when")
            TextField(form.notifyTitleLabel, text: title).accessibilityIdentifier("job.title")
            TextField(form.notifyBodyLabel, text: text, axis: .vertical).accessibilityIdentifier("job.body")
            if checking { Text(form.wordsHint).font(.footnote).foregroundStyle(.secondary) }
            SwiftUI.Button(form.submitLabel) {
                var sent = draft
                sent.notifyTitle = title.wrappedValue
                sent.notifyBody = text.wrappedValue
                act(.addJob(draft: sent))
            }
            .accessibilityIdentifier("job.add")
        }
    }
}
