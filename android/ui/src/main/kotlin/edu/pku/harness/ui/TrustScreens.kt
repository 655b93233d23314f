package edu.pku.harness.ui

import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.ExperimentalLayoutApi
import androidx.compose.foundation.layout.FlowRow
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.padding
import androidx.compose.foundation.shape.RoundedCornerShape
import androidx.compose.material3.FilledTonalButton
import androidx.compose.material3.FilterChip
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.OutlinedTextField
import androidx.compose.material3.Surface
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.Action
import edu.pku.harness.core.ActivityFilter
import edu.pku.harness.core.ActivityScreen
import edu.pku.harness.core.AllowancesScreen
import edu.pku.harness.core.LabelValue
import edu.pku.harness.core.SpendingScreen
import edu.pku.harness.core.UndoBar

/** Test tags of 活动, 已允许 and 花钱. */
object TrustTags {
    const val ACTIVITY_SPENT = "activity-spent"
    fun activityPlugin(id: String) = "activity-plugin-$id"
    fun activityEffect(effect: String) = "activity-effect-$effect"
    fun activityGroup(index: Int) = "activity-group-$index"
    fun allowance(index: Int) = "allowance-$index"
    fun revoke(index: Int) = "allowance-revoke-$index"
    fun limit(key: String) = "money-limit-$key"
    fun saveLimit(key: String) = "money-limit-save-$key"
    const val SPENT_TODAY = "money-spent-today"
}

/**
 * 活动: today's calls in the core's words, grouped by conversation (the student's taps and the
 * scheduled checks apart), filtered by plugin and effect, with the day's spend.
 */
@OptIn(ExperimentalLayoutApi::class)
@Composable
fun ActivityPage(holder: ScreenModel<ActivityScreen>, filter: (ActivityFilter) -> Unit) {
    val screen = holder.model ?: return
    Page(holder.message) {
        Title(screen.title)
        Small(screen.day)
        LabelledValue(screen.spent, Modifier.testTag(TrustTags.ACTIVITY_SPENT))
        FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
            for (plugin in screen.plugins) {
                val on = screen.filter.plugin == plugin.id
                FilterChip(
                    on,
                    { filter(screen.filter.copy(plugin = if (on) null else plugin.id)) },
                    label = { Text(plugin.label) },
                    modifier = Modifier.testTag(TrustTags.activityPlugin(plugin.id)),
                )
            }
        }
        FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
            for (choice in screen.effects) {
                val on = screen.filter.effect == choice.effect
                FilterChip(
                    on,
                    { filter(screen.filter.copy(effect = if (on) null else choice.effect)) },
                    label = { Text(choice.label) },
                    modifier = Modifier.testTag(TrustTags.activityEffect(choice.effect.name.lowercase())),
                )
            }
        }
        screen.empty?.let { Text(it) }
        screen.groups.forEachIndexed { index, group ->
            Section(group.title)
            Card(Modifier.testTag(TrustTags.activityGroup(index))) {
                for (call in group.calls) {
                    Row(verticalAlignment = Alignment.CenterVertically) {
                        Text(call.tool, fontWeight = FontWeight.Medium, modifier = Modifier.weight(1f))
                        Small(call.`when`)
                    }
                    if (call.effectLabel.isNotEmpty()) {
                        Text(call.effectLabel, style = MaterialTheme.typography.labelMedium, color = MaterialTheme.colorScheme.tertiary)
                    }
                    Text(call.what, style = MaterialTheme.typography.bodyMedium)
                }
            }
        }
    }
}

/** 已允许: each "Always allow" in force (tool, scope, since, until), each with its revoke. */
@Composable
fun AllowancesPage(holder: ScreenModel<AllowancesScreen>) {
    val screen = holder.model ?: return
    Page(holder.message) {
        Title(screen.title)
        Small(screen.note)
        screen.empty?.let { Text(it) }
        screen.rows.forEachIndexed { index, row ->
            Card(Modifier.testTag(TrustTags.allowance(index))) {
                Text("${row.pluginTitle} · ${row.toolTitle}", fontWeight = FontWeight.Medium)
                Text(row.effectLabel, style = MaterialTheme.typography.labelMedium, color = MaterialTheme.colorScheme.tertiary)
                Text(row.scopeLabel)
                Small(row.since)
                Small(row.until)
                CoreButton(row.revoke, Modifier.testTag(TrustTags.revoke(index))) { holder.act(it) }
            }
        }
    }
}

/** 花钱: the two money limits, each set from what the student types, and today's spend. */
@Composable
fun SpendingPage(holder: ScreenModel<SpendingScreen>) {
    val screen = holder.model ?: return
    Page(holder.message) {
        Title(screen.title)
        LabelledValue(screen.today, Modifier.testTag(TrustTags.SPENT_TODAY))
        for (limit in screen.limits) {
            // What is typed stays until saved; a new value from the core starts it again.
            var typed by remember(limit.yuan) { mutableStateOf(limit.yuan) }
            Row(verticalAlignment = Alignment.CenterVertically, horizontalArrangement = Arrangement.spacedBy(8.dp)) {
                OutlinedTextField(
                    typed,
                    { typed = it },
                    label = { Text(limit.label) },
                    singleLine = true,
                    modifier = Modifier.weight(1f).testTag(TrustTags.limit(limit.key)),
                )
                FilledTonalButton(
                    onClick = { holder.act(Action.SetMoneyLimit(limit.key, typed)) },
                    modifier = Modifier.testTag(TrustTags.saveLimit(limit.key)),
                ) { Text(screen.saveLabel) }
            }
        }
        Small(screen.note)
    }
}

/** A label and its value on one line, as the core words them. */
@Composable
private fun LabelledValue(row: LabelValue, modifier: Modifier = Modifier) {
    Row(modifier.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
        Text(row.label, modifier = Modifier.weight(1f))
        Text(row.value, fontWeight = FontWeight.Medium)
    }
}

/** Test tags of the 撤销 bar. */
object HeldTags {
    fun bar(index: Int) = "held-call-$index"
    fun undo(index: Int) = "held-call-undo-$index"
}

/**
 * The 撤销 bar: each public call waiting out its undo window in the core's words, with the tap
 * that takes it back before anything is sent. Nothing while none waits.
 */
@Composable
fun HeldCallsBar(holder: ScreenModel<List<UndoBar>>, modifier: Modifier = Modifier) {
    val bars = holder.model.orEmpty()
    if (bars.isEmpty()) return
    Column(modifier.fillMaxWidth().padding(12.dp), verticalArrangement = Arrangement.spacedBy(8.dp)) {
        bars.forEachIndexed { index, bar ->
            Surface(
                Modifier.fillMaxWidth().testTag(HeldTags.bar(index)),
                shape = RoundedCornerShape(12.dp),
                color = MaterialTheme.colorScheme.inverseSurface,
                shadowElevation = 6.dp,
            ) {
                Row(Modifier.padding(horizontal = 16.dp, vertical = 8.dp), verticalAlignment = Alignment.CenterVertically) {
                    Text(bar.text, color = MaterialTheme.colorScheme.inverseOnSurface, modifier = Modifier.weight(1f))
                    CoreButton(bar.undo, Modifier.testTag(HeldTags.undo(index))) { holder.act(it) }
                }
            }
        }
    }
}
