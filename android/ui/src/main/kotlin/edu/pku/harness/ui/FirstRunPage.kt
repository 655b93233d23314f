package edu.pku.harness.ui

import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Box
import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.padding
import androidx.compose.foundation.rememberScrollState
import androidx.compose.foundation.verticalScroll
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.ui.Modifier
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.FirstRunPage
import edu.pku.harness.core.SetupStep

object FirstRunTags {
    const val PAGE = "first-run"
    const val TERMS = "first-run-terms"
    const val NEXT = "first-run-next"
    const val SKIP = "first-run-skip"
}

/**
 * The first run's step the core says is next, over the whole app: its words, the terms in full
 * (scrolled), or the model's or the campus account's own screen inside the step, then its taps.
 */
@Composable
fun FirstRunContent(page: FirstRunPage, models: AppModels) {
    val holder = models.firstRun
    Column(Modifier.fillMaxSize().testTag(FirstRunTags.PAGE)) {
        Message(holder.message)
        Column(Modifier.padding(16.dp), verticalArrangement = Arrangement.spacedBy(8.dp)) {
            Small(page.progress)
            Title(page.title)
            Text(page.explanation)
        }
        Box(Modifier.weight(1f).fillMaxWidth()) {
            when (page.step) {
                SetupStep.TERMS -> Column(
                    Modifier.fillMaxSize().verticalScroll(rememberScrollState()).padding(horizontal = 16.dp).testTag(FirstRunTags.TERMS),
                    verticalArrangement = Arrangement.spacedBy(10.dp),
                ) {
                    for (paragraph in page.terms) Text(paragraph)
                }
                SetupStep.MODEL -> ModelPage(models.model)
                SetupStep.CAMPUS -> CampusAccountPage(models.campus)
                SetupStep.NOTIFICATIONS -> {}
            }
        }
        Row(Modifier.padding(16.dp), horizontalArrangement = Arrangement.spacedBy(8.dp)) {
            CoreButton(page.next, Modifier.testTag(FirstRunTags.NEXT)) { holder.act(it) }
            page.skip?.let { CoreButton(it, Modifier.testTag(FirstRunTags.SKIP)) { action -> holder.act(action) } }
        }
    }
}
