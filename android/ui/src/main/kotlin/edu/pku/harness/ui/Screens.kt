package edu.pku.harness.ui

import androidx.compose.foundation.clickable
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.ColumnScope
import androidx.compose.foundation.layout.ExperimentalLayoutApi
import androidx.compose.foundation.layout.FlowRow
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.padding
import androidx.compose.foundation.rememberScrollState
import androidx.compose.foundation.shape.RoundedCornerShape
import androidx.compose.foundation.verticalScroll
import androidx.compose.material3.Button
import androidx.compose.material3.ExperimentalMaterial3Api
import androidx.compose.material3.FilterChip
import androidx.compose.material3.HorizontalDivider
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.OutlinedButton
import androidx.compose.material3.OutlinedTextField
import androidx.compose.material3.Surface
import androidx.compose.material3.Switch
import androidx.compose.material3.Text
import androidx.compose.material3.TextButton
import androidx.compose.runtime.Composable
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.text.input.PasswordVisualTransformation
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.Action
import edu.pku.harness.core.AddPluginScreen
import edu.pku.harness.core.ConsentScreen
import edu.pku.harness.core.JobDraft
import edu.pku.harness.core.JobForm
import edu.pku.harness.core.JobKind
import edu.pku.harness.core.JobWords
import edu.pku.harness.core.JobsScreen
import edu.pku.harness.core.MemoryInbox
import edu.pku.harness.core.NavItem
import edu.pku.harness.core.ModelSettingsScreen
import edu.pku.harness.core.PluginDetail
import edu.pku.harness.core.PluginsScreen
import edu.pku.harness.core.Route
import edu.pku.harness.core.ToolRowView

/** Test tags of the screens other than the chat. */
object ScreenTags {
    /** A plugin page's Allow cloud switch. */
    const val CLOUD = "plugin-allow-cloud"

    /** The link on a plugin's page to its [index]th declared screen. */
    fun pluginScreenLink(index: Int) = "plugin-screen-link-$index"

    /** The link on a plugin's page to its [index]th data source. */
    fun dataSource(index: Int) = "plugin-data-source-$index"
    const val READ_TERMS = "read-terms"
    const val LINK = "plugins-link"
    const val ADD = "plugins-add"
    const val BACK = "back"
    const val ENABLED = "plugin-enabled"
    const val ENDPOINT = "model-endpoint"
    const val MODEL = "model-name"
    const val KEY = "model-key"
    const val SAVE = "model-save"
    const val TEST = "model-test"
    const val TEST_RESULT = "model-test-result"
    const val MONTH_SPEND = "model-month-spend"
    fun provider(id: String) = "model-provider-$id"
    const val CAMPUS_STATE = "campus-state"
    const val CAMPUS_OPEN = "campus-open"
    const val UNMET = "plugin-unmet"
    const val ABOUT = "plugin-about"
    const val CHANGED = "plugin-changed-tools"
    const val REMOTE_URL = "remote-url"
    const val REMOTE_NAME = "remote-name"
    const val REMOTE_TOKEN = "remote-token"
    const val REMOTE_CLIENT = "remote-client"
    const val REMOTE_CLIENT_SECRET = "remote-client-secret"
    const val REMOTE_ADD = "remote-add"
    /** A plugin page's tap that runs one of its tools for the student (the pay code). */
    const val TAP = "plugin-tap"
    fun plugin(id: String) = "plugin-$id"
    fun pluginSwitch(id: String) = "plugin-$id-switch"
    fun pluginFix(id: String) = "plugin-$id-fix"
    fun mode(effect: String) = "mode-$effect"
    fun memory(id: Long) = "memory-$id"
    fun permission(name: String) = "permission-$name"
}

/** A screen's scrolling column, with the core's message for a refused tap at its top. */
@Composable
internal fun Page(message: String?, content: @Composable ColumnScope.() -> Unit) {
    Column(Modifier.fillMaxSize()) {
        Message(message)
        Column(
            Modifier.fillMaxSize().verticalScroll(rememberScrollState()).padding(16.dp),
            verticalArrangement = Arrangement.spacedBy(10.dp),
            content = content,
        )
    }
}

@Composable
internal fun Title(text: String) = Text(text, style = MaterialTheme.typography.titleLarge)

@Composable
internal fun Section(text: String) = Text(text, style = MaterialTheme.typography.titleSmall, color = MaterialTheme.colorScheme.primary)

@Composable
internal fun Small(text: String, modifier: Modifier = Modifier) =
    Text(text, modifier, style = MaterialTheme.typography.bodySmall, color = MaterialTheme.colorScheme.onSurfaceVariant)

@Composable
private fun Lines(lines: List<String>) {
    for (line in lines) Text("• $line", style = MaterialTheme.typography.bodyMedium)
}

@Composable
internal fun Card(modifier: Modifier = Modifier, content: @Composable ColumnScope.() -> Unit) {
    Surface(modifier.fillMaxWidth(), shape = RoundedCornerShape(12.dp), tonalElevation = 1.dp) {
        Column(Modifier.padding(12.dp), verticalArrangement = Arrangement.spacedBy(6.dp), content = content)
    }
}

/** A row with a label and a switch whose tap is the core's [toggle]. */
@Composable
internal fun SwitchRow(label: String, on: Boolean, toggle: Action, tag: String? = null, onAct: (Action) -> Unit) {
    Row(Modifier.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
        Text(label, modifier = Modifier.weight(1f))
        Switch(checked = on, onCheckedChange = { onAct(toggle) }, modifier = if (tag != null) Modifier.testTag(tag) else Modifier)
    }
}

/** The installed plugins, and adding one by its link (which shows [AddPluginPage] first). */
@Composable
fun PluginsPage(holder: ScreenModel<PluginsScreen>, open: (String) -> Unit) {
    val screen = holder.model ?: return
    holder.preview?.let { preview ->
        AddPluginPage(preview, holder.message, install = { holder.act(it) }, cancel = { holder.preview = null })
        return
    }
    var link by remember { mutableStateOf("") }
    Page(holder.message) {
        Title(screen.title)
        for (group in screen.groups) {
            Section(group.title)
            for (plugin in group.plugins) {
                Card(Modifier.clickable { open(plugin.id) }.testTag(ScreenTags.plugin(plugin.id))) {
                    Row(verticalAlignment = Alignment.CenterVertically) {
                        Text(plugin.title, fontWeight = FontWeight.Medium, modifier = Modifier.weight(1f))
                        // A plugin the app needs has no switch; the core says why below.
                        plugin.toggle?.let { toggle ->
                            Switch(
                                checked = plugin.enabled,
                                onCheckedChange = { holder.act(toggle) },
                                modifier = Modifier.testTag(ScreenTags.pluginSwitch(plugin.id)),
                            )
                        }
                    }
                    if (plugin.description.isNotEmpty()) Text(plugin.description, style = MaterialTheme.typography.bodyMedium)
                    Small("${plugin.kindLabel} · ${plugin.stateLabel}")
                    plugin.fixed?.let { Small(it) }
                    plugin.fix?.let { CoreButton(it, Modifier.testTag(ScreenTags.pluginFix(plugin.id))) { action -> holder.act(action) } }
                }
            }
        }
        for (error in screen.loadErrors) Text(error, color = MaterialTheme.colorScheme.error)
        HorizontalDivider()
        OutlinedTextField(
            value = link,
            onValueChange = { link = it },
            placeholder = { Text(screen.linkPlaceholder) },
            singleLine = true,
            modifier = Modifier.fillMaxWidth().testTag(ScreenTags.LINK),
        )
        Button(onClick = { holder.act(Action.PreviewLink(link.trim())) }, enabled = link.isNotBlank(), modifier = Modifier.testTag(ScreenTags.ADD)) {
            Text(screen.addLabel)
        }
        RemoteServerForm(screen) { holder.act(it) }
    }
}

/**
 * A remote MCP server's address, a name and its token if it needs one (a secure field); a client
 * id its authorization server issued, with the client's secret for a confidential one (a secure
 * field too).
 */
@Composable
private fun RemoteServerForm(screen: PluginsScreen, act: (Action) -> Unit) {
    var url by remember { mutableStateOf("") }
    var name by remember { mutableStateOf("") }
    var token by remember { mutableStateOf("") }
    var client by remember { mutableStateOf("") }
    var secret by remember { mutableStateOf("") }
    HorizontalDivider()
    Section(screen.remoteLabel)
    OutlinedTextField(url, { url = it }, placeholder = { Text(screen.remoteUrlPlaceholder) }, singleLine = true,
        modifier = Modifier.fillMaxWidth().testTag(ScreenTags.REMOTE_URL))
    OutlinedTextField(name, { name = it }, placeholder = { Text(screen.remoteNamePlaceholder) }, singleLine = true,
        modifier = Modifier.fillMaxWidth().testTag(ScreenTags.REMOTE_NAME))
    OutlinedTextField(token, { token = it }, placeholder = { Text(screen.remoteTokenPlaceholder) }, singleLine = true,
        visualTransformation = PasswordVisualTransformation(),
        modifier = Modifier.fillMaxWidth().testTag(ScreenTags.REMOTE_TOKEN))
    OutlinedTextField(client, { client = it }, placeholder = { Text(screen.remoteClientPlaceholder) }, singleLine = true,
        modifier = Modifier.fillMaxWidth().testTag(ScreenTags.REMOTE_CLIENT))
    OutlinedTextField(secret, { secret = it }, placeholder = { Text(screen.remoteClientSecretPlaceholder) }, singleLine = true,
        visualTransformation = PasswordVisualTransformation(),
        modifier = Modifier.fillMaxWidth().testTag(ScreenTags.REMOTE_CLIENT_SECRET))
    Button(
        onClick = {
            // The token and the secret leave with the tap; their fields are emptied so nothing
            // here keeps them.
            act(Action.AddRemoteServer(url.trim(), name.trim(), token.ifBlank { null }, client.ifBlank { null }, secret.ifBlank { null }))
            token = ""
            secret = ""
        },
        enabled = url.isNotBlank() && name.isNotBlank(),
        modifier = Modifier.testTag(ScreenTags.REMOTE_ADD),
    ) { Text(screen.remoteAddLabel) }
}

/** What a plugin would be allowed before it is installed: install, or cancel. */
@Composable
fun AddPluginPage(screen: AddPluginScreen, message: String?, install: (Action) -> Unit, cancel: () -> Unit) {
    Page(message) {
        Title(screen.title)
        Text(screen.pluginTitle, style = MaterialTheme.typography.headlineSmall)
        Small("${screen.plugin} · ${screen.kindLabel}")
        Small(screen.link)
        Lines(screen.asksMore)
        Tools(screen.tools) {}
        for (mode in screen.modes) Text("${mode.label}: ${mode.value}")
        Text(screen.grantRow)
        Lines(screen.warnings)
        Lines(screen.dataSources)
        Lines(screen.disclosure)
        Lines(screen.requires)
        Row(horizontalArrangement = Arrangement.spacedBy(8.dp)) {
            OutlinedButton(onClick = cancel) { Text(screen.cancelLabel) }
            CoreButton(screen.install, onAct = install)
        }
    }
}

@Composable
private fun Tools(tools: List<ToolRowView>, onAct: (Action) -> Unit) {
    for (tool in tools) {
        Card {
            Text(tool.title, fontWeight = FontWeight.Medium)
            Small(tool.effectLabel)
            if (tool.description.isNotEmpty()) Text(tool.description, style = MaterialTheme.typography.bodySmall)
            Chips(tool.reclass, onAct)
        }
    }
}

/** One plugin: on or off, each effect's mode and where it came from, its tools, and more. */
@Composable
fun PluginDetailPage(holder: ScreenModel<PluginDetail>, back: () -> Unit) {
    val detail = holder.model
    Page(holder.message) {
        TextButton(onClick = back, modifier = Modifier.testTag(ScreenTags.BACK)) { Text("←") }
        if (detail == null) return@Page
        Title(detail.title)
        Small(detail.kindLabel)
        RichText(detail.about, Modifier.testTag(ScreenTags.ABOUT)) { holder.act(it) }
        detail.unmet?.let { Text(it, color = MaterialTheme.colorScheme.error, modifier = Modifier.testTag(ScreenTags.UNMET)) }
        detail.unmetFix?.let { CoreButton(it) { action -> holder.act(action) } }
        for (line in detail.changedTools) Text(line, color = MaterialTheme.colorScheme.tertiary, modifier = Modifier.testTag(ScreenTags.CHANGED))
        detail.acceptChanges?.let { CoreButton(it) { action -> holder.act(action) } }
        detail.toggle?.let { toggle -> SwitchRow(detail.enabledLabel, detail.enabled, toggle, ScreenTags.ENABLED) { holder.act(it) } }
        detail.fixed?.let { Small(it) }
        Section(detail.modesLabel)
        for (row in detail.modes) {
            Card(Modifier.testTag(ScreenTags.mode(row.effect.name.lowercase()))) {
                Row(verticalAlignment = Alignment.CenterVertically) {
                    Text(row.effectLabel, fontWeight = FontWeight.Medium, modifier = Modifier.weight(1f))
                    Small("${row.modeLabel} · ${row.sourceLabel}")
                }
                row.note?.let { Text(it, style = MaterialTheme.typography.bodySmall, color = MaterialTheme.colorScheme.tertiary) }
                Segments(row.choices) { holder.act(it) }
            }
        }
        for (action in detail.actions) CoreButton(action, Modifier.testTag(ScreenTags.TAP)) { holder.act(it) }
        for ((index, link) in detail.screens.withIndex()) {
            CoreButton(link, Modifier.testTag(ScreenTags.pluginScreenLink(index))) { holder.act(it) }
        }
        Section(detail.toolsLabel)
        Tools(detail.tools) { holder.act(it) }
        Text(detail.grantRow)
        for (warning in detail.warnings) Text(warning, color = MaterialTheme.colorScheme.error)
        if (detail.dataSources.isNotEmpty()) {
            Section(detail.dataSourcesLabel)
            detail.dataSources.forEachIndexed { index, source ->
                CoreButton(source, Modifier.testTag(ScreenTags.dataSource(index))) { holder.act(it) }
            }
        }
        // Allow cloud, with what the plugin stores online listed beside it (seed 000).
        val cloudLabel = detail.cloudLabel
        val cloudToggle = detail.cloudToggle
        if (cloudLabel != null && cloudToggle != null) {
            Card {
                SwitchRow(cloudLabel, detail.cloudAllowed, cloudToggle, ScreenTags.CLOUD) { holder.act(it) }
                for (line in detail.disclosure) Small("• $line")
            }
        }
        if (detail.campus.isNotEmpty()) {
            Section(detail.campusLabel)
            Lines(detail.campus)
        }
        Row(horizontalArrangement = Arrangement.spacedBy(8.dp)) {
            detail.update?.let { CoreButton(it) { a -> holder.act(a) } }
            detail.remove?.let { CoreButton(it) { a -> holder.act(a).invokeOnCompletion { back() } } }
        }
        Section(detail.developerLabel)
        for (row in detail.developer) Small("${row.label}: ${row.id}")
        Small(detail.developerGrantRow)
    }
}

/** The destinations that do not fit the bar, each a row that opens it. */
@Composable
fun MorePage(items: List<NavItem>, open: (Route) -> Unit) {
    Page(null) {
        for (item in items) {
            Card(Modifier.clickable { open(item.route) }.testTag(navTag(item.route))) {
                Text(item.label, fontWeight = FontWeight.Medium)
            }
        }
    }
}

/** The terms, the campus session, what goes to the cloud, and the phone's permissions. */
@Composable
fun ConsentPage(holder: ScreenModel<ConsentScreen>) {
    val screen = holder.model ?: return
    val act: (Action) -> Unit = { holder.act(it) }
    Page(holder.message) {
        Title(screen.title)
        Section(screen.termsLabel)
        Text(screen.termsState)
        var reading by remember { mutableStateOf(false) }
        TextButton(onClick = { reading = !reading }, modifier = Modifier.testTag(ScreenTags.READ_TERMS)) { Text(screen.readTermsLabel) }
        if (reading) for (paragraph in screen.terms) Text(paragraph, style = MaterialTheme.typography.bodySmall)
        screen.acceptTerms?.let { CoreButton(it, onAct = act) }
        Section(screen.campusLabel)
        Text(screen.campusState, modifier = Modifier.testTag(ScreenTags.CAMPUS_STATE))
        CoreButton(screen.campusOpen, Modifier.testTag(ScreenTags.CAMPUS_OPEN), onAct = act)
        Section(screen.cloudLabel)
        for (row in screen.cloud) {
            Card {
                SwitchRow(row.title, row.allowed, row.toggle, onAct = act)
                Lines(row.disclosure)
            }
        }
        Section(screen.permissionsLabel)
        for (row in screen.permissions) {
            Card(Modifier.testTag(ScreenTags.permission(row.permission.name.lowercase()))) {
                Row(verticalAlignment = Alignment.CenterVertically) {
                    Text(row.label, fontWeight = FontWeight.Medium, modifier = Modifier.weight(1f))
                    Small(row.stateLabel)
                }
                Lines(row.neededBy)
                row.fix?.let { CoreButton(it, onAct = act) }
            }
        }
    }
}

/**
 * The model in one tap: a provider from the core's list (its address and first model filled in),
 * its suggested models, where to get a key, the key typed in and never shown (only whether set),
 * and Test connection, whose words the core writes.
 */
@OptIn(ExperimentalLayoutApi::class, ExperimentalMaterial3Api::class)
@Composable
fun ModelPage(holder: ScreenModel<ModelSettingsScreen>) {
    val screen = holder.model ?: return
    var endpoint by remember(screen.endpoint) { mutableStateOf(screen.endpoint) }
    var model by remember(screen.model) { mutableStateOf(screen.model) }
    var key by remember { mutableStateOf("") }
    // What was typed, handed to the core before a save or a test; the key leaves the screen at once.
    fun typed(): List<Action> {
        val actions = mutableListOf<Action>()
        if (screen.endpointEditable && endpoint != screen.endpoint) actions += Action.SetModelEndpoint(endpoint.trim())
        if (model != screen.model) actions += Action.SetModelName(model.trim())
        if (key.isNotEmpty()) actions += Action.SetApiKey(key)
        key = ""
        return actions
    }
    Page(holder.message) {
        Title(screen.title)
        Small(screen.providerLabel)
        FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
            for (provider in screen.providers) {
                FilterChip(provider.chosen, { holder.act(provider.choose) }, label = { Text(provider.name) },
                    modifier = Modifier.testTag(ScreenTags.provider(provider.id)))
            }
        }
        OutlinedTextField(endpoint, { endpoint = it }, label = { Text(screen.endpointLabel) }, singleLine = true,
            enabled = screen.endpointEditable,
            modifier = Modifier.fillMaxWidth().testTag(ScreenTags.ENDPOINT))
        OutlinedTextField(model, { model = it }, label = { Text(screen.modelLabel) }, singleLine = true,
            modifier = Modifier.fillMaxWidth().testTag(ScreenTags.MODEL))
        FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
            for (suggested in screen.suggestedModels) {
                FilterChip(suggested.label == screen.model, { holder.act(suggested.action) }, label = { Text(suggested.label) })
            }
        }
        OutlinedTextField(key, { key = it }, label = { Text(screen.keyLabel) }, singleLine = true,
            visualTransformation = PasswordVisualTransformation(),
            modifier = Modifier.fillMaxWidth().testTag(ScreenTags.KEY))
        Small(screen.keyState)
        Row(horizontalArrangement = Arrangement.spacedBy(8.dp)) {
            screen.getKey?.let { CoreButton(it) { a -> holder.act(a) } }
            screen.clearKey?.let { CoreButton(it) { a -> holder.act(a) } }
        }
        Row(horizontalArrangement = Arrangement.spacedBy(8.dp)) {
            OutlinedButton(
                onClick = { holder.act(*typed().toTypedArray()) },
                modifier = Modifier.testTag(ScreenTags.SAVE),
            ) { Text(screen.saveLabel) }
            Button(
                onClick = { holder.act(*(typed() + screen.test.action).toTypedArray()) },
                modifier = Modifier.testTag(ScreenTags.TEST),
            ) { Text(screen.test.label) }
        }
        screen.testResult?.let {
            Text(
                it,
                color = if (screen.testWorks) MaterialTheme.colorScheme.primary else MaterialTheme.colorScheme.error,
                modifier = Modifier.testTag(ScreenTags.TEST_RESULT),
            )
        }
        // The month's spend in 元 and the cap, or where to set one.
        Small(screen.monthSpend, Modifier.testTag(ScreenTags.MONTH_SPEND))
    }
}

/** The memories, the ones waiting for the user's approval first. */
@Composable
fun MemoryPage(holder: ScreenModel<MemoryInbox>) {
    val inbox = holder.model ?: return
    Page(holder.message) {
        Title(inbox.title)
        Small(inbox.explanation)
        if (inbox.memories.isEmpty()) Text(inbox.emptyLabel)
        for (memory in inbox.memories) {
            Card(Modifier.testTag(ScreenTags.memory(memory.id))) {
                Text(memory.text)
                Small("${memory.stateLabel} · ${memory.`when`}")
                Row(horizontalArrangement = Arrangement.spacedBy(8.dp)) {
                    memory.approve?.let { CoreButton(it) { a -> holder.act(a) } }
                    memory.reject?.let { CoreButton(it) { a -> holder.act(a) } }
                }
            }
        }
    }
}

/** Test tags of the jobs screen. */
object JobTags {
    const val NOTIFICATIONS_NOTE = "jobs-notifications-note"
    const val NOTIFICATIONS_FIX = "jobs-notifications-fix"
    const val NAME = "job-name"
    const val WHEN = "job-when"
    const val FIELD = "job-field"
    const val VALUE = "job-value"
    const val TITLE = "job-title"
    const val BODY = "job-body"
    const val ADD = "job-add"
    fun kind(index: Int) = "job-kind-$index"
    fun field(index: Int) = "job-field-$index"
    fun source(index: Int) = "job-source-$index"
    fun schedule(index: Int) = "job-schedule-$index"
    fun comparison(index: Int) = "job-comparison-$index"
    fun row(id: Long) = "job-$id"
    fun notice(id: Long) = "job-notice-$id"
    fun summary(id: Long) = "job-summary-$id"
    fun outcome(id: Long) = "job-outcome-$id"
}

/**
 * The scheduled jobs: when each runs next, how it went, pause or resume, remove; whether their
 * notifications can be shown; and the core's form for a new check.
 */
@Composable
fun JobsPage(holder: ScreenModel<JobsScreen>, words: (JobDraft) -> JobWords?) {
    val screen = holder.model ?: return
    Page(holder.message) {
        Title(screen.title)
        Small(screen.wakeNote)
        screen.notificationsNote?.let { note ->
            Card {
                Text(note, color = MaterialTheme.colorScheme.error, modifier = Modifier.testTag(JobTags.NOTIFICATIONS_NOTE))
                screen.notificationsFix?.let { CoreButton(it, Modifier.testTag(JobTags.NOTIFICATIONS_FIX)) { a -> holder.act(a) } }
            }
        }
        if (screen.jobs.isEmpty()) Text(screen.emptyLabel)
        for (job in screen.jobs) {
            Card(Modifier.testTag(JobTags.row(job.id))) {
                Text(job.name, fontWeight = FontWeight.Medium)
                Small(job.summary, Modifier.testTag(JobTags.summary(job.id)))
                Small(if (job.nextRun.isEmpty()) job.stateLabel else "${job.stateLabel} · ${job.nextRun}")
                Small(job.lastOutcome, Modifier.testTag(JobTags.outcome(job.id)))
                job.notice?.let { Text(it, color = MaterialTheme.colorScheme.error, style = MaterialTheme.typography.bodySmall, modifier = Modifier.testTag(JobTags.notice(job.id))) }
                Row(horizontalArrangement = Arrangement.spacedBy(8.dp)) {
                    job.fix?.let { CoreButton(it) { a -> holder.act(a) } }
                    job.pauseOrResume?.let { CoreButton(it) { a -> holder.act(a) } }
                    CoreButton(job.remove) { a -> holder.act(a) }
                }
            }
        }
        HorizontalDivider()
        JobFormSection(screen.form, words) { holder.act(it) }
    }
}

/**
 * The core's new-job form (issue 37.3): a reminder first, or a check built from choices — what
 * to watch, which of its fields (by its words), a comparison in words, a value in the field's
 * unit. The notification's words are the core's for these choices ([words]) until the student
 * edits them; nothing is typed but the name, the time, the value and the words.
 */
@OptIn(ExperimentalLayoutApi::class)
@Composable
private fun JobFormSection(form: JobForm, words: (JobDraft) -> JobWords?, act: (Action) -> Unit) {
    Section(form.title)
    var kindAt by remember { mutableStateOf(0) }
    var source by remember { mutableStateOf(0) }
    var fieldAt by remember { mutableStateOf(0) }
    var schedule by remember { mutableStateOf(0) }
    var comparison by remember { mutableStateOf(0) }
    var name by remember { mutableStateOf("") }
    var whenText by remember { mutableStateOf("") }
    var value by remember { mutableStateOf("") }
    var title by remember { mutableStateOf<String?>(null) }
    var body by remember { mutableStateOf<String?>(null) }
    val kind = form.kinds[kindAt.coerceIn(form.kinds.indices)].kind
    val checking = kind == JobKind.CHECK
    FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
        form.kinds.forEachIndexed { i, option ->
            FilterChip(i == kindAt, { kindAt = i; title = null; body = null }, label = { Text(option.label) },
                modifier = Modifier.testTag(JobTags.kind(i)))
        }
    }
    OutlinedTextField(name, { name = it }, label = { Text(form.nameLabel) }, singleLine = true,
        modifier = Modifier.fillMaxWidth().testTag(JobTags.NAME))
    val chosen = form.sources.getOrNull(source.coerceIn(0, maxOf(0, form.sources.size - 1)))
    val field = chosen?.fields?.getOrNull(fieldAt.coerceIn(0, maxOf(0, chosen.fields.size - 1)))
    val compare = form.comparisons[comparison.coerceIn(form.comparisons.indices)]
    if (checking) {
        if (chosen == null) {
            Text(form.noSourcesLabel)
            return
        }
        Small(form.sourceLabel)
        FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
            form.sources.forEachIndexed { i, option ->
                FilterChip(i == source, { source = i; fieldAt = 0 }, label = { Text(option.title) }, modifier = Modifier.testTag(JobTags.source(i)))
            }
        }
        if (chosen.fields.isNotEmpty()) {
            Small(form.fieldLabel)
            FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
                chosen.fields.forEachIndexed { i, option ->
                    FilterChip(i == fieldAt, { fieldAt = i }, label = { Text(option.label) }, modifier = Modifier.testTag(JobTags.field(i)))
                }
            }
        }
        Small(form.comparisonLabel)
        FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
            form.comparisons.forEachIndexed { i, option ->
                FilterChip(i == comparison, { comparison = i }, label = { Text(option.label) }, modifier = Modifier.testTag(JobTags.comparison(i)))
            }
        }
        if (compare.takesValue) {
            OutlinedTextField(value, { value = it }, label = { Text(form.valueLabel) }, singleLine = true,
                suffix = field?.unit?.let { unit -> { Text(unit) } },
                modifier = Modifier.fillMaxWidth().testTag(JobTags.VALUE))
        }
    }
    Small(form.scheduleLabel)
    FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
        form.schedules.forEachIndexed { i, option ->
            FilterChip(i == schedule, { schedule = i }, label = { Text(option.label) }, modifier = Modifier.testTag(JobTags.schedule(i)))
        }
    }
    val scheduleKind = form.schedules[schedule.coerceIn(form.schedules.indices)]
    OutlinedTextField(whenText, { whenText = it }, placeholder = { Text(scheduleKind.valueHint) }, singleLine = true,
        modifier = Modifier.fillMaxWidth().testTag(JobTags.WHEN))
    val draft = JobDraft(
        kind = kind, name = name, plugin = chosen?.plugin ?: "", source = chosen?.source ?: "",
        schedule = scheduleKind.kind, scheduleValue = whenText,
        field = if (checking) field?.key ?: "" else "", comparison = compare.comparison, value = value,
        notifyTitle = "", notifyBody = "",
    )
    // The core's words for these choices, until the student edits them.
    val written = words(draft)
    val shownTitle = title ?: written?.title ?: ""
    val shownBody = body ?: written?.body ?: ""
    OutlinedTextField(shownTitle, { title = it }, label = { Text(form.notifyTitleLabel) }, singleLine = true,
        modifier = Modifier.fillMaxWidth().testTag(JobTags.TITLE))
    OutlinedTextField(shownBody, { body = it }, label = { Text(form.notifyBodyLabel) },
        modifier = Modifier.fillMaxWidth().testTag(JobTags.BODY))
    if (checking) Small(form.wordsHint)
    Button(onClick = {
        act(Action.AddJob(draft.copy(notifyTitle = shownTitle, notifyBody = shownBody)))
    }, modifier = Modifier.testTag(JobTags.ADD)) { Text(form.submitLabel) }
}
