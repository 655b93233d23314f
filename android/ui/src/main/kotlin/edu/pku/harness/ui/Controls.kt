package edu.pku.harness.ui

import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.ExperimentalLayoutApi
import androidx.compose.foundation.layout.FlowRow
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.padding
import androidx.compose.material3.Button
import androidx.compose.material3.ButtonDefaults
import androidx.compose.material3.ExperimentalMaterial3Api
import androidx.compose.material3.FilledTonalButton
import androidx.compose.material3.FilterChip
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.OutlinedButton
import androidx.compose.material3.SegmentedButton
import androidx.compose.material3.SegmentedButtonDefaults
import androidx.compose.material3.SingleChoiceSegmentedButtonRow
import androidx.compose.material3.Text
import androidx.compose.material3.TextButton
import androidx.compose.runtime.Composable
import androidx.compose.ui.Modifier
import androidx.compose.ui.text.LinkAnnotation
import androidx.compose.ui.text.SpanStyle
import androidx.compose.ui.text.TextLinkStyles
import androidx.compose.ui.text.buildAnnotatedString
import androidx.compose.ui.text.font.FontFamily
import androidx.compose.ui.text.font.FontStyle
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.text.style.TextDecoration
import androidx.compose.ui.text.withLink
import androidx.compose.ui.text.withStyle
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.Action
import edu.pku.harness.core.BlockKind
import edu.pku.harness.core.Button as CoreButtonModel
import edu.pku.harness.core.ButtonRole
import edu.pku.harness.core.Choice
import edu.pku.harness.core.TextBlock

/** A button of the core's: its label, its role's look, and its action on tap. */
@Composable
fun CoreButton(button: CoreButtonModel, modifier: Modifier = Modifier, onAct: (Action) -> Unit) {
    when (button.role) {
        ButtonRole.PRIMARY -> Button(onClick = { onAct(button.action) }, modifier = modifier) { Text(button.label) }
        ButtonRole.NORMAL -> FilledTonalButton(onClick = { onAct(button.action) }, modifier = modifier) { Text(button.label) }
        ButtonRole.DESTRUCTIVE -> OutlinedButton(
            onClick = { onAct(button.action) },
            modifier = modifier,
            colors = ButtonDefaults.outlinedButtonColors(contentColor = MaterialTheme.colorScheme.error),
        ) { Text(button.label) }
        // Only the approval sheet's "Always allow" has this role; it draws it itself.
        ButtonRole.PERMANENT -> TextButton(onClick = { onAct(button.action) }, modifier = modifier) { Text(button.label) }
    }
}

/** The core's choices as a segmented control: one selected, a tap performs the other's action. */
@OptIn(ExperimentalMaterial3Api::class)
@Composable
fun Segments(choices: List<Choice>, modifier: Modifier = Modifier, onAct: (Action) -> Unit) {
    if (choices.isEmpty()) return
    SingleChoiceSegmentedButtonRow(modifier.fillMaxWidth()) {
        choices.forEachIndexed { index, choice ->
            SegmentedButton(
                selected = choice.selected,
                onClick = { if (!choice.selected) onAct(choice.action) },
                shape = SegmentedButtonDefaults.itemShape(index, choices.size),
            ) { Text(choice.label) }
        }
    }
}

/** Choices that wrap over lines (many, or long labels) as filter chips. */
@OptIn(ExperimentalMaterial3Api::class, ExperimentalLayoutApi::class)
@Composable
fun Chips(choices: List<Choice>, onAct: (Action) -> Unit) {
    FlowRow(horizontalArrangement = Arrangement.spacedBy(6.dp)) {
        for (choice in choices) {
            FilterChip(selected = choice.selected, onClick = { if (!choice.selected) onAct(choice.action) }, label = { Text(choice.label) })
        }
    }
}

/**
 * Markdown as the core laid it out ([TextBlock]s of styled spans): headings, list items with the
 * core's marker, code in a fixed-width face, and links whose tap is the core's action.
 */
@Composable
fun RichText(blocks: List<TextBlock>, modifier: Modifier = Modifier, onAct: (Action) -> Unit) {
    Column(modifier, verticalArrangement = Arrangement.spacedBy(4.dp)) {
        for (block in blocks) {
            val text = buildAnnotatedString {
                if (block.marker.isNotEmpty()) append("${block.marker} ")
                for (span in block.spans) {
                    val style = SpanStyle(
                        fontWeight = if (span.bold) FontWeight.Bold else null,
                        fontStyle = if (span.italic) FontStyle.Italic else null,
                        fontFamily = if (span.code) FontFamily.Monospace else null,
                    )
                    val link = span.link
                    if (link == null) {
                        withStyle(style) { append(span.text) }
                    } else {
                        val linked = TextLinkStyles(style.merge(SpanStyle(textDecoration = TextDecoration.Underline)))
                        withLink(LinkAnnotation.Clickable(span.text, linked) { onAct(link) }) { append(span.text) }
                    }
                }
            }
            val style = when (block.kind) {
                BlockKind.HEADING -> MaterialTheme.typography.titleMedium
                BlockKind.CODE -> MaterialTheme.typography.bodySmall
                else -> MaterialTheme.typography.bodyMedium
            }
            Text(text, style = style, modifier = Modifier.padding(start = (16 * block.level.toInt()).dp))
        }
    }
}
