package edu.pku.harness.ui

import androidx.compose.foundation.Image
import androidx.compose.foundation.background
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Box
import androidx.compose.foundation.clickable
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.PaddingValues
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.heightIn
import androidx.compose.foundation.layout.padding
import androidx.compose.foundation.layout.widthIn
import androidx.compose.foundation.lazy.LazyColumn
import androidx.compose.foundation.lazy.itemsIndexed
import androidx.compose.foundation.lazy.rememberLazyListState
import androidx.compose.foundation.shape.RoundedCornerShape
import androidx.compose.material3.Button
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.OutlinedButton
import androidx.compose.material3.OutlinedTextField
import androidx.compose.material3.Surface
import androidx.compose.material3.Text
import androidx.compose.material3.TextButton
import androidx.compose.runtime.Composable
import androidx.compose.runtime.CompositionLocalProvider
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.graphics.ImageBitmap
import androidx.compose.ui.layout.ContentScale
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontFamily
import androidx.compose.ui.text.font.FontStyle
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.Action
import edu.pku.harness.core.ChatItem
import edu.pku.harness.core.ChatItemKind
import edu.pku.harness.core.ChatScreen
import edu.pku.harness.core.PlanCard
import edu.pku.harness.core.ToolCallView

/** Test tags of the chat. */
object ChatTags {
    const val NEW_CHAT = "chat-new"
    const val CONVERSATIONS = "chat-conversations"
    const val DRAFT = "chat-draft"
    const val SEND = "chat-send"
    const val CANCEL = "chat-cancel"
    const val ATTACH = "chat-attach"
    const val STATUS = "chat-status"
    const val DOCUMENTS = "chat-documents"
    const val CAMPUS_NOTICE = "chat-campus-notice"
    const val PLAN = "chat-plan"
    const val PLAN_ACCEPT = "chat-plan-accept"
    const val USAGE = "chat-usage"
    fun example(index: Int) = "chat-example-$index"
    fun item(index: Int) = "chat-item-$index"
    fun callTitle(call: String) = "chat-call-$call-title"
    fun callSummary(call: String) = "chat-call-$call-summary"
    fun callRow(call: String, index: Int) = "chat-call-$call-row-$index"
    fun callCard(call: String) = "chat-call-$call-card"
    fun callFix(call: String) = "chat-call-$call-fix"
    fun callRaw(call: String) = "chat-call-$call-raw"
    fun callRawJson(call: String) = "chat-call-$call-raw-json"
    fun callImage(call: String, index: Int) = "chat-call-$call-image-$index"
    fun callLink(call: String, index: Int) = "chat-call-$call-link-$index"
}

/** Test tag of the line that shows the core's words for a refused tap. */
const val MESSAGE_TAG = "screen-message"

/**
 * The chat as the core reads it: its messages, each tool call with what was decided and its
 * result, the turn's status, the attached documents, and the composer. [openSettings] (with the
 * conversation settings' own title as its label) leads to the conversation's settings.
 */
@Composable
fun ChatPage(holder: ScreenModel<ChatScreen>, settingsLabel: String?, openSettings: () -> Unit, modifier: Modifier = Modifier) {
    val chat = holder.model ?: return
    var draft by remember { mutableStateOf("") }
    val list = rememberLazyListState()
    LaunchedEffect(chat.items.size) { if (chat.items.isNotEmpty()) list.animateScrollToItem(chat.items.size - 1) }
    Column(modifier.fillMaxSize()) {
        Row(Modifier.fillMaxWidth().padding(horizontal = 16.dp, vertical = 8.dp), verticalAlignment = Alignment.CenterVertically) {
            Text(chat.title, style = MaterialTheme.typography.titleLarge, modifier = Modifier.weight(1f), maxLines = 1)
            CoreButton(chat.conversations, Modifier.testTag(ChatTags.CONVERSATIONS)) { holder.act(it) }
            CoreButton(chat.newChat, Modifier.testTag(ChatTags.NEW_CHAT)) { holder.act(it) }
            if (settingsLabel != null) TextButton(onClick = openSettings) { Text(settingsLabel) }
        }
        Message(holder.message)
        LazyColumn(
            Modifier.weight(1f).fillMaxWidth(),
            state = list,
            contentPadding = PaddingValues(12.dp),
            verticalArrangement = Arrangement.spacedBy(8.dp),
        ) {
            itemsIndexed(chat.items) { index, item -> ChatLine(item, Modifier.testTag(ChatTags.item(index))) { holder.act(it) } }
            // An empty chat: what the installed plugins can do, each a tap that sends it.
            if (chat.examples.isNotEmpty()) {
                item { Text(chat.examplesLabel, style = MaterialTheme.typography.titleMedium) }
                itemsIndexed(chat.examples) { index, example ->
                    OutlinedButton(onClick = { holder.act(example.action) }, modifier = Modifier.testTag(ChatTags.example(index))) {
                        Text(example.label)
                    }
                }
            }
        }
        Column(Modifier.fillMaxWidth().padding(horizontal = 12.dp, vertical = 6.dp), verticalArrangement = Arrangement.spacedBy(4.dp)) {
            Text(chat.status, style = MaterialTheme.typography.labelMedium, modifier = Modifier.testTag(ChatTags.STATUS))
            chat.planModeNote?.let { Text(it, style = MaterialTheme.typography.labelMedium, color = MaterialTheme.colorScheme.tertiary) }
            chat.campusNotice?.let { CoreButton(it, Modifier.testTag(ChatTags.CAMPUS_NOTICE)) { a -> holder.act(a) } }
            if (chat.documents.isNotEmpty()) {
                Text(
                    chat.documents.joinToString("  ·  "),
                    style = MaterialTheme.typography.labelMedium,
                    modifier = Modifier.testTag(ChatTags.DOCUMENTS),
                )
            }
            OutlinedTextField(
                value = draft,
                onValueChange = { draft = it },
                placeholder = { Text(chat.placeholder) },
                modifier = Modifier.fillMaxWidth().testTag(ChatTags.DRAFT),
            )
            Row(horizontalArrangement = Arrangement.spacedBy(8.dp), verticalAlignment = Alignment.CenterVertically) {
                CoreButton(chat.attach, Modifier.testTag(ChatTags.ATTACH)) { holder.act(it) }
                Box(Modifier.weight(1f))
                chat.cancel?.let { cancel -> CoreButton(cancel, Modifier.testTag(ChatTags.CANCEL)) { holder.act(it) } }
                Button(
                    onClick = {
                        val text = draft.trim()
                        draft = ""
                        holder.act(Action.SendMessage(chat.conversation, text))
                    },
                    enabled = chat.canSend && draft.isNotBlank(),
                    modifier = Modifier.testTag(ChatTags.SEND),
                ) { Text(chat.sendLabel) }
            }
        }
    }
}

@Composable
private fun ChatLine(item: ChatItem, modifier: Modifier, onAct: (Action) -> Unit) {
    when (item.kind) {
        ChatItemKind.USER -> Row(modifier.fillMaxWidth(), horizontalArrangement = Arrangement.End) {
            Bubble(item.text, MaterialTheme.colorScheme.primaryContainer)
        }
        ChatItemKind.ASSISTANT -> {
            // The turn's usage, shown when the student taps the answer (issue 42: on request).
            var showUsage by remember(item) { mutableStateOf(false) }
            Column(
                modifier.fillMaxWidth().let { m -> item.usage?.let { m.clickable { showUsage = !showUsage } } ?: m },
            ) {
                Row { Bubble(item.text, MaterialTheme.colorScheme.surfaceVariant) }
                item.usage?.takeIf { showUsage }?.let {
                    Text(
                        it,
                        style = MaterialTheme.typography.labelSmall,
                        color = MaterialTheme.colorScheme.outline,
                        modifier = Modifier.padding(horizontal = 8.dp).testTag(ChatTags.USAGE),
                    )
                }
            }
        }
        ChatItemKind.THINKING -> Text(
            item.text,
            modifier = modifier.padding(horizontal = 8.dp),
            style = MaterialTheme.typography.bodySmall,
            fontStyle = FontStyle.Italic,
            color = MaterialTheme.colorScheme.outline,
        )
        ChatItemKind.NOTICE -> Text(
            item.text,
            modifier = modifier.fillMaxWidth(),
            style = MaterialTheme.typography.labelMedium,
            color = MaterialTheme.colorScheme.error,
        )
        ChatItemKind.TOOL_CALL -> item.toolCall?.let { ToolCall(it, modifier, onAct) }
        ChatItemKind.PLAN -> item.plan?.let { Plan(item.text, it, modifier, onAct) }
    }
}

/** Plan mode's plan: the agent's words under the core's heading, its accept tap and its hint. */
@Composable
private fun Plan(text: String, card: PlanCard, modifier: Modifier, onAct: (Action) -> Unit) {
    Surface(
        modifier.fillMaxWidth(),
        shape = RoundedCornerShape(12.dp),
        color = MaterialTheme.colorScheme.tertiaryContainer,
    ) {
        // The item's own tag is on the surface; the plan's is on what it holds.
        Column(Modifier.testTag(ChatTags.PLAN).padding(12.dp), verticalArrangement = Arrangement.spacedBy(8.dp)) {
            Text(card.heading, fontWeight = FontWeight.Medium, style = MaterialTheme.typography.titleSmall)
            Text(text, style = MaterialTheme.typography.bodyLarge)
            CoreButton(card.accept, Modifier.testTag(ChatTags.PLAN_ACCEPT), onAct)
            Text(card.hint, style = MaterialTheme.typography.bodySmall, color = MaterialTheme.colorScheme.outline)
        }
    }
}

/**
 * A tool call as the core words it: its title and its plugin's, one line of what happened, the
 * result's labelled rows, the card with the tap that fixes it, and the raw JSON behind a toggle.
 */
@Composable
private fun ToolCall(call: ToolCallView, modifier: Modifier, onAct: (Action) -> Unit) {
    var raw by remember(call.call) { mutableStateOf(false) }
    Surface(modifier.fillMaxWidth(), shape = RoundedCornerShape(12.dp), tonalElevation = 2.dp) {
        Column(Modifier.padding(12.dp), verticalArrangement = Arrangement.spacedBy(4.dp)) {
            Row(verticalAlignment = Alignment.CenterVertically, horizontalArrangement = Arrangement.spacedBy(8.dp)) {
                Text(call.title, fontWeight = FontWeight.Medium, modifier = Modifier.testTag(ChatTags.callTitle(call.call)))
                if (call.pluginTitle.isNotEmpty()) {
                    Text(call.pluginTitle, style = MaterialTheme.typography.labelMedium, color = MaterialTheme.colorScheme.outline)
                }
            }
            if (call.summary.isNotEmpty()) {
                Text(
                    call.summary,
                    style = MaterialTheme.typography.labelLarge,
                    color = if (call.ok == false) MaterialTheme.colorScheme.error else MaterialTheme.colorScheme.primary,
                    modifier = Modifier.testTag(ChatTags.callSummary(call.call)),
                )
            }
            for ((index, row) in call.rows.withIndex()) {
                Row(Modifier.fillMaxWidth().testTag(ChatTags.callRow(call.call, index)), horizontalArrangement = Arrangement.spacedBy(12.dp)) {
                    Text(row.label, style = MaterialTheme.typography.bodySmall, color = MaterialTheme.colorScheme.outline, modifier = Modifier.weight(1f))
                    Text(row.value, style = MaterialTheme.typography.bodyMedium, modifier = Modifier.weight(1.4f))
                }
            }
            // A server's pictures, drawn; one that does not decode is its words.
            val decode = LocalPictures.current
            for ((index, image) in call.images.withIndex()) {
                val picture = remember(image.bytes) { decode(image.bytes) }
                if (picture != null) {
                    Image(
                        picture,
                        contentDescription = image.description,
                        modifier = Modifier.heightIn(max = 240.dp).testTag(ChatTags.callImage(call.call, index)),
                        contentScale = ContentScale.Fit,
                    )
                } else {
                    Text(
                        image.description,
                        style = MaterialTheme.typography.bodySmall,
                        color = MaterialTheme.colorScheme.outline,
                        modifier = Modifier.testTag(ChatTags.callImage(call.call, index)),
                    )
                }
            }
            // A server's links: an https page opens in the browser; another address is shown.
            for ((index, link) in call.links.withIndex()) {
                Column(Modifier.fillMaxWidth().testTag(ChatTags.callLink(call.call, index))) {
                    val open = link.open
                    if (open != null) {
                        TextButton(onClick = { onAct(open) }, contentPadding = PaddingValues(0.dp)) { Text(link.title) }
                    } else {
                        Text(link.title, style = MaterialTheme.typography.bodyMedium)
                    }
                    link.detail?.let { Text(it, style = MaterialTheme.typography.bodySmall) }
                    Text(link.address, style = MaterialTheme.typography.labelSmall, color = MaterialTheme.colorScheme.outline)
                }
            }
            call.card?.let { card ->
                Surface(Modifier.fillMaxWidth().testTag(ChatTags.callCard(call.call)), shape = RoundedCornerShape(8.dp), color = MaterialTheme.colorScheme.secondaryContainer) {
                    Column(Modifier.padding(10.dp), verticalArrangement = Arrangement.spacedBy(6.dp)) {
                        Text(card.text, style = MaterialTheme.typography.bodyMedium)
                        card.button?.let { CoreButton(it, Modifier.testTag(ChatTags.callFix(call.call)), onAct) }
                    }
                }
            }
            TextButton(onClick = { raw = !raw }, modifier = Modifier.testTag(ChatTags.callRaw(call.call))) {
                Text(if (raw) call.hideRawLabel else call.showRawLabel)
            }
            if (raw) {
                Column(Modifier.testTag(ChatTags.callRawJson(call.call)), verticalArrangement = Arrangement.spacedBy(4.dp)) {
                    Text(call.inputJson, fontFamily = FontFamily.Monospace, style = MaterialTheme.typography.bodySmall)
                    call.rawJson?.let { Text(it, fontFamily = FontFamily.Monospace, style = MaterialTheme.typography.bodySmall) }
                }
            }
        }
    }
}

@Composable
private fun Bubble(text: String, color: androidx.compose.ui.graphics.Color) {
    Text(
        text,
        modifier = Modifier.widthIn(max = 300.dp).background(color, RoundedCornerShape(14.dp)).padding(10.dp),
        style = MaterialTheme.typography.bodyLarge,
    )
}

/** The core's words for a refused tap (it names what is wrong), or nothing. */
@Composable
fun Message(message: String?) {
    if (message == null) return
    Text(
        message,
        modifier = Modifier.fillMaxWidth()
            .background(MaterialTheme.colorScheme.errorContainer)
            .padding(12.dp)
            .testTag(MESSAGE_TAG),
        color = MaterialTheme.colorScheme.onErrorContainer,
    )
}

@Composable
fun HarnessTheme(pictures: (ByteArray) -> ImageBitmap? = { null }, content: @Composable () -> Unit) {
    CompositionLocalProvider(LocalPictures provides pictures) {
        MaterialTheme(content = content)
    }
}
