package edu.pku.harness.ui

import androidx.compose.foundation.background
import androidx.compose.foundation.clickable
import androidx.compose.foundation.interaction.MutableInteractionSource
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Box
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.ExperimentalLayoutApi
import androidx.compose.foundation.layout.FlowRow
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.padding
import androidx.compose.foundation.rememberScrollState
import androidx.compose.foundation.shape.RoundedCornerShape
import androidx.compose.foundation.verticalScroll
import androidx.compose.material3.Button
import androidx.compose.material3.ButtonDefaults
import androidx.compose.material3.HorizontalDivider
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.OutlinedButton
import androidx.compose.material3.Surface
import androidx.compose.material3.Text
import androidx.compose.material3.TextButton
import androidx.compose.runtime.Composable
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.runtime.getValue
import androidx.compose.runtime.key
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.runtime.withFrameMillis
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.graphics.Color
import androidx.compose.ui.platform.LocalFocusManager
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontFamily
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.Answer
import edu.pku.harness.core.AnswerButton
import edu.pku.harness.core.ApprovalSheet
import edu.pku.harness.core.ButtonRole

/** How long a new approval sheet ignores taps, in milliseconds. */
const val ANSWER_DELAY_MS = 500L

/** Test tags of the approval sheet. */
object ApprovalTags {
    const val SHEET = "approval-sheet"
    const val INPUTS = "approval-inputs"
    fun input(name: String) = "approval-input-$name"
    fun answer(answer: Answer) = "approval-answer-" + answer.name.lowercase()
    /** What an answer changes beyond this call, under its button. */
    fun consequence(answer: Answer) = "approval-consequence-" + answer.name.lowercase()
    /** The line between the answers for this call and the one that lasts. */
    const val LASTING = "approval-lasting"
    const val TAINTED = "approval-tainted"
    const val DESTRUCTIVE = "approval-destructive"
}

/**
 * The approval sheet as the core wrote it: what asks (plugin and tool), what it would do (effect
 * and the exact inputs), why the user is asked, and one button for each of the core's answers
 * that the prompt offers ([offers]), in the core's order, and no other (DESIGN.md: in a tainted
 * turn "Always allow" is not offered, so it must not appear here either). Allow is the filled
 * button, Deny an outlined one beside it; an answer that outlasts the call ("Always allow", role
 * PERMANENT) sits apart below a divider, as a plain text button with the core's words for what it
 * changes under it, so that one slip meant for Allow cannot change a permission for good; where
 * the core gives its scopes (`alwaysScopes`: 本次对话 / 今天 / 一直), one such button each.
 */
@OptIn(ExperimentalLayoutApi::class)
@Composable
fun ApprovalSheetView(sheet: ApprovalSheet, offers: List<Answer>, onAnswer: (Answer) -> Unit, modifier: Modifier = Modifier) {
    // A sheet that slides in under a finger already on its way to the screen below (Stop, Send)
    // must not take that tap as an answer: its buttons wait ANSWER_DELAY_MS before they work.
    // The caller keys the sheet by the prompt's id, so each new prompt waits again.
    var armed by remember { mutableStateOf(false) }
    LaunchedEffect(Unit) {
        // Counted in frames, as animations are, so that the time is the screen's own (a test's
        // clock drives it exactly; a plain delay there would pass at once).
        val shown = withFrameMillis { it }
        while (withFrameMillis { it } - shown < ANSWER_DELAY_MS) Unit
        armed = true
    }
    Surface(
        modifier = modifier.fillMaxWidth().testTag(ApprovalTags.SHEET),
        shape = RoundedCornerShape(topStart = 24.dp, topEnd = 24.dp),
        tonalElevation = 6.dp,
        shadowElevation = 8.dp,
    ) {
        Column(
            Modifier.padding(24.dp).verticalScroll(rememberScrollState()),
            verticalArrangement = Arrangement.spacedBy(10.dp),
        ) {
            Text(sheet.title, style = MaterialTheme.typography.labelLarge, color = MaterialTheme.colorScheme.primary)
            Text(sheet.headline, style = MaterialTheme.typography.headlineSmall)
            // A remote server's title is third-party text (DESIGN.md §5): say so above it.
            if (sheet.wordsFromServer) Text(sheet.wordsFromServerLabel, style = MaterialTheme.typography.labelMedium)
            Text("${sheet.pluginTitle} · ${sheet.toolTitle}", style = MaterialTheme.typography.bodyLarge, fontWeight = FontWeight.Medium)
            Text(sheet.effectLabel, style = MaterialTheme.typography.labelLarge, color = MaterialTheme.colorScheme.tertiary)
            Column(
                Modifier.fillMaxWidth()
                    .background(MaterialTheme.colorScheme.surfaceVariant, RoundedCornerShape(8.dp))
                    .padding(12.dp)
                    .testTag(ApprovalTags.INPUTS),
                verticalArrangement = Arrangement.spacedBy(4.dp),
            ) {
                for (row in sheet.inputs) {
                    Column(Modifier.testTag(ApprovalTags.input(row.name))) {
                        Text(row.name, style = MaterialTheme.typography.labelMedium)
                        Text(row.value, style = MaterialTheme.typography.bodyLarge, fontFamily = FontFamily.Monospace)
                    }
                }
                // A call with nothing the core could lay out as rows still shows what it sends.
                if (sheet.inputs.isEmpty()) Text(prettyJson(sheet.inputJson), fontFamily = FontFamily.Monospace)
            }
            Column(verticalArrangement = Arrangement.spacedBy(2.dp)) {
                Text(sheet.reasonLabel, style = MaterialTheme.typography.labelMedium)
                Text(sheet.reason, style = MaterialTheme.typography.bodyLarge)
            }
            // In a tainted turn: why nothing lasting is offered (DESIGN.md §3).
            sheet.taintedNote?.let { TaintedNote(it, ApprovalTags.TAINTED) }
            // A remote server's word that the tool may delete or overwrite.
            sheet.destructiveNote?.let { note ->
                Text(
                    note,
                    style = MaterialTheme.typography.bodyMedium,
                    color = MaterialTheme.colorScheme.error,
                    modifier = Modifier.testTag(ApprovalTags.DESTRUCTIVE),
                )
            }
            val shown = sheet.answers.filter { it.answer in offers }
            FlowRow(
                modifier = Modifier.fillMaxWidth(),
                horizontalArrangement = Arrangement.spacedBy(8.dp, Alignment.End),
            ) {
                for (button in shown) if (button.role != ButtonRole.PERMANENT) {
                    SheetAnswer(button, armed, onAnswer)
                }
            }
            // "Always allow" with its scopes (this conversation, today, always) where the core
            // offers them, each saying what it changes; else the one lasting answer.
            val lasting = shown.filter { it.role == ButtonRole.PERMANENT }
            val scoped = lasting.any { it.answer == Answer.ALWAYS_ALLOW } && sheet.alwaysScopes.isNotEmpty()
            if (lasting.isNotEmpty()) HorizontalDivider(Modifier.padding(top = 6.dp).testTag(ApprovalTags.LASTING))
            for (button in if (scoped) sheet.alwaysScopes else lasting) {
                Column(verticalArrangement = Arrangement.spacedBy(2.dp)) {
                    SheetAnswer(button, armed, onAnswer)
                    button.consequence?.let {
                        Text(
                            it,
                            style = MaterialTheme.typography.bodySmall,
                            color = MaterialTheme.colorScheme.onSurfaceVariant,
                            modifier = Modifier.padding(horizontal = 12.dp).testTag(ApprovalTags.consequence(button.answer)),
                        )
                    }
                }
            }
        }
    }
}

/** One answer in its role's look: Allow filled, Deny outlined, "Always allow" plain text. */
@Composable
private fun SheetAnswer(button: AnswerButton, armed: Boolean, onAnswer: (Answer) -> Unit) {
    val modifier = Modifier.testTag(ApprovalTags.answer(button.answer))
    val onClick = { onAnswer(button.answer) }
    val label = @Composable { Text(button.label) }
    when (button.role) {
        ButtonRole.PRIMARY -> Button(onClick = onClick, enabled = armed, modifier = modifier) { label() }
        ButtonRole.NORMAL -> OutlinedButton(onClick = onClick, enabled = armed, modifier = modifier) { label() }
        ButtonRole.DESTRUCTIVE -> OutlinedButton(
            onClick = onClick,
            enabled = armed,
            modifier = modifier,
            colors = ButtonDefaults.outlinedButtonColors(contentColor = MaterialTheme.colorScheme.error),
        ) { label() }
        ButtonRole.PERMANENT -> TextButton(onClick = onClick, enabled = armed, modifier = modifier) { label() }
    }
}

/**
 * [content] with the host's current prompt over it: a scrim takes the taps meant for the screen
 * below, so the only way on is one of the sheet's answers.
 */
@Composable
fun WithApprovalSheet(approvals: ApprovalHost, content: @Composable () -> Unit) {
    val pending = approvals.current
    val focus = LocalFocusManager.current
    Box(Modifier.fillMaxSize()) {
        content()
        val sheet = pending?.prompt?.sheet
        if (pending != null && sheet != null) key(pending.id) {
            // Nothing below the sheet keeps the focus: a draft field would keep the keyboard up
            // over the sheet's answers and take keys the student cannot see land (and its
            // blinking cursor would run for as long as the sheet waits).
            LaunchedEffect(Unit) { focus.clearFocus(force = true) }
            Scrim()
            ApprovalSheetView(
                sheet,
                pending.prompt.offers,
                { approvals.answer(pending.id, it) },
                Modifier.align(Alignment.BottomCenter),
            )
        }
        // A remote server's sheets, under the same scrim, when no approval is up.
        val question = approvals.question
        val signIn = approvals.signIn
        if (pending == null && (question != null || signIn != null)) {
            LaunchedEffect(question?.id, signIn) { focus.clearFocus(force = true) }
            Scrim()
            if (question != null) key(question.id) {
                QuestionSheetView(question.sheet, { approvals.reply(question.id, it) }, Modifier.align(Alignment.BottomCenter))
            } else if (signIn != null) key(signIn) {
                SignInSheetView(signIn.sheet, { approvals.answerSignIn(it) }, Modifier.align(Alignment.BottomCenter))
            }
        }
    }
}

/** Dims the screen below a sheet and takes the taps meant for it. */
@Composable
private fun Scrim() = Box(
    Modifier
        .fillMaxSize()
        .background(Color.Black.copy(alpha = 0.32f))
        .clickable(interactionSource = remember { MutableInteractionSource() }, indication = null) {},
)

/** A sheet's note that its turn read text written by others, in the tertiary container's look. */
@Composable
internal fun TaintedNote(note: String, tag: String) = Text(
    note,
    style = MaterialTheme.typography.bodyMedium,
    color = MaterialTheme.colorScheme.onTertiaryContainer,
    modifier = Modifier.fillMaxWidth()
        .background(MaterialTheme.colorScheme.tertiaryContainer, RoundedCornerShape(8.dp))
        .padding(12.dp)
        .testTag(tag),
)
