package edu.pku.harness.ui

import androidx.compose.foundation.background
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.ExperimentalLayoutApi
import androidx.compose.foundation.layout.FlowRow
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.padding
import androidx.compose.foundation.rememberScrollState
import androidx.compose.foundation.shape.RoundedCornerShape
import androidx.compose.foundation.text.KeyboardOptions
import androidx.compose.foundation.verticalScroll
import androidx.compose.material3.Button
import androidx.compose.material3.Checkbox
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.OutlinedButton
import androidx.compose.material3.OutlinedTextField
import androidx.compose.material3.RadioButton
import androidx.compose.material3.Surface
import androidx.compose.material3.Switch
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.mutableStateMapOf
import androidx.compose.runtime.remember
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontFamily
import androidx.compose.ui.text.input.KeyboardType
import androidx.compose.ui.unit.dp
import edu.pku.harness.ElicitationReply
import edu.pku.harness.core.ButtonRole
import edu.pku.harness.core.ElicitationAction
import edu.pku.harness.core.ElicitationSheet
import edu.pku.harness.core.FieldKind
import edu.pku.harness.core.FieldValue
import edu.pku.harness.core.FormFieldRow
import edu.pku.harness.core.SignInSheet
import kotlinx.coroutines.CompletableDeferred

/** Test tags of a remote server's sheets. */
object ServerSheetTags {
    const val QUESTION = "question-sheet"
    const val QUESTION_ERROR = "question-error"
    const val QUESTION_TAINTED = "question-tainted"
    const val PAGE = "question-page"
    fun field(name: String) = "question-field-$name"
    fun option(name: String, value: String) = "question-field-$name-$value"
    fun answer(action: ElicitationAction) = "question-answer-" + action.name.lowercase()
    const val SIGN_IN = "sign-in-sheet"
    const val SIGN_IN_CONTINUE = "sign-in-continue"
    const val SIGN_IN_CANCEL = "sign-in-cancel"
}

/** A server's question on screen; its reply, once the student taps one of its answers. */
class PendingQuestion(val id: ULong, val sheet: ElicitationSheet) {
    internal val reply = CompletableDeferred<ElicitationReply>()
}

/** A sign-in sheet on screen; whether the student went on to the sign-in page. */
class PendingSignIn(val sheet: SignInSheet) {
    internal val go = CompletableDeferred<Boolean>()
}

/**
 * A remote server's question as the core wrote it: which plugin's server asks, its words marked
 * as the server's, the fields with the server's defaults filled in (text, numbers, a switch, one
 * or several choices) or the page it asks to open with its host, why the last answer was not
 * sent, and the core's three answers. What was typed goes back as text; the core reads it.
 */
@OptIn(ExperimentalLayoutApi::class)
@Composable
fun QuestionSheetView(sheet: ElicitationSheet, onReply: (ElicitationReply) -> Unit, modifier: Modifier = Modifier) {
    val typed = remember(sheet) { mutableStateMapOf<String, String>().apply { sheet.fields.forEach { put(it.name, it.value) } } }
    Surface(
        modifier = modifier.fillMaxWidth().testTag(ServerSheetTags.QUESTION),
        shape = RoundedCornerShape(topStart = 24.dp, topEnd = 24.dp),
        tonalElevation = 6.dp,
        shadowElevation = 8.dp,
    ) {
        Column(Modifier.padding(24.dp).verticalScroll(rememberScrollState()), verticalArrangement = Arrangement.spacedBy(10.dp)) {
            Text(sheet.title, style = MaterialTheme.typography.titleLarge)
            // Why the last answer was not sent, where the sheet opens again: at its top.
            sheet.error?.let {
                Text(it, color = MaterialTheme.colorScheme.error, modifier = Modifier.testTag(ServerSheetTags.QUESTION_ERROR))
            }
            Text(sheet.wordsFromServerLabel, style = MaterialTheme.typography.labelMedium)
            Text(
                sheet.message,
                style = MaterialTheme.typography.bodyLarge,
                modifier = Modifier.fillMaxWidth()
                    .background(MaterialTheme.colorScheme.surfaceVariant, RoundedCornerShape(8.dp))
                    .padding(12.dp),
            )
            sheet.taintedNote?.let { TaintedNote(it, ServerSheetTags.QUESTION_TAINTED) }
            sheet.page?.let { page ->
                Column(Modifier.testTag(ServerSheetTags.PAGE), verticalArrangement = Arrangement.spacedBy(2.dp)) {
                    Text(page.label, style = MaterialTheme.typography.bodyLarge)
                    Text(page.host, style = MaterialTheme.typography.titleMedium)
                    Text(page.url, style = MaterialTheme.typography.bodySmall, fontFamily = FontFamily.Monospace)
                }
            }
            for (field in sheet.fields) {
                FieldInput(field, typed[field.name].orEmpty()) { typed[field.name] = it }
            }
            FlowRow(Modifier.fillMaxWidth(), horizontalArrangement = Arrangement.spacedBy(8.dp, Alignment.End)) {
                for (button in sheet.answers) {
                    val tap = {
                        onReply(ElicitationReply(button.action, sheet.fields.map { FieldValue(it.name, typed[it.name].orEmpty()) }))
                    }
                    val tag = Modifier.testTag(ServerSheetTags.answer(button.action))
                    if (button.role == ButtonRole.PRIMARY) {
                        Button(onClick = tap, modifier = tag) { Text(button.label) }
                    } else {
                        OutlinedButton(onClick = tap, modifier = tag) { Text(button.label) }
                    }
                }
            }
        }
    }
}

/** One field of a server's form, drawn by its kind; [value] is its text as the core reads it. */
@Composable
internal fun FieldInput(field: FormFieldRow, value: String, onChange: (String) -> Unit) {
    val label = if (field.required) "${field.label} *" else field.label
    val tag = Modifier.testTag(ServerSheetTags.field(field.name))
    when (field.kind) {
        FieldKind.TOGGLE -> Row(tag.fillMaxWidth(), verticalAlignment = Alignment.CenterVertically) {
            Column(Modifier.weight(1f)) {
                Text(label, style = MaterialTheme.typography.bodyLarge)
                field.hint?.let { Text(it, style = MaterialTheme.typography.bodySmall) }
            }
            Switch(checked = value == "true", onCheckedChange = { onChange(if (it) "true" else "false") })
        }
        FieldKind.CHOICE, FieldKind.CHOICES -> Column(tag) {
            Text(label, style = MaterialTheme.typography.bodyLarge)
            field.hint?.let { Text(it, style = MaterialTheme.typography.bodySmall) }
            val picked = value.lines().filter { it.isNotBlank() }
            for (option in field.options) {
                Row(Modifier.testTag(ServerSheetTags.option(field.name, option.value)), verticalAlignment = Alignment.CenterVertically) {
                    if (field.kind == FieldKind.CHOICE) {
                        RadioButton(selected = option.value in picked, onClick = { onChange(option.value) })
                    } else {
                        Checkbox(checked = option.value in picked, onCheckedChange = { on ->
                            onChange((if (on) picked + option.value else picked - option.value).joinToString("\n"))
                        })
                    }
                    Text(option.label)
                }
            }
        }
        else -> OutlinedTextField(
            value = value,
            onValueChange = onChange,
            label = { Text(label) },
            supportingText = field.hint?.let { { Text(it) } },
            singleLine = true,
            keyboardOptions = KeyboardOptions(
                keyboardType = when (field.kind) {
                    FieldKind.EMAIL -> KeyboardType.Email
                    FieldKind.LINK -> KeyboardType.Uri
                    FieldKind.INTEGER -> KeyboardType.Number
                    FieldKind.NUMBER -> KeyboardType.Decimal
                    else -> KeyboardType.Text
                },
            ),
            modifier = tag.fillMaxWidth(),
        )
    }
}

/**
 * The sheet before a remote server's sign-in page opens: which server, where the student signs
 * in (the authorization server's host), that the app never sees the password, and what it asks
 * to be allowed. Continue opens the page in the system's browser; Cancel adds nothing.
 */
@Composable
fun SignInSheetView(sheet: SignInSheet, onGo: (Boolean) -> Unit, modifier: Modifier = Modifier) {
    Surface(
        modifier = modifier.fillMaxWidth().testTag(ServerSheetTags.SIGN_IN),
        shape = RoundedCornerShape(topStart = 24.dp, topEnd = 24.dp),
        tonalElevation = 6.dp,
        shadowElevation = 8.dp,
    ) {
        Column(Modifier.padding(24.dp).verticalScroll(rememberScrollState()), verticalArrangement = Arrangement.spacedBy(10.dp)) {
            Text(sheet.title, style = MaterialTheme.typography.titleLarge)
            Text(sheet.serverUrl, style = MaterialTheme.typography.bodySmall, fontFamily = FontFamily.Monospace)
            Text(sheet.explanation, style = MaterialTheme.typography.bodyLarge)
            Column(verticalArrangement = Arrangement.spacedBy(2.dp)) {
                Text(sheet.accountLabel, style = MaterialTheme.typography.labelMedium)
                Text(sheet.authorizationServer, style = MaterialTheme.typography.titleMedium)
            }
            if (sheet.scopes.isNotEmpty()) Column(verticalArrangement = Arrangement.spacedBy(2.dp)) {
                Text(sheet.scopesLabel, style = MaterialTheme.typography.labelMedium)
                for (scope in sheet.scopes) Text("• $scope", fontFamily = FontFamily.Monospace)
            }
            // The page the browser opens, in full: the student can see whose it is.
            Text(sheet.page, style = MaterialTheme.typography.bodySmall, fontFamily = FontFamily.Monospace, maxLines = 2)
            Row(Modifier.fillMaxWidth(), horizontalArrangement = Arrangement.spacedBy(8.dp, Alignment.End)) {
                OutlinedButton(onClick = { onGo(false) }, modifier = Modifier.testTag(ServerSheetTags.SIGN_IN_CANCEL)) {
                    Text(sheet.cancelLabel)
                }
                Button(onClick = { onGo(true) }, modifier = Modifier.testTag(ServerSheetTags.SIGN_IN_CONTINUE)) {
                    Text(sheet.continueLabel)
                }
            }
        }
    }
}
