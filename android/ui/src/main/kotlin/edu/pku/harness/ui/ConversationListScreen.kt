package edu.pku.harness.ui

import androidx.compose.foundation.clickable
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.padding
import androidx.compose.foundation.lazy.LazyColumn
import androidx.compose.foundation.lazy.items
import androidx.compose.material3.HorizontalDivider
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.OutlinedTextField
import androidx.compose.material3.Text
import androidx.compose.material3.TextButton
import androidx.compose.runtime.Composable
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.Action
import edu.pku.harness.core.ConversationListScreen
import edu.pku.harness.core.ConversationRowView
import kotlinx.coroutines.delay

/** Test tags of the conversation list. */
object ConversationListTags {
    const val NEW_CHAT = "conversations-new"
    const val UNDO = "conversations-undo"
    fun row(id: String) = "conversation-$id"
    fun title(id: String) = "conversation-title-$id"
    fun rename(id: String) = "conversation-rename-$id"
    fun renameField(id: String) = "conversation-rename-field-$id"
    fun delete(id: String) = "conversation-delete-$id"
    fun spend(id: String) = "conversation-spend-$id"
}

/** The conversation list: rows newest first, a new chat, rename, delete and its undo bar. */
@Composable
fun ConversationListPage(holder: ScreenModel<ConversationListScreen>, modifier: Modifier = Modifier) {
    val screen = holder.model ?: return
    // The undo bar leaves when the core's window ends: read the screen again then.
    val until = screen.undo?.untilMs
    LaunchedEffect(until) {
        if (until != null) {
            delay((until - System.currentTimeMillis()).coerceAtLeast(0) + 50)
            holder.refresh()
        }
    }
    Column(modifier.fillMaxSize().padding(16.dp), verticalArrangement = Arrangement.spacedBy(8.dp)) {
        Row(Modifier.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
            Text(screen.title, style = MaterialTheme.typography.titleLarge, modifier = Modifier.weight(1f))
            CoreButton(screen.newChat, Modifier.testTag(ConversationListTags.NEW_CHAT)) { holder.act(it) }
        }
        Message(holder.message)
        screen.undo?.let { bar ->
            Row(Modifier.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
                Text(bar.text, modifier = Modifier.weight(1f))
                CoreButton(bar.undo, Modifier.testTag(ConversationListTags.UNDO)) { holder.act(it) }
            }
        }
        screen.empty?.let { Text(it, style = MaterialTheme.typography.bodyMedium) }
        LazyColumn(Modifier.fillMaxSize()) {
            items(screen.rows, key = { it.conversation }) { row ->
                ConversationRow(row) { holder.act(*it) }
                HorizontalDivider()
            }
        }
    }
}

@Composable
private fun ConversationRow(row: ConversationRowView, act: (Array<Action>) -> Unit) {
    var renaming by remember(row.conversation) { mutableStateOf(false) }
    var draft by remember(row.conversation) { mutableStateOf(row.title) }
    Column(
        Modifier.fillMaxWidth().clickable { act(arrayOf(row.open)) }.padding(vertical = 8.dp)
            .testTag(ConversationListTags.row(row.conversation)),
    ) {
        Row(verticalAlignment = Alignment.CenterVertically) {
            Text(
                row.title, style = MaterialTheme.typography.titleMedium, maxLines = 1,
                modifier = Modifier.weight(1f).testTag(ConversationListTags.title(row.conversation)),
            )
            Text(row.lastActive, style = MaterialTheme.typography.labelSmall)
        }
        if (row.preview.isNotEmpty()) Text(row.preview, style = MaterialTheme.typography.bodySmall, maxLines = 1)
        // This month's turns and spend in 元, when the conversation has any.
        if (row.spend.isNotEmpty()) {
            Text(
                row.spend, style = MaterialTheme.typography.labelSmall,
                modifier = Modifier.testTag(ConversationListTags.spend(row.conversation)),
            )
        }
        Row(verticalAlignment = Alignment.CenterVertically) {
            if (renaming) {
                OutlinedTextField(
                    draft, { draft = it }, singleLine = true,
                    modifier = Modifier.weight(1f).testTag(ConversationListTags.renameField(row.conversation)),
                )
                TextButton(
                    onClick = {
                        renaming = false
                        act(arrayOf(Action.RenameConversation(row.conversation, draft)))
                    },
                    modifier = Modifier.testTag(ConversationListTags.rename(row.conversation)),
                ) { Text(row.renameLabel) }
            } else {
                TextButton(
                    onClick = { renaming = true },
                    modifier = Modifier.testTag(ConversationListTags.rename(row.conversation)),
                ) { Text(row.renameLabel) }
            }
            CoreButton(row.delete, Modifier.testTag(ConversationListTags.delete(row.conversation))) { act(arrayOf(it)) }
        }
    }
}
