package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.SkikoComposeUiTest
import androidx.compose.ui.test.assertCountEquals
import androidx.compose.ui.test.assertIsEnabled
import androidx.compose.ui.test.assertIsNotEnabled
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.getBoundsInRoot
import androidx.compose.ui.test.hasAnyAncestor
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.hasText
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.onNodeWithText
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import androidx.compose.ui.test.performTextInput
import androidx.compose.ui.test.performTextReplacement
import edu.pku.harness.SEATS
import edu.pku.harness.ScriptedModel
import edu.pku.harness.chunk
import edu.pku.harness.core.Acted
import edu.pku.harness.core.Action
import edu.pku.harness.core.Answer
import edu.pku.harness.core.ButtonRole
import edu.pku.harness.core.ChatItemKind
import edu.pku.harness.core.CloudState
import edu.pku.harness.core.Effect
import edu.pku.harness.core.Language
import edu.pku.harness.core.Mode
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.PluginDetail
import edu.pku.harness.core.Route
import edu.pku.harness.core.ToolCallView
import edu.pku.harness.jsonString
import edu.pku.harness.startCampusSimulator
import java.nio.file.Files
import kotlinx.coroutines.runBlocking
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNotNull
import kotlin.test.assertTrue
import org.junit.Test

private const val ASK = "帮我在学一订两个座位"

internal fun callOf(id: String, name: String, args: String) = listOf(
    chunk("""{"tool_calls":[{"index":0,"id":"$id","type":"function","function":{"name":"$name","arguments":${jsonString(args)}}}]}"""),
    chunk("{}", "tool_calls"),
    "[DONE]",
)

internal fun answerOf(text: String) = listOf(chunk("""{"content":${jsonString(text)}}""", "stop"), "[DONE]")

/** The model asks to reserve seats, then answers with [answer] once the tool's result is back. */
private fun reservingModel(answer: String) = ScriptedModel(callOf("call_1", "canteen__reserve", SEATS), answerOf(answer))

@OptIn(ExperimentalTestApi::class)
private fun SkikoComposeUiTest.sendAndWaitForTheSheet(app: App) {
    onNodeWithTag(ChatTags.DRAFT).performTextInput(ASK)
    onNodeWithTag(ChatTags.SEND).performClick()
    waitUntil("the approval sheet", 10_000) { app.approvals.current != null }
    waitForTheAnswers()
}

private fun App.toolCall(): ToolCallView? =
    models.chat.model?.items?.singleOrNull { it.kind == ChatItemKind.TOOL_CALL }?.toolCall

/** The canteen plugin's mode for writes, as the core has it now. */
private fun App.writeMode(): Mode =
    harness.plugins().first { it.id == "canteen" }.modes.first { it.effect == Effect.WRITE }.mode

internal fun App.turnOver(): Boolean = models.chat.model?.let { it.runningTurn == null && it.items.any { i -> i.kind == ChatItemKind.ASSISTANT } } == true

/** The agent's call that asks, through the real library, the sheet and the chat. */
@OptIn(ExperimentalTestApi::class)
class ChatApprovalTest {
    @Test fun allow_on_the_sheet_runs_the_tool_and_the_chat_shows_it() {
        for (language in listOf(Language.ZH, Language.EN)) reservingModel("订好了：两个座位。").use { model ->
            App(language, model).use { app ->
                runPhoneTest {
                    show(app)
                    sendAndWaitForTheSheet(app)
                    val prompt = app.approvals.current!!.prompt
                    val sheet = assertNotNull(prompt.sheet)
                    assertEquals("canteen.reserve", prompt.tool)
                    assertEquals(SEATS, prompt.inputJson)
                    // The exact inputs, each row as the core laid it out: the sample gives its fields no words, so each is its name made readable.
                    assertEquals(listOf("Canteen", "Seats", "Time"), sheet.inputs.map { it.name }.sorted())
                    for (row in sheet.inputs) {
                        onAllNodes(hasText(row.value) and hasAnyAncestor(hasTestTag(ApprovalTags.input(row.name)))).assertCountEquals(1)
                    }
                    // The headline may repeat the tool's title, which the sheet shows as well.
                    assertTrue(onAllNodes(hasText(sheet.headline)).fetchSemanticsNodes().isNotEmpty(), sheet.headline)
                    onNodeWithText(sheet.reason).assertExists()
                    // Exactly the answers offered, "Always allow" as its scopes, with the core's labels.
                    assertEquals(listOf(Answer.ALLOW, Answer.DENY, Answer.ALWAYS_ALLOW), prompt.offers)
                    val buttons = sheet.answers.filter { it.role != ButtonRole.PERMANENT } + sheet.alwaysScopes
                    for (answer in Answer.entries) {
                        val shown = onAllNodes(hasTestTag(ApprovalTags.answer(answer))).fetchSemanticsNodes().size
                        assertEquals(if (buttons.any { it.answer == answer }) 1 else 0, shown, "buttons for $answer")
                    }
                    for (button in buttons) onNodeWithTag(ApprovalTags.answer(button.answer)).assertTextEquals(button.label)
                    saveScreenshot("approval", language, listOf("Canteen", "Seats", "Time", "Reservation id", "Status", "reserved", "Posts", "Amount"))

                    onNodeWithTag(ApprovalTags.answer(Answer.ALLOW)).performClick()
                    waitUntil("the turn's end", 10_000) { app.turnOver() }
                    onNodeWithTag(ApprovalTags.SHEET).assertDoesNotExist()
                    // Allow answered this call only: the canteen's writes still ask.
                    assertEquals(Mode.ASK, app.writeMode())
                    // The tool ran: its result went back to the model and is in the chat.
                    assertTrue(model.bodies[1].contains("R-20261130-0042"), model.bodies[1])
                    val call = assertNotNull(app.toolCall())
                    assertEquals(true, call.ok)
                    assertTrue(call.rawJson!!.contains("R-20261130-0042"), call.rawJson)
                    onNodeWithTag(ChatTags.callSummary(call.call)).assertTextEquals(call.summary)
                    onNodeWithText("R-20261130-0042", substring = true).assertExists()
                    onNodeWithText("订好了：两个座位。").assertExists()
                    onNodeWithTag(ChatTags.STATUS).assertTextEquals(app.models.chat.model!!.status)
                    saveScreenshot("chat", language, listOf("Canteen", "Seats", "Time", "Reservation id", "Status", "reserved", "Posts", "Amount"))
                }
            }
        }
    }

    @Test fun deny_on_the_sheet_declines_the_call_and_the_chat_shows_it() {
        reservingModel("I did not reserve the seats.").use { model ->
            App(Language.EN, model).use { app ->
                runPhoneTest {
                    show(app)
                    sendAndWaitForTheSheet(app)
                    onNodeWithTag(ApprovalTags.answer(Answer.DENY)).performClick()
                    waitUntil("the turn's end", 10_000) { app.turnOver() }
                    onNodeWithTag(ApprovalTags.SHEET).assertDoesNotExist()
                    assertTrue(model.bodies[1].contains("The user declined this call."), model.bodies[1])
                    val call = assertNotNull(app.toolCall())
                    assertEquals(false, call.ok)
                    assertEquals("You declined this", call.summary)
                    onNodeWithTag(ChatTags.callSummary(call.call)).assertTextEquals("You declined this")
                    // The student's own no has no setting to change.
                    onNodeWithTag(ChatTags.callCard(call.call)).assertDoesNotExist()
                    onNodeWithText("I did not reserve the seats.").assertExists()
                }
            }
        }
    }

    @Test fun stopping_the_turn_withdraws_its_prompt_and_the_sheet_closes() {
        reservingModel("never sent").use { model ->
            App(Language.EN, model).use { app ->
                runPhoneTest {
                    show(app)
                    sendAndWaitForTheSheet(app)
                    val shown = app.approvals.current!!
                    // An answer the prompt does not offer is no consent: ignored, the sheet stays.
                    assertFalse(app.approvals.answer(shown.id, Answer.DONT_ALLOW))
                    onNodeWithTag(ApprovalTags.SHEET).assertExists()
                    // The sheet covers the chat, so Stop is tapped through the chat's own model:
                    // the core cancels the turn and withdraws the prompt it waited on.
                    waitUntil("the running turn", 10_000) { app.models.chat.model?.cancel != null }
                    app.models.chat.act(app.models.chat.model!!.cancel!!.action)
                    waitUntil("the sheet to close", 10_000) { app.approvals.current == null }
                    onNodeWithTag(ApprovalTags.SHEET).assertDoesNotExist()
                    waitUntil("the turn's end", 10_000) { app.models.chat.model?.runningTurn == null }
                    val notice = app.models.chat.model!!.items.last()
                    assertEquals(ChatItemKind.NOTICE, notice.kind)
                    assertTrue(notice.text.startsWith("Cancelled"), notice.text)
                    onNodeWithText(notice.text).assertExists()
                    // The model was asked once: nothing went back to it after the stop.
                    assertEquals(1, model.bodies.size)
                }
            }
        }
    }

    // Issue 41.2: "Always allow" says how long — 本次对话 / 今天 / 一直 as the core gives them, apart
    // below Allow and Deny, each with what it changes; the one picked is listed on 已允许 with its
    // scope and revoked there, 活动 says the call in words, and 花钱 sets a limit typed.
    @Test fun always_allow_offers_its_scopes_and_today_is_listed_on_the_allowed_screen_then_revoked() {
        val expected = mapOf(
            Language.ZH to listOf("本次对话", "今天", "一直"),
            Language.EN to listOf("This conversation", "Today", "Always"),
        )
        for ((language, scopes) in expected) reservingModel("订好了。").use { model ->
            App(language, model).use { app ->
                runPhoneTest {
                    show(app)
                    val modeBefore = app.writeMode()
                    sendAndWaitForTheSheet(app)
                    val sheet = app.approvals.current!!.prompt.sheet!!
                    assertEquals(scopes, sheet.alwaysScopes.map { it.label })
                    assertEquals(
                        listOf(Answer.ALWAYS_ALLOW_CONVERSATION, Answer.ALWAYS_ALLOW_TODAY, Answer.ALWAYS_ALLOW),
                        sheet.alwaysScopes.map { it.answer },
                    )
                    // Allow and Deny share a row; the divider and then each scope come below
                    // them, in the core's order, each with its consequence under it.
                    val allow = onNodeWithTag(ApprovalTags.answer(Answer.ALLOW)).getBoundsInRoot()
                    val deny = onNodeWithTag(ApprovalTags.answer(Answer.DENY)).getBoundsInRoot()
                    val line = onNodeWithTag(ApprovalTags.LASTING, useUnmergedTree = true).getBoundsInRoot()
                    assertEquals(allow.top, deny.top, "Allow and Deny in one row")
                    assertTrue(line.top >= maxOf(allow.bottom, deny.bottom), "the divider below Allow and Deny")
                    var above = line.bottom
                    for (scope in sheet.alwaysScopes) {
                        val button = onNodeWithTag(ApprovalTags.answer(scope.answer)).getBoundsInRoot()
                        val words = onNodeWithTag(ApprovalTags.consequence(scope.answer)).getBoundsInRoot()
                        assertTrue(button.top >= above, "${scope.label} below what comes before it")
                        assertTrue(words.top >= button.bottom, "its consequence under it")
                        onNodeWithTag(ApprovalTags.answer(scope.answer)).assertTextEquals(scope.label)
                        onNodeWithTag(ApprovalTags.consequence(scope.answer)).assertTextEquals(scope.consequence!!)
                        above = words.bottom
                    }
                    saveScreenshot("approval-scopes", language, listOf("Canteen", "Seats", "Time", "Reservation id", "Status", "reserved", "Posts", "Amount"))

                    onNodeWithTag(ApprovalTags.answer(Answer.ALWAYS_ALLOW_TODAY)).performScrollTo().performClick()
                    waitUntil("the turn's end", 10_000) { app.turnOver() }
                    // Today's allowance ran the call and left the plugin's mode as it was.
                    assertEquals(true, assertNotNull(app.toolCall()).ok)
                    assertEquals(modeBefore, app.writeMode())

                    app.navigator.open(Route.ALLOWANCES)
                    app.models.refresh()
                    waitUntil("the allowance", 10_000) { app.models.allowances.model?.rows?.size == 1 }
                    val row = app.models.allowances.model!!.rows.single()
                    assertEquals(scopes[1], row.scopeLabel)
                    onNodeWithTag(TrustTags.allowance(0)).assertExists()
                    onNodeWithText(row.until).assertExists()
                    saveScreenshot("allowances", language)

                    app.navigator.open(Route.ACTIVITY)
                    waitUntil("the day's call", 10_000) { app.models.activity.model?.groups?.isNotEmpty() == true }
                    val call = app.models.activity.model!!.groups.flatMap { it.calls }.single { it.tool.endsWith(sheet.toolTitle) }
                    onNodeWithText(call.what).assertExists()
                    saveScreenshot("activity", language)

                    app.navigator.open(Route.SPENDING)
                    waitUntil("the limits", 10_000) { app.models.spending.model != null }
                    val perDay = app.models.spending.model!!.limits.single { it.key == "money.perDayYuan" }
                    onNodeWithTag(TrustTags.limit(perDay.key)).performTextReplacement("150")
                    onNodeWithTag(TrustTags.saveLimit(perDay.key)).performClick()
                    waitUntil("the lower limit", 10_000) {
                        app.models.spending.model?.limits?.single { it.key == perDay.key }?.yuan == "150"
                    }
                    saveScreenshot("spending-limit-saved", language)

                    app.navigator.open(Route.ALLOWANCES)
                    onNodeWithTag(TrustTags.revoke(0)).performScrollTo().performClick()
                    waitUntil("the revoke", 10_000) { app.models.allowances.model?.rows?.isEmpty() == true }
                    onNodeWithText(app.models.allowances.model!!.empty!!).assertExists()
                }
            }
        }
    }

    @Test fun a_tainted_turns_sheet_says_why_and_offers_nothing_lasting() {
        for (language in listOf(Language.ZH, Language.EN)) ScriptedModel(
            callOf("call_1", "mcp-forum__latestPosts", """{"limit":2}"""),
            callOf("call_2", "wallet__recharge", """{"amountYuan":500}"""),
            answerOf("没有充值。"),
        ).use { model ->
            App(language, model).use { app ->
                runPhoneTest {
                    show(app)
                    sendAndWaitForTheSheet(app)
                    val prompt = app.approvals.current!!.prompt
                    assertEquals("wallet.recharge", prompt.tool)
                    val note = assertNotNull(prompt.sheet!!.taintedNote)
                    onNodeWithTag(ApprovalTags.TAINTED).assertTextEquals(note)
                    onNodeWithTag(ApprovalTags.answer(Answer.ALWAYS_ALLOW)).assertDoesNotExist()
                    onNodeWithTag(ApprovalTags.LASTING, useUnmergedTree = true).assertDoesNotExist()
                    saveScreenshot("approval-tainted", language, listOf("Canteen", "Seats", "Time", "Reservation id", "Status", "reserved", "Posts", "Amount"))
                    onNodeWithTag(ApprovalTags.answer(Answer.DENY)).performClick()
                    waitUntil("the turn's end", 10_000) { app.turnOver() }
                }
            }
        }
    }

    /** The sheet alone: in a tainted turn the core offers no "Always allow", and none is shown. */
    @Test fun an_answer_the_prompt_does_not_offer_has_no_button() {
        reservingModel("unused").use { model ->
            App(Language.ZH, model).use { app ->
                runPhoneTest {
                    show(app)
                    sendAndWaitForTheSheet(app)
                    val pending = app.approvals.current!!
                    val sheet = pending.prompt.sheet!!
                    setContent {
                        HarnessTheme { ApprovalSheetView(sheet, listOf(Answer.ALLOW, Answer.DENY), {}) }
                    }
                    onNodeWithTag(ApprovalTags.answer(Answer.ALWAYS_ALLOW)).assertDoesNotExist()
                    onNodeWithTag(ApprovalTags.answer(Answer.DENY)).assertExists()
                    app.approvals.answer(pending.id, Answer.DENY)
                }
            }
        }
    }
}

@OptIn(ExperimentalTestApi::class)
class SheetGuardTest {
    @Test fun the_answers_take_no_tap_until_the_sheet_has_been_seen() {
        reservingModel("unused").use { model ->
            App(Language.EN, model).use { app ->
                var sheet: edu.pku.harness.core.ApprovalSheet? = null
                var id = 0uL
                runPhoneTest {
                    show(app)
                    sendAndWaitForTheSheet(app)
                    sheet = app.approvals.current!!.prompt.sheet
                    id = app.approvals.current!!.id
                }
                runPhoneTest {
                    val answers = mutableListOf<Answer>()
                    mainClock.autoAdvance = false
                    setContent { HarnessTheme { ApprovalSheetView(sheet!!, listOf(Answer.ALLOW, Answer.DENY), { answers += it }) } }
                    for (a in listOf(Answer.ALLOW, Answer.DENY)) onNodeWithTag(ApprovalTags.answer(a)).assertIsNotEnabled()
                    mainClock.advanceTimeBy(ANSWER_DELAY_MS - 100)
                    for (a in listOf(Answer.ALLOW, Answer.DENY)) onNodeWithTag(ApprovalTags.answer(a)).assertIsNotEnabled()
                    mainClock.advanceTimeBy(200)
                    for (a in listOf(Answer.ALLOW, Answer.DENY)) onNodeWithTag(ApprovalTags.answer(a)).assertIsEnabled()
                    onNodeWithTag(ApprovalTags.answer(Answer.DENY)).performClick()
                    assertEquals(listOf(Answer.DENY), answers)
                }
                app.approvals.answer(id, Answer.DENY)
            }
        }
    }
}

/** Plugin detail, memory, consent and attaching, through the screens on the real library. */
@OptIn(ExperimentalTestApi::class)
class ScreensTest {
    @Test fun a_mode_changed_in_plugin_detail_survives_reopening_and_the_community_clamp_is_shown() {
        // A community document asking for looser defaults than the table: write auto is
        // clamped to ask (and the core says so on the row), money off is stricter and kept.
        val file = Files.createTempFile("harness-ui-", "-PLUGIN.md")
        Files.writeString(
            file,
            "---\nid: menu\ntitle: 菜单\ndefaultModes:\n  write: auto\n  money: 'off'\ntools:\n" +
                "  - name: today\n    effect: read\n  - name: order\n    effect: write\n  - name: pay\n    effect: money\n---\n今天的菜单\n",
        )
        val dir = App(Language.EN).use { app ->
            runBlocking {
                val preview = app.harness.act(Action.PreviewLink("file://$file")) as Acted.Preview
                assertEquals(Acted.Done, app.harness.act(preview.v1.install.action))
            }
            app.models.refresh()
            runPhoneTest {
                show(app)
                val detail = openDetail(app, "menu")
                val shown = detail()!!
                val write = shown.modes.single { it.effect == Effect.WRITE }
                assertEquals(Mode.ASK, write.mode)
                assertEquals("Default", write.sourceLabel)
                assertEquals("The plugin asks for auto by default; a community plugin's defaults can only be stricter", write.note)
                onNodeWithText(write.note!!).performScrollTo().assertExists()
                val money = shown.modes.single { it.effect == Effect.MONEY }
                assertEquals(Mode.OFF to "Set by the plugin", money.mode to money.sourceLabel)
                assertEquals(null, money.note)
                saveScreenshot("plugin-detail-clamp", Language.EN)
                val read = shown.modes.single { it.effect == Effect.READ }
                val choice = read.choices.first { !it.selected }
                val mode = (choice.action as Action.SetMode).mode
                onNode(hasText(choice.label) and hasAnyAncestor(hasTestTag(ScreenTags.mode("read")))).performScrollTo().performClick()
                waitUntil("the new mode", 10_000) { detail()?.modes?.single { it.effect == Effect.READ }?.mode == mode }
                onNodeWithText("${choice.label} · Set by you").assertExists()
            }
            app.dataDir to (app.models.currentDetail!!.model!!.modes.single { it.effect == Effect.READ }.mode)
        }
        App(Language.EN, dataDir = dir.first, fresh = false).use { app ->
            runPhoneTest {
                show(app)
                val detail = openDetail(app, "menu")
                val read = detail()!!.modes.single { it.effect == Effect.READ }
                assertEquals(dir.second, read.mode)
                assertEquals("Set by you", read.sourceLabel)
                onNodeWithText("${read.modeLabel} · Set by you").assertExists()
            }
        }
    }

    @Test fun a_pending_memory_is_approved_from_the_inbox() {
        // The turn reads an attached document (untrusted), then writes a memory: it waits.
        val model = ScriptedModel(
            callOf("call_1", "files__list", "{}"),
            callOf("call_2", "memory__write", """{"text":"喜欢吃辣"}"""),
            answerOf("记下了。"),
        )
        model.use {
            App(Language.ZH, model).use { app ->
                runPhoneTest {
                    show(app)
                    onNodeWithTag(ChatTags.DRAFT).performTextInput("记住我喜欢吃辣")
                    onNodeWithTag(ChatTags.SEND).performClick()
                    waitUntil("the pending memory", 15_000) {
                        app.approvals.current?.let { app.approvals.answer(it.id, Answer.ALLOW) }
                        app.models.navigation.model?.items?.single { it.route == Route.MEMORY }?.badge == 1u
                    }
                    waitUntil("the memory's badge", 5_000) { app.models.memory.model?.pendingCount == 1u }
                    onNodeWithTag(navTag(Route.MEMORY)).performClick()
                    val pending = app.models.memory.model!!.memories.single { it.pending }
                    assertEquals("喜欢吃辣", pending.text)
                    saveScreenshot("memory", Language.ZH)
                    val approve = assertNotNull(pending.approve)
                    onNode(hasText(approve.label) and hasAnyAncestor(hasTestTag(ScreenTags.memory(pending.id)))).performClick()
                    waitUntil("the approval", 10_000) { app.models.memory.model?.memories?.single { it.id == pending.id }?.pending == false }
                    waitUntil("the badge to go", 10_000) {
                        app.models.navigation.model?.items?.single { it.route == Route.MEMORY }?.badge == null
                    }
                    assertEquals(listOf("喜欢吃辣"), app.harness.memories().filter { it.state == "active" }.map { it.text })
                }
            }
        }
    }

    @Test fun a_denied_permission_then_offers_the_system_settings() {
        App(Language.EN).use { app ->
            runPhoneTest {
                show(app)
                app.navigator.open(Route.CONSENT)
                waitUntil("consent", 10_000) { app.models.consent.model != null }
                val row = app.models.consent.model!!.permissions.single { it.permission == Permission.NOTIFICATIONS }
                val ask = assertNotNull(row.fix)
                assertEquals(Action.RequestPermission(Permission.NOTIFICATIONS), ask.action, row.toString())
                onNode(hasText(ask.label) and hasAnyAncestor(hasTestTag(ScreenTags.permission("notifications")))).performScrollTo().performClick()
                waitUntil("the denial", 10_000) {
                    app.models.consent.model!!.permissions.single { it.permission == Permission.NOTIFICATIONS }.state == PermissionState.DENIED
                }
                assertEquals(listOf(Permission.NOTIFICATIONS), app.phone.requested.toList())
                val settings = assertNotNull(app.models.consent.model!!.permissions.single { it.permission == Permission.NOTIFICATIONS }.fix)
                assertEquals(Action.OpenPermissionSettings(Permission.NOTIFICATIONS), settings.action)
                onNode(hasText(settings.label) and hasAnyAncestor(hasTestTag(ScreenTags.permission("notifications")))).performScrollTo().performClick()
                waitUntil("the settings page", 10_000) { app.phone.opened.toList() == listOf(Permission.NOTIFICATIONS) }
                assertEquals(listOf(Permission.NOTIFICATIONS), app.phone.requested.toList())
            }
        }
    }

    @Test fun a_markdown_file_is_attached_and_a_broken_pdf_refused_with_the_cores_words() {
        App(Language.ZH).use { app ->
            runPhoneTest {
                show(app)
                app.phone.document = PickedDocument("笔记.md", "# 高数\n第三章".toByteArray())
                onNodeWithTag(ChatTags.ATTACH).performClick()
                waitUntil("the document", 10_000) { app.models.chat.model?.documents == listOf("笔记.md") }
                onNodeWithTag(ChatTags.DOCUMENTS).assertTextEquals("笔记.md")
                app.phone.document = PickedDocument("课表.pdf", "%PDF-1.7".toByteArray())
                onNodeWithTag(ChatTags.ATTACH).performClick()
                waitUntil("the refusal", 10_000) { app.models.chat.message != null }
                val refusal = "文件“课表.pdf”不是能读取的 PDF，没有添加"
                assertEquals(refusal, app.models.chat.message)
                onNodeWithTag(MESSAGE_TAG).assertTextEquals(refusal)
                assertEquals(listOf("笔记.md"), app.models.chat.model?.documents)
            }
        }
    }

    /** Every screen in both languages, saved for a look; each shows its core-given title. */
    @Test fun every_screen_renders_in_both_languages() {
        val file = Files.createTempFile("harness-ui-", "-PLUGIN.md")
        Files.writeString(file, "---\nid: menu\ntitle: 菜单\ntools:\n  - name: today\n    effect: read\n  - name: order\n    effect: write\n---\n# 菜单\n")
        for (language in listOf(Language.ZH, Language.EN)) App(language).use { app ->
            runPhoneTest {
                show(app)
                val m = app.models
                fun screen(route: Route, name: String, title: () -> String?) {
                    app.navigator.open(route)
                    waitUntil(name, 10_000) { title() != null }
                    assertTrue(onAllNodes(hasText(title()!!)).fetchSemanticsNodes().isNotEmpty(), name)
                    saveScreenshot(name, language, SAMPLE_DATA)
                }
                screen(Route.PLUGINS, "plugins") { m.plugins.model?.title }
                screen(Route.CONVERSATION_SETTINGS, "conversation-settings") { m.conversationSettings.model?.title }
                screen(Route.CONSENT, "consent") { m.consent.model?.title }
                screen(Route.CAMPUS_ACCOUNT, "campus-sign-in") { m.campus.model?.title }
                screen(Route.TREEHOLE_CHECK, "treehole-check") { m.treehole.model?.title }
                screen(Route.MODEL, "model") { m.model.model?.title }
                onNodeWithText("sk-ui").assertDoesNotExist()
                screen(Route.MEMORY, "memory-empty") { m.memory.model?.title }
                screen(Route.ACTIVITY, "activity-empty") { m.activity.model?.title }
                screen(Route.ALLOWANCES, "allowances-empty") { m.allowances.model?.title }
                screen(Route.SPENDING, "spending") { m.spending.model?.title }
                screen(Route.CLOUD, "cloud-not-set-up") { m.cloud.model?.title }
                assertEquals(CloudState.NOT_SET_UP, m.cloud.model?.state)
                screen(Route.JOBS, "jobs") { m.jobs.model?.title }
                val canteen = openDetail(app, "canteen")
                saveScreenshot("plugin-detail", language, SAMPLE_DATA + canteen()!!.developer.map { it.id })
                onNodeWithTag(ScreenTags.BACK).performClick()
                onNodeWithTag(ScreenTags.LINK).performScrollTo().performTextInput("file://$file")
                onNodeWithTag(ScreenTags.ADD).performScrollTo().performClick()
                waitUntil("the add-plugin screen", 10_000) { m.plugins.preview != null || m.plugins.message != null }
                val preview = assertNotNull(m.plugins.preview, m.plugins.message)
                assertEquals("menu", preview.plugin)
                onNodeWithText(preview.title).assertExists()
                saveScreenshot("add-plugin", language, SAMPLE_DATA)
                onNodeWithText(preview.install.label).performScrollTo().performClick()
                waitUntil("the installed plugin", 10_000) { m.plugins.model?.groups?.any { g -> g.plugins.any { it.id == "menu" } } == true && m.plugins.preview == null }
                onNodeWithTag(ScreenTags.plugin("menu")).assertExists()
            }
        }
    }
}

/** The student's words and a model that calls [name] with [args], then answers [answer]. */
private fun callingModel(name: String, args: String, answer: String) = ScriptedModel(callOf("call_1", name, args), answerOf(answer))

@OptIn(ExperimentalTestApi::class)
private fun SkikoComposeUiTest.sendAndWaitForTheAnswer(app: App, words: String) {
    onNodeWithTag(ChatTags.DRAFT).performTextInput(words)
    onNodeWithTag(ChatTags.SEND).performClick()
    waitUntil("the turn's end", 10_000) { app.turnOver() }
    waitForIdle()
}

/** Nothing on the screen names a tool or plugin by its id, nor shows JSON, until the raw data's tap. */
@OptIn(ExperimentalTestApi::class)
private fun SkikoComposeUiTest.assertNoIdsNorJson() {
    for (text in listOf("wallet.", "wallet__", "canteen.", "canteen__", "{", "}")) {
        onAllNodes(hasText(text, substring = true)).assertCountEquals(0)
    }
}

/** A tool call in the chat reads like a conversation (the real library; the shipped campus card). */
@OptIn(ExperimentalTestApi::class)
class ChatToolCallTest {
    @Test fun the_card_balance_reads_as_labelled_rows_with_the_raw_data_one_tap_away() {
        val expected = mapOf(
            Language.ZH to listOf("校园卡余额", "校园卡", "已运行", "余额（元）", "显示原始数据", "隐藏原始数据"),
            Language.EN to listOf("Card balance", "Campus card", "Ran", "Balance (yuan)", "Show raw data", "Hide raw data"),
        )
        for ((language, words) in expected) callingModel("wallet__cardBalance", "{}", "42.5").use { model ->
            val (title, plugin, summary, balance, show, hide) = words
            App(language, model, campusOrigin = startCampusSimulator(), samples = false).use { app ->
                runBlocking { app.harness.act(Action.CampusSignIn("2100012345", "pku-demo-password", false)) }
                runPhoneTest {
                    show(app)
                    sendAndWaitForTheAnswer(app, "卡里还有多少钱")
                    val call = assertNotNull(app.toolCall())
                    assertEquals(listOf(title, plugin, summary), listOf(call.title, call.pluginTitle, call.summary))
                    assertEquals("42.5", call.rows.single { it.label == balance }.value)
                    onNodeWithTag(ChatTags.callTitle(call.call)).assertTextEquals(title)
                    onNodeWithText(plugin).assertExists()
                    onNodeWithTag(ChatTags.callSummary(call.call)).assertTextEquals(summary)
                    // Every row as the core labelled it, in its order.
                    for ((index, row) in call.rows.withIndex()) {
                        onNodeWithTag(ChatTags.callRow(call.call, index)).performScrollTo()
                        onAllNodes(hasText(row.label) and hasAnyAncestor(hasTestTag(ChatTags.callRow(call.call, index)))).assertCountEquals(1)
                        onAllNodes(hasText(row.value) and hasAnyAncestor(hasTestTag(ChatTags.callRow(call.call, index)))).assertCountEquals(1)
                    }
                    onNodeWithTag(ChatTags.callRawJson(call.call)).assertDoesNotExist()
                    assertNoIdsNorJson()
                    saveScreenshot("chat-rows", language)

                    onNodeWithTag(ChatTags.callRaw(call.call)).performScrollTo().assertTextEquals(show).performClick()
                    onNodeWithTag(ChatTags.callRaw(call.call)).assertTextEquals(hide)
                    onNodeWithTag(ChatTags.callRawJson(call.call)).assertExists()
                    onNodeWithText(call.rawJson!!).assertExists()
                    onNodeWithTag(ChatTags.callRaw(call.call)).performClick()
                    onNodeWithTag(ChatTags.callRawJson(call.call)).assertDoesNotExist()
                }
            }
        }
    }

    @Test fun a_card_unavailable_without_the_sign_in_offers_the_sign_in_and_its_tap_opens_the_campus_account() {
        val expected = mapOf(
            Language.ZH to listOf("被拒绝：工具不可用", "需要先登录校园账号", "登录校园账号"),
            Language.EN to listOf("Refused: the tool is not available", "This needs your campus sign-in first", "Sign in to the campus account"),
        )
        for ((language, words) in expected) callingModel("wallet__cardBalance", "{}", "要先登录。").use { model ->
            val (summary, text, label) = words
            App(language, model, campusOrigin = startCampusSimulator(), samples = false).use { app ->
                runPhoneTest {
                    show(app)
                    sendAndWaitForTheAnswer(app, "卡里还有多少钱")
                    val call = assertNotNull(app.toolCall())
                    assertEquals(summary, call.summary)
                    val card = assertNotNull(call.card)
                    assertEquals(text, card.text)
                    assertEquals(label, card.button?.label)
                    onNodeWithTag(ChatTags.callSummary(call.call)).assertTextEquals(summary)
                    onNodeWithText(text).assertExists()
                    onNodeWithTag(ChatTags.callFix(call.call)).assertTextEquals(label)
                    assertNoIdsNorJson()
                    saveScreenshot("chat-status", language)
                    onNodeWithTag(ChatTags.callFix(call.call)).performScrollTo().performClick()
                    waitUntil("the campus account screen", 10_000) { app.navigator.route.value == Route.CAMPUS_ACCOUNT }
                }
            }
        }
    }

    @Test fun a_refused_call_names_the_setting_to_change_and_opens_its_screen() {
        val expected = mapOf(
            Language.ZH to listOf(
                "被拒绝：这类操作已关闭",
                "在「插件 › 食堂」里把「写入」从「关闭」改为「询问」，它就会先问你",
                "打开「插件」",
            ),
            Language.EN to listOf(
                "Refused: this kind of action is turned off",
                "In Plugins › Canteens, set write from off to ask, and it will ask you first",
                "Open Plugins",
            ),
        )
        for ((language, words) in expected) callingModel("canteen__reserve", SEATS, "没有订。").use { model ->
            val (summary, text, label) = words
            App(language, model).use { app ->
                runBlocking { app.harness.act(Action.SetMode("canteen", Effect.WRITE, Mode.OFF)) }
                runPhoneTest {
                    show(app)
                    sendAndWaitForTheAnswer(app, ASK)
                    val call = assertNotNull(app.toolCall())
                    assertEquals(listOf(summary, text, label), listOf(call.summary, call.card?.text, call.card?.button?.label))
                    onNodeWithTag(ChatTags.callSummary(call.call)).assertTextEquals(summary)
                    onNodeWithText(text).assertExists()
                    onNodeWithTag(ChatTags.callFix(call.call)).assertTextEquals(label)
                    assertNoIdsNorJson()
                    saveScreenshot("chat-refusal", language)
                    onNodeWithTag(ChatTags.callFix(call.call)).performScrollTo().performClick()
                    waitUntil("the plugins screen", 10_000) { app.navigator.route.value == Route.PLUGINS }
                }
            }
        }
    }
}

private operator fun <T> List<T>.component6(): T = this[5]

/** Plan mode's plan is a card the student accepts; accepting ends plan mode and widens nothing. */
@OptIn(ExperimentalTestApi::class)
class PlanCardTest {
    @Test fun the_plan_is_a_card_and_its_tap_ends_plan_mode_and_asks_for_the_reservation() {
        val expected = mapOf(
            Language.ZH to listOf("计划", "按这个计划做", "我同意这个计划，请开始执行。"),
            Language.EN to listOf("Plan", "Go ahead with this plan", "I accept this plan: go ahead."),
        )
        for ((language, words) in expected) ScriptedModel(
            answerOf("1. 看学一的座位 2. 订两个座位"),
            callOf("call_1", "canteen__reserve", SEATS),
            answerOf("订好了。"),
        ).use { model ->
            val (heading, accept, said) = words
            App(language, model).use { app ->
                runBlocking {
                    app.harness.act(Action.SetPlanMode(MAIN_CONVERSATION, true))
                }
                runPhoneTest {
                    show(app)
                    onNodeWithTag(ChatTags.DRAFT).performTextInput(ASK)
                    onNodeWithTag(ChatTags.SEND).performClick()
                    waitUntil("the plan", 10_000) { app.models.chat.model?.items?.lastOrNull()?.kind == ChatItemKind.PLAN }
                    val plan = assertNotNull(app.models.chat.model!!.items.last().plan)
                    onNodeWithTag(ChatTags.PLAN).assertExists()
                    onNodeWithText(heading).assertExists()
                    onNodeWithText("1. 看学一的座位 2. 订两个座位").assertExists()
                    onNodeWithText(plan.hint).assertExists()
                    onNodeWithTag(ChatTags.PLAN_ACCEPT).assertTextEquals(accept)
                    saveScreenshot("chat-plan", language)

                    onNodeWithTag(ChatTags.PLAN_ACCEPT).performScrollTo().performClick()
                    // Plan mode ended, and the reservation the plan named still asks.
                    waitUntil("the approval sheet", 10_000) { app.approvals.current != null }
                    assertTrue(model.bodies[1].contains(said), model.bodies[1])
                    onNodeWithTag(ApprovalTags.answer(Answer.ALLOW)).performClick()
                    waitUntil("the turn's end", 10_000) { app.models.chat.model?.items?.lastOrNull()?.text == "订好了。" }
                    onNodeWithTag(ChatTags.PLAN).assertDoesNotExist()
                    assertEquals(Mode.ASK, app.writeMode())
                }
            }
        }
    }
}
