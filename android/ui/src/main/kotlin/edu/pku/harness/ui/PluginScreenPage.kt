package edu.pku.harness.ui

import androidx.compose.foundation.clickable
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Box
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.padding
import androidx.compose.material3.Card
import androidx.compose.material3.HorizontalDivider
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.Text
import androidx.compose.material3.TextButton
import androidx.compose.runtime.Composable
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateMapOf
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.Action
import edu.pku.harness.core.FieldValue
import edu.pku.harness.core.PluginScreen
import edu.pku.harness.core.ScreenSection
import edu.pku.harness.core.SectionKind
import edu.pku.harness.core.SectionState
import edu.pku.harness.core.TodayScreen
import edu.pku.harness.core.TodayTile

object PluginScreenTags {
    fun section(index: Int) = "plugin-section-$index"
    fun send(index: Int) = "plugin-section-send-$index"
    fun tile(plugin: String, source: String) = "today-tile-$plugin-$source"
    fun row(section: Int, row: Int) = "plugin-section-$section-row-$row"
    fun remove(plugin: String, source: String) = "today-remove-$plugin-$source"
    fun moveUp(plugin: String, source: String) = "today-up-$plugin-$source"
    fun add(index: Int) = "today-add-$index"
    const val PAY_CODE = "today-pay-code"
    const val EDIT = "today-edit"
}

/**
 * A plugin's declared screen (DESIGN.md §2), the one renderer for every plugin: the core's
 * sections drawn by their kind — a value's labelled rows, a list's lines, a table's columns, a
 * form's inputs with its send, an action's button — and each section's own state (loading
 * until the core answers; empty, error, or the sign-in or check it waits for, with its tap).
 * No plugin code runs here; each tap is the core's Action, the student's own call.
 */
@Composable
fun PluginScreenPage(holder: ScreenModel<PluginScreen>) {
    val screen = holder.model
    Page(holder.message) {
        if (screen == null) {
            Small(LOADING)
            return@Page
        }
        Title(screen.title)
        screen.sections.forEachIndexed { index, section -> SectionCard(index, section, holder) }
    }
}

/** What a page shows while the core reads it: no words to translate. */
private const val LOADING = "…"

@Composable
private fun SectionCard(index: Int, section: ScreenSection, holder: ScreenModel<PluginScreen>) {
    Card(Modifier.fillMaxWidth().testTag(PluginScreenTags.section(index))) {
        Column(Modifier.padding(12.dp), verticalArrangement = Arrangement.spacedBy(6.dp)) {
            if (section.kind != SectionKind.ACTION) Section(section.title)
            section.age?.let { Small(it) }
            if (section.state != SectionState.READY) {
                section.message?.let {
                    val color = if (section.state == SectionState.ERROR) MaterialTheme.colorScheme.error else MaterialTheme.colorScheme.onSurfaceVariant
                    Text(it, color = color)
                }
                section.button?.let { CoreButton(it) { action -> holder.act(action) } }
                return@Column
            }
            when (section.kind) {
                SectionKind.VALUE -> for (row in section.values) LabelledRow(row.label, row.value)
                SectionKind.LIST -> section.rows.forEachIndexed { at, row ->
                    // An item the section declares opens a screen (a post its thread): the core's tap.
                    val open = section.rowOpens.getOrNull(at)
                    val tap = open?.let { action -> Modifier.clickable { holder.act(action) } } ?: Modifier
                    Column(Modifier.fillMaxWidth().testTag(PluginScreenTags.row(index, at)).then(tap)) {
                        Text(row.firstOrNull().orEmpty(), fontWeight = FontWeight.Medium)
                        if (row.size > 1) Small(row.drop(1).joinToString(" · "))
                    }
                    HorizontalDivider()
                }
                SectionKind.TABLE -> {
                    TableRow(section.columns, header = true)
                    section.rows.forEachIndexed { at, row ->
                        val open = section.rowOpens.getOrNull(at)
                        val tap = open?.let { action -> Modifier.clickable { holder.act(action) } } ?: Modifier
                        Box(Modifier.testTag(PluginScreenTags.row(index, at)).then(tap)) { TableRow(row, header = false) }
                    }
                }
                SectionKind.FORM -> FormSection(index, section, holder)
                SectionKind.ACTION -> section.button?.let { CoreButton(it) { action -> holder.act(action) } }
            }
        }
    }
}

@Composable
private fun LabelledRow(label: String, value: String) {
    Row(Modifier.fillMaxWidth(), horizontalArrangement = Arrangement.SpaceBetween) {
        Text(label, color = MaterialTheme.colorScheme.onSurfaceVariant)
        Text(value, fontWeight = FontWeight.Medium)
    }
}

@Composable
private fun TableRow(cells: List<String>, header: Boolean) {
    Row(Modifier.fillMaxWidth(), horizontalArrangement = Arrangement.spacedBy(8.dp)) {
        for (cell in cells) {
            Text(
                cell,
                Modifier.weight(1f),
                style = if (header) MaterialTheme.typography.labelMedium else MaterialTheme.typography.bodyMedium,
                fontWeight = if (header) FontWeight.Medium else null,
            )
        }
    }
}

/** A form: the core's fields, typed here, sent as the core's SubmitScreenForm with the values. */
@Composable
private fun FormSection(index: Int, section: ScreenSection, holder: ScreenModel<PluginScreen>) {
    val typed = remember(section.fields) { mutableStateMapOf<String, String>().apply { section.fields.forEach { put(it.name, it.value) } } }
    for (field in section.fields) FieldInput(field, typed[field.name].orEmpty()) { typed[field.name] = it }
    val send = section.button ?: return
    val submit = send.action as? Action.SubmitScreenForm ?: return
    CoreButton(send, Modifier.testTag(PluginScreenTags.send(index))) {
        holder.act(submit.copy(values = typed.map { (name, value) -> FieldValue(name, value) }))
    }
}

/**
 * Today: the core's tiles, each a data source's first lines with its age, a tap opening where
 * the core says the source is shown (its `open`, or the fix that mends what it waits for), and
 * the pay code one tap away. Its edit mode is this page's alone: each change in it (remove,
 * move up or down, add) is the core's Action, and the tiles are read again after it.
 */
@Composable
fun TodayPage(holder: ScreenModel<TodayScreen>) {
    val today = holder.model
    var editing by remember { mutableStateOf(false) }
    Page(holder.message) {
        if (today == null) {
            Small(LOADING)
            return@Page
        }
        Row(Modifier.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
            Box(Modifier.weight(1f)) { Title(today.title) }
            TextButton(onClick = { editing = !editing }, modifier = Modifier.testTag(PluginScreenTags.EDIT)) {
                Text(if (editing) today.doneLabel else today.editLabel)
            }
        }
        today.payCode?.let { CoreButton(it, Modifier.testTag(PluginScreenTags.PAY_CODE)) { action -> holder.act(action) } }
        today.empty?.let { Small(it) }
        for (tile in today.tiles) Tile(tile, editing, holder)
        if (editing && today.addable.isNotEmpty()) {
            Section(today.addLabel)
            today.addable.forEachIndexed { index, add ->
                CoreButton(add, Modifier.testTag(PluginScreenTags.add(index))) { action -> holder.act(action) }
            }
        }
    }
}

@Composable
private fun Tile(tile: TodayTile, editing: Boolean, holder: ScreenModel<TodayScreen>) {
    val tap = tile.open?.takeIf { !editing }?.let { action -> Modifier.clickable { holder.act(action) } } ?: Modifier
    Card(Modifier.fillMaxWidth().testTag(PluginScreenTags.tile(tile.plugin, tile.source)).then(tap)) {
        Column(Modifier.padding(12.dp), verticalArrangement = Arrangement.spacedBy(4.dp)) {
            Row(Modifier.fillMaxWidth(), horizontalArrangement = Arrangement.SpaceBetween, verticalAlignment = Alignment.CenterVertically) {
                Box(Modifier.weight(1f)) { Section(tile.title) }
                if (editing) {
                    tile.moveUp?.let { up ->
                        TextButton(onClick = { holder.act(up) }, modifier = Modifier.testTag(PluginScreenTags.moveUp(tile.plugin, tile.source))) { Text("↑") }
                    }
                    tile.moveDown?.let { down -> TextButton(onClick = { holder.act(down) }) { Text("↓") } }
                    TextButton(onClick = { holder.act(tile.remove) }, modifier = Modifier.testTag(PluginScreenTags.remove(tile.plugin, tile.source))) {
                        Text("✕", color = MaterialTheme.colorScheme.error)
                    }
                } else {
                    tile.age?.let { Small(it) }
                }
            }
            for (line in tile.lines) LabelledRow(line.label, line.value)
            tile.message?.let { Text(it, color = MaterialTheme.colorScheme.onSurfaceVariant) }
            if (!editing) tile.fix?.let { CoreButton(it) { action -> holder.act(action) } }
        }
    }
}
