package edu.pku.harness.ui

import androidx.compose.foundation.background
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.PaddingValues
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.padding
import androidx.compose.foundation.lazy.LazyColumn
import androidx.compose.foundation.lazy.itemsIndexed
import androidx.compose.foundation.lazy.rememberLazyListState
import androidx.compose.foundation.shape.RoundedCornerShape
import androidx.compose.material3.Button
import androidx.compose.material3.HorizontalDivider
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.OutlinedButton
import androidx.compose.material3.OutlinedTextField
import androidx.compose.material3.Surface
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.graphics.Color
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontFamily
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.unit.dp
import edu.pku.harness.Answer
import edu.pku.harness.ApprovalPrompt

/** Test tags of the chat screen. */
object ChatTags {
    const val MESSAGES = "chat-messages"
    const val DRAFT = "chat-draft"
    const val SEND = "chat-send"
    const val CANCEL = "chat-cancel"
    const val TURN_STATE = "chat-turn-state"
    fun toolCall(call: String) = "chat-tool-$call"
}

/**
 * The chat: the conversation so far (the student's messages, the assistant's text as it
 * streams, each tool call with the core's decision and its result), the turn's state, and the
 * field to write in, with Send, or Stop while a turn runs. The approval sheet covers it while
 * [prompt] (number [promptId]) waits for an answer. Plain data in, callbacks out: [ChatModel] and [ApprovalHost]
 * own the calls to the Harness.
 */
@Composable
fun ChatScreen(
    state: ChatState,
    labels: Labels,
    prompt: ApprovalPrompt?,
    promptId: ULong?,
    onDraftChange: (String) -> Unit,
    onSend: () -> Unit,
    onCancel: () -> Unit,
    onAnswer: (Answer) -> Unit,
) {
    WithApprovalSheet(prompt, promptId, labels, onAnswer) {
        Surface(Modifier.fillMaxSize()) {
            Column(Modifier.fillMaxSize()) {
                Row(
                    Modifier.fillMaxWidth().padding(horizontal = 16.dp, vertical = 12.dp),
                    verticalAlignment = Alignment.CenterVertically,
                ) {
                    Text(labels.chatTitle, style = MaterialTheme.typography.titleLarge, modifier = Modifier.weight(1f))
                    Text(
                        labels.turnState(state.turnState),
                        style = MaterialTheme.typography.labelLarge,
                        color = MaterialTheme.colorScheme.secondary,
                        modifier = Modifier.testTag(ChatTags.TURN_STATE),
                    )
                }
                HorizontalDivider()
                val list = rememberLazyListState()
                LaunchedEffect(state.items.size) {
                    if (state.items.isNotEmpty()) list.animateScrollToItem(state.items.lastIndex)
                }
                LazyColumn(
                    Modifier.weight(1f).fillMaxWidth().testTag(ChatTags.MESSAGES),
                    state = list,
                    verticalArrangement = Arrangement.spacedBy(8.dp),
                    contentPadding = PaddingValues(16.dp),
                ) {
                    itemsIndexed(state.items) { _, item -> ChatLine(item, labels) }
                }
                HorizontalDivider()
                Row(
                    Modifier.fillMaxWidth().padding(12.dp),
                    verticalAlignment = Alignment.CenterVertically,
                    horizontalArrangement = Arrangement.spacedBy(8.dp),
                ) {
                    OutlinedTextField(
                        value = state.draft,
                        onValueChange = onDraftChange,
                        placeholder = { Text(labels.messageHint) },
                        modifier = Modifier.weight(1f).testTag(ChatTags.DRAFT),
                    )
                    if (state.running) {
                        OutlinedButton(onClick = onCancel, modifier = Modifier.testTag(ChatTags.CANCEL)) { Text(labels.cancel) }
                    } else {
                        Button(
                            onClick = onSend,
                            enabled = state.draft.isNotBlank(),
                            modifier = Modifier.testTag(ChatTags.SEND),
                        ) { Text(labels.send) }
                    }
                }
            }
        }
    }
}

@Composable
private fun ChatLine(item: ChatItem, labels: Labels) {
    when (item) {
        is ChatItem.User -> Bubble(labels.you, item.text, MaterialTheme.colorScheme.primaryContainer, end = true)
        is ChatItem.Assistant -> Bubble(labels.assistant, item.text, MaterialTheme.colorScheme.surfaceVariant, end = false)
        is ChatItem.ToolCall -> ToolCallCard(item, labels)
        is ChatItem.Notice -> Text(
            item.text,
            style = MaterialTheme.typography.bodySmall,
            color = MaterialTheme.colorScheme.secondary,
            modifier = Modifier.fillMaxWidth(),
        )
    }
}

@Composable
private fun Bubble(who: String, text: String, color: Color, end: Boolean) {
    Column(Modifier.fillMaxWidth(), horizontalAlignment = if (end) Alignment.End else Alignment.Start) {
        Text(who, style = MaterialTheme.typography.labelSmall)
        Text(
            text,
            modifier = Modifier.background(color, RoundedCornerShape(12.dp)).padding(horizontal = 12.dp, vertical = 8.dp),
            style = MaterialTheme.typography.bodyLarge,
        )
    }
}

@Composable
private fun ToolCallCard(call: ChatItem.ToolCall, labels: Labels) {
    Surface(
        shape = RoundedCornerShape(12.dp),
        color = MaterialTheme.colorScheme.secondaryContainer,
        modifier = Modifier.fillMaxWidth().testTag(ChatTags.toolCall(call.call)),
    ) {
        Column(Modifier.padding(12.dp), verticalArrangement = Arrangement.spacedBy(4.dp)) {
            Text("${labels.tool}: ${call.tool ?: call.name}", fontWeight = FontWeight.Medium)
            Text(prettyJson(call.input), fontFamily = FontFamily.Monospace, style = MaterialTheme.typography.bodySmall)
            call.verdict?.let { verdict ->
                val answer = call.answer?.let { " → " + labels.answer(it) } ?: ""
                Text(labels.verdict(verdict) + answer, style = MaterialTheme.typography.labelLarge)
            }
            call.ok?.let { ok ->
                Text("${labels.resultLabel}: ${labels.outcome(ok)}", style = MaterialTheme.typography.labelLarge)
                call.result?.let {
                    Text(prettyJson(it), fontFamily = FontFamily.Monospace, style = MaterialTheme.typography.bodySmall)
                }
            }
        }
    }
}

/** The chat wired to its state holders: what the app's activity and the tests show. */
@Composable
fun ChatRoute(chat: ChatModel, approvals: ApprovalHost, labels: Labels) {
    val pending = approvals.current
    ChatScreen(
        state = chat.state,
        labels = labels,
        prompt = pending?.prompt,
        promptId = pending?.id,
        onDraftChange = chat::onDraftChange,
        onSend = chat::send,
        onCancel = chat::cancel,
        onAnswer = { answer -> pending?.let { approvals.answer(it.id, answer) } },
    )
}

/** The app's Material 3 theme (the platform's dynamic colours come later, on Android). */
@Composable
fun HarnessTheme(content: @Composable () -> Unit) {
    MaterialTheme(content = content)
}
