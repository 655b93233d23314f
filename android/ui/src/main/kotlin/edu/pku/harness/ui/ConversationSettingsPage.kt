package edu.pku.harness.ui

import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.ExperimentalLayoutApi
import androidx.compose.foundation.layout.FlowRow
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.material3.ExperimentalMaterial3Api
import androidx.compose.material3.FilledTonalButton
import androidx.compose.material3.FilterChip
import androidx.compose.material3.OutlinedButton
import androidx.compose.material3.OutlinedTextField
import androidx.compose.material3.Text
import androidx.compose.material3.TextButton
import androidx.compose.runtime.Composable
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableIntStateOf
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.Action
import edu.pku.harness.core.ConversationSettingsScreen
import edu.pku.harness.core.RuleForm
import edu.pku.harness.core.ScopeKind

/** Test tags of the conversation settings. */
object ConversationTags {
    const val SITE = "conversation-scope-site"
    const val ADD_SITE = "conversation-scope-add-site"
    const val ADD_RULE = "conversation-rule-add"
    fun scopeRemove(index: Int) = "conversation-scope-remove-$index"
    fun ruleKind(index: Int) = "conversation-rule-kind-$index"
    fun rulePlugin(index: Int) = "conversation-rule-plugin-$index"
    fun ruleTool(index: Int) = "conversation-rule-tool-$index"
    fun rulePlace(index: Int) = "conversation-rule-place-$index"
}

/**
 * One conversation's model, thinking, preset, plan mode, scope and rules: the scope's entries
 * with their removal and a site typed in, and a rule made from the core's lists. What each
 * choice means and whether a change holds is the core's; this page keeps only what is picked.
 */
@Composable
fun ConversationSettingsPage(holder: ScreenModel<ConversationSettingsScreen>) {
    val screen = holder.model ?: return
    val act: (Action) -> Unit = { holder.act(it) }
    Page(holder.message) {
        Title(screen.title)
        Section(screen.modelLabel)
        Text(screen.model ?: screen.defaultModel)
        Section(screen.thinkingLabel)
        Chips(screen.thinking, act)
        Section(screen.presetLabel)
        Chips(screen.presets, act)
        Small(screen.presetNote)
        SwitchRow(screen.planModeLabel, screen.planMode, screen.planModeToggle, onAct = act)

        Section(screen.scopeLabel)
        Small(screen.scopeNote)
        screen.scope.forEachIndexed { index, row ->
            RemovableLine("${row.kind}  ${row.value}", ConversationTags.scopeRemove(index)) { act(row.remove) }
        }
        var site by remember(screen.conversation) { mutableStateOf("") }
        Row(verticalAlignment = Alignment.CenterVertically, horizontalArrangement = Arrangement.spacedBy(8.dp)) {
            OutlinedTextField(
                site,
                { site = it },
                label = { Text(screen.addHostLabel) },
                supportingText = { Text(screen.hostHint) },
                singleLine = true,
                modifier = Modifier.weight(1f).testTag(ConversationTags.SITE),
            )
            FilledTonalButton(
                onClick = {
                    holder.act(Action.SetScopeEntry(screen.conversation, ScopeKind.HOST, site, true))
                        .invokeOnCompletion { if (holder.message == null) site = "" }
                },
                modifier = Modifier.testTag(ConversationTags.ADD_SITE),
            ) { Text(screen.addHostLabel) }
        }
        for (folder in screen.addFolders) OutlinedButton(onClick = { act(folder.action) }) { Text(folder.label) }

        Section(screen.rulesLabel)
        screen.noRulesNote?.let { Small(it) }
        for (rule in screen.rules) RemovableLine(rule.text) { act(rule.remove) }
        Section(screen.globalRulesLabel)
        for (rule in screen.globalRules) RemovableLine(rule.text) { act(rule.remove) }
        Card { RuleFormCard(screen.addRule, act) }
    }
}

/** The rule form: a kind (with what it does), a plugin, one of its tools, and where it applies. */
@OptIn(ExperimentalLayoutApi::class, ExperimentalMaterial3Api::class)
@Composable
private fun RuleFormCard(form: RuleForm, act: (Action) -> Unit) {
    var kind by remember { mutableIntStateOf(0) }
    var plugin by remember { mutableIntStateOf(0) }
    var tool by remember { mutableIntStateOf(0) }
    var place by remember { mutableIntStateOf(0) }
    val plugins = form.plugins
    if (plugins.isEmpty() || form.kinds.isEmpty() || form.places.isEmpty()) return
    val picked = plugins[plugin.coerceIn(plugins.indices)]
    Text(form.title, fontWeight = FontWeight.Medium)
    Small(form.kindLabel)
    FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
        form.kinds.forEachIndexed { index, choice ->
            FilterChip(kind == index, { kind = index }, { Text(choice.label) }, Modifier.testTag(ConversationTags.ruleKind(index)))
        }
    }
    Small(form.kinds[kind.coerceIn(form.kinds.indices)].note)
    Small(form.pluginLabel)
    FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
        plugins.forEachIndexed { index, choice ->
            FilterChip(plugin == index, { plugin = index; tool = 0 }, { Text(choice.title) }, Modifier.testTag(ConversationTags.rulePlugin(index)))
        }
    }
    Small(form.toolLabel)
    FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
        picked.tools.forEachIndexed { index, choice ->
            FilterChip(tool == index, { tool = index }, { Text(choice.label) }, Modifier.testTag(ConversationTags.ruleTool(index)))
        }
    }
    Small(form.placeLabel)
    FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
        form.places.forEachIndexed { index, choice ->
            FilterChip(place == index, { place = index }, { Text(choice.label) }, Modifier.testTag(ConversationTags.rulePlace(index)))
        }
    }
    FilledTonalButton(
        onClick = {
            val target = picked.tools[tool.coerceIn(picked.tools.indices)]
            act(Action.AddRule(form.places[place.coerceIn(form.places.indices)].conversation, form.kinds[kind.coerceIn(form.kinds.indices)].kind, target.tool))
        },
        modifier = Modifier.testTag(ConversationTags.ADD_RULE),
    ) { Text(form.addLabel) }
}

@Composable
private fun RemovableLine(text: String, tag: String? = null, remove: () -> Unit) {
    Row(Modifier.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
        Text(text, modifier = Modifier.weight(1f))
        TextButton(onClick = remove, modifier = if (tag != null) Modifier.testTag(tag) else Modifier) { Text("✕") }
    }
}
