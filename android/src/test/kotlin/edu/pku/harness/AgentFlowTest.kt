package edu.pku.harness

import edu.pku.harness.core.Actor
import edu.pku.harness.core.Answer
import edu.pku.harness.core.ApprovalNotice
import edu.pku.harness.core.ButtonRole
import edu.pku.harness.core.DecisionStep
import edu.pku.harness.core.Effect
import edu.pku.harness.core.Mode
import edu.pku.harness.core.ModeSource
import edu.pku.harness.core.PromptKind
import edu.pku.harness.core.RefusalCode
import org.junit.Test
import kotlin.test.assertEquals
import kotlin.test.assertNull
import kotlin.test.assertTrue

/** The agent's calls in a conversation: prompts answered by the Kotlin Platform. */
class AgentFlowTest {
    private val askWrite = Verdict.Ask(PromptKind.ORDINARY, listOf(Answer.ALLOW, Answer.DENY, Answer.ALWAYS_ALLOW))
    // In a tainted turn nothing permanent is one tap away: Allow / Deny only.
    private val askTainted = Verdict.Ask(PromptKind.CONFIRM, listOf(Answer.ALLOW, Answer.DENY))

    @Test fun an_agent_read_runs_without_a_prompt() = runTest {
        val platform = ScriptedPlatform()
        val harness = sampleHarness(platform)
        val call = harness.invokeAsAgent("c1", "wallet.cardBalance", "{}")
        assertEquals(Decision(Verdict.Run, DecisionStep.MODE, null), call.decision)
        assertEquals(Outcome.Ran(BALANCE, BALANCE), call.outcome)
        assertEquals(BALANCE, call.forModel)
        assertNull(call.prompt)
        assertEquals(0, platform.prompts.size)
    }

    @Test fun a_community_write_asks_and_allow_runs_it_once() = runTest {
        val platform = ScriptedPlatform(Answer.ALLOW)
        val harness = sampleHarness(platform)
        val call = harness.invokeAsAgent("c1", "canteen.reserve", SEATS)
        val expectedPrompt = ApprovalPrompt(
            plugin = "canteen", pluginTitle = "食堂", tool = "canteen.reserve", toolTitle = "预订餐位",
            effect = Effect.WRITE, inputJson = SEATS, kind = PromptKind.ORDINARY,
            offers = listOf(Answer.ALLOW, Answer.DENY, Answer.ALWAYS_ALLOW), headline = "预订餐位",
            reason = "canteen's mode for write is ask", conversation = "c1", sheet = null,
            notice = ApprovalNotice(title = "助手在等你确认：食堂 · 预订餐位", body = "解锁后查看并回答", answerableThere = false),
        )
        val (id, shown) = platform.prompts.single()
        assertEquals(1uL to expectedPrompt, id to shown.copy(sheet = null))
        // The sheet the platform shows comes whole from the core, in the language setting.
        val sheet = shown.sheet!!
        // The student reads the plugin's title; the prompt's reason, for the agent and the
        // audit, keeps its id.
        assertEquals("食堂 的「写入」权限为「询问」", sheet.reason)
        assertEquals(listOf("允许", "拒绝", "始终允许"), sheet.answers.map { it.label })
        assertEquals(listOf(ButtonRole.PRIMARY, ButtonRole.NORMAL, ButtonRole.PERMANENT), sheet.answers.map { it.role })
        assertEquals(listOf(null, null, "以后 食堂 的写入操作不再询问（「写入」权限设为「自动」）"), sheet.answers.map { it.consequence })
        assertNull(sheet.taintedNote)
        assertEquals(listOf("Canteen" to "学一食堂", "Seats" to "2", "Time" to "12:00"), sheet.inputs.map { it.name to it.value })
        assertEquals(Decision(askWrite, DecisionStep.MODE, null), call.decision)
        // The call's record keeps neither the sheet nor the notification's words.
        assertEquals(expectedPrompt.copy(notice = null), call.prompt)
        assertEquals(Answer.ALLOW, call.answer)
        assertEquals(Outcome.Ran(RESERVED, RESERVED), call.outcome)
        // Allow answers one call: the next one asks again.
        assertEquals(askWrite, harness.decide(Actor.AGENT, "canteen.reserve", SEATS, "c1").verdict)
    }

    @Test fun deny_declines_the_call_and_the_agent_is_told_so() = runTest {
        val harness = sampleHarness(ScriptedPlatform(Answer.DENY))
        val call = harness.invokeAsAgent("c1", "canteen.reserve", SEATS)
        assertEquals(Answer.DENY, call.answer)
        assertEquals(Outcome.Refused(RefusalCode.DECLINED, "The user declined this call."), call.outcome)
        assertEquals("""{"error":{"code":"declined","message":"The user declined this call."}}""", call.forModel)
    }

    @Test fun always_allow_sets_the_mode_to_auto_and_later_calls_run_unasked() = runTest {
        val platform = ScriptedPlatform(Answer.ALWAYS_ALLOW)
        val harness = sampleHarness(platform)
        assertEquals(Outcome.Ran(RESERVED, RESERVED), harness.invokeAsAgent("c1", "canteen.reserve", SEATS).outcome)
        val write = harness.plugins().first { it.id == "canteen" }.modes.first { it.effect == Effect.WRITE }
        assertEquals(ModeRow(Effect.WRITE, Mode.AUTO, ModeSource.USER), write)
        val again = harness.invokeAsAgent("c1", "canteen.reserve", SEATS)
        assertEquals(Decision(Verdict.Run, DecisionStep.MODE, null), again.decision)
        assertEquals(1, platform.prompts.size)
    }

    @Test fun an_answer_the_prompt_did_not_offer_is_no_consent() = runTest {
        val harness = sampleHarness(ScriptedPlatform(Answer.ALLOW_ONCE))
        val call = harness.invokeAsAgent("c1", "canteen.reserve", SEATS)
        assertEquals(
            Outcome.Refused(RefusalCode.DECLINED, "the answer \"allow_once\" was not one this prompt offered; the call was not run"),
            call.outcome,
        )
    }

    @Test fun a_platform_exception_fails_closed_and_withdraws_the_prompt() = runTest {
        val platform = ScriptedPlatform()
        platform.answerWith = { _, _ -> throw IllegalStateException("the sheet could not be shown") }
        val harness = sampleHarness(platform)
        val listener = RecordingListener()
        val subscription = harness.subscribe(listener)
        val call = harness.invokeAsAgent("c1", "canteen.reserve", SEATS)
        assertEquals(Answer.DENY, call.answer)
        assertEquals(RefusalCode.DECLINED, call.refusal())
        assertEquals(HarnessEvent.ApprovalWithdrawn(1uL), listener.events.last())
        subscription.cancel()
    }

    @Test fun a_money_call_in_a_turn_tainted_by_forum_posts_asks() = runTest {
        val platform = ScriptedPlatform(Answer.DENY)
        val harness = sampleHarness(platform)
        harness.beginTurn("c1")
        val posts = harness.invokeAsAgent("c1", "mcp-forum.latestPosts", """{"limit":2}""")
        assertEquals(Decision(Verdict.Run, DecisionStep.MODE, null), posts.decision)
        assertTrue(harness.conversation("c1").tainted)
        val recharge = harness.invokeAsAgent("c1", "wallet.recharge", """{"amountYuan":500}""")
        assertEquals(Decision(askTainted, DecisionStep.SENSITIVE, null), recharge.decision)
        assertEquals("this turn has read untrusted content, and this is a money call", recharge.prompt?.reason)
        assertEquals(RefusalCode.DECLINED, recharge.refusal())
        // A new turn starts clean: the same call runs (wallet's money mode is auto).
        harness.beginTurn("c1")
        assertEquals(false, harness.conversation("c1").tainted)
        val next = harness.invokeAsAgent("c1", "wallet.recharge", """{"amountYuan":5}""")
        assertEquals(
            """{"balanceYuan":47.5,"rechargedYuan":5.0,"status":"ok"}""",
            next.resultJson(),
        )
    }

    @Test fun the_platform_may_call_back_into_the_harness_while_it_asks() = runTest {
        val platform = ScriptedPlatform()
        lateinit var harness: Harness
        platform.answerWith = { _, prompt ->
            // Re-entry from inside the prompt: the core holds no lock while it waits.
            assertEquals(3, harness.plugins().samples().size)
            assertEquals(DecisionStep.MODE, harness.decide(Actor.AGENT, prompt.tool, prompt.inputJson, "c1").step)
            Answer.ALLOW
        }
        harness = sampleHarness(platform)
        assertEquals(Outcome.Ran(RESERVED, RESERVED), harness.invokeAsAgent("c1", "canteen.reserve", SEATS).outcome)
    }

    @Test fun an_invalid_input_is_refused_naming_the_field() = runTest {
        val harness = sampleHarness()
        val call = harness.invokeAsAgent("c1", "wallet.recharge", """{"amountYuan":600}""")
        assertEquals(Decision(Verdict.Refuse(RefusalCode.INVALID_INPUT), DecisionStep.INPUT, null), call.decision)
        assertEquals(RefusalCode.INVALID_INPUT, call.refusal())
        val message = (call.outcome as Outcome.Refused).message
        assertTrue(message.startsWith("The input is invalid: ") && "amountYuan" in message, message)
    }
}
