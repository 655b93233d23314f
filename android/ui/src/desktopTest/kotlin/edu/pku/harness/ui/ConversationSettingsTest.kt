package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import androidx.compose.ui.test.performTextInput
import androidx.compose.ui.test.performTextReplacement
import edu.pku.harness.core.Language
import edu.pku.harness.core.Route
import kotlin.test.assertEquals
import org.junit.Test

/** The conversation settings' scope and rules, changed by taps on the real library. */
@OptIn(ExperimentalTestApi::class)
class ConversationSettingsTest {
    @Test fun a_site_and_a_rule_added_by_taps_are_the_conversations_and_a_bad_site_is_refused_in_words() {
        for (language in listOf(Language.ZH, Language.EN)) App(language).use { app ->
            runPhoneTest {
                show(app)
                val settings = app.models.conversationSettings
                app.navigator.open(Route.CONVERSATION_SETTINGS)
                waitUntil("the settings", 10_000) { settings.model != null }
                saveScreenshot("conversation-settings-empty", language, SAMPLE_DATA)

                onNodeWithTag(ConversationTags.SITE).performScrollTo().performTextInput("exa*mple.com")
                onNodeWithTag(ConversationTags.ADD_SITE).performScrollTo().performClick()
                waitUntil("the refusal", 10_000) { settings.message != null }
                val refusal = when (language) {
                    Language.ZH -> "添加网站：「exa*mple.com」不是网站的写法；写 pku.edu.cn（含子域名）、*.pku.edu.cn（只含子域名）或 *（任何网站）"
                    Language.EN -> "Add a site: \"exa*mple.com\" is not how a site is written; write pku.edu.cn (with its subdomains), *.pku.edu.cn (subdomains only) or * (any site)"
                }
                assertEquals(refusal, settings.message)
                assertEquals(emptyList(), settings.model!!.scope)

                onNodeWithTag(ConversationTags.SITE).performScrollTo().performTextReplacement("pku.edu.cn")
                onNodeWithTag(ConversationTags.ADD_SITE).performScrollTo().performClick()
                waitUntil("the site", 10_000) { settings.model?.scope?.map { it.value } == listOf("pku.edu.cn") }

                // 禁止 · the first plugin's first tool, in this conversation only.
                val form = settings.model!!.addRule
                onNodeWithTag(ConversationTags.ruleKind(0)).performScrollTo().performClick()
                onNodeWithTag(ConversationTags.rulePlugin(0)).performScrollTo().performClick()
                onNodeWithTag(ConversationTags.ruleTool(1)).performScrollTo().performClick()
                onNodeWithTag(ConversationTags.rulePlace(0)).performScrollTo().performClick()
                onNodeWithTag(ConversationTags.ADD_RULE).performScrollTo().performClick()
                waitUntil("the rule", 10_000) { settings.model?.rules?.size == 1 }
                val tool = form.plugins[0].tools[1].label.substringBefore(when (language) { Language.ZH -> "（"; Language.EN -> " (" })
                val expected = when (language) {
                    Language.ZH -> "禁止：${form.plugins[0].title} · $tool"
                    Language.EN -> "Block: ${form.plugins[0].title} · $tool"
                }
                assertEquals(expected, settings.model!!.rules.single().text)
                assertEquals(emptyList(), settings.model!!.globalRules.map { it.text })
                saveScreenshot("conversation-settings-edited", language, SAMPLE_DATA + "exa*mple.com")
            }
        }
    }
}
