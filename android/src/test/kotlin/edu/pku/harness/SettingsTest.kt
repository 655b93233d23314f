package edu.pku.harness

import edu.pku.harness.core.Actor
import edu.pku.harness.core.Answer
import edu.pku.harness.core.ConversationSettings
import edu.pku.harness.core.DecisionStep
import edu.pku.harness.core.Effect
import edu.pku.harness.core.Mode
import edu.pku.harness.core.ModeSource
import edu.pku.harness.core.PluginKind
import edu.pku.harness.core.Preset
import edu.pku.harness.core.PromptKind
import edu.pku.harness.core.RefusalCode
import edu.pku.harness.core.RuleKind
import edu.pku.harness.core.RuleRef
import edu.pku.harness.core.RuleScope
import org.junit.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertTrue

/** Plugins, modes, rules, conversation settings, consent, the model's tools, the audit log. */
class SettingsTest {
    private val askWrite = Verdict.Ask(PromptKind.ORDINARY, listOf(Answer.ALLOW, Answer.DENY, Answer.ALWAYS_ALLOW))
    private val allTools = listOf(
        "canteen__openNow", "canteen__crowd", "canteen__reserve",
        "mcp-forum__latestPosts", "mcp-forum__reply", "wallet__cardBalance", "wallet__recharge",
    )

    @Test fun the_sample_plugins_are_listed_with_their_kind_and_default_modes() {
        val plugins = sampleHarness().plugins().samples()
        assertEquals(listOf("canteen", "mcp-forum", "wallet"), plugins.map { it.id })
        assertEquals(listOf(PluginKind.COMMUNITY, PluginKind.REMOTE, PluginKind.BUNDLED), plugins.map { it.kind })
        val canteen = plugins[0]
        assertEquals(
            listOf(
                ModeRow(Effect.READ, Mode.AUTO, ModeSource.KIND_DEFAULT),
                ModeRow(Effect.WRITE, Mode.ASK, ModeSource.KIND_DEFAULT),
                ModeRow(Effect.MONEY, Mode.ASK, ModeSource.KIND_DEFAULT),
                ModeRow(Effect.PUBLIC, Mode.ASK, ModeSource.KIND_DEFAULT),
            ),
            canteen.modes,
        )
        assertEquals(listOf("canteen.openNow", "canteen.crowd", "canteen.reserve"), canteen.tools.map { it.id })
        val wallet = plugins[2]
        assertEquals("校园卡", wallet.title)
        assertEquals("Campus card", wallet.titleEn)
        // A test fixture held in memory: no campus session behind it.
        assertEquals(listOf(), wallet.requires)
        assertEquals(listOf(), wallet.scopes)
        assertTrue(wallet.enabled)
        val recharge = wallet.tools[1]
        assertEquals("wallet__recharge", recharge.modelName)
        assertEquals(Effect.MONEY, recharge.effect)
        assertTrue(recharge.inputSchemaJson.contains("\"amountYuan\""))
        assertTrue(plugins[1].tools[0].untrusted, "remote results are untrusted")
    }

    @Test fun a_mode_set_to_off_refuses_the_agent_with_where_to_change_it() = runTest {
        val harness = sampleHarness()
        harness.setMode("wallet", Effect.MONEY, Mode.OFF)
        assertEquals(
            ModeRow(Effect.MONEY, Mode.OFF, ModeSource.USER),
            harness.plugins().first { it.id == "wallet" }.modes[2],
        )
        val call = harness.invokeAsAgent("c1", "wallet.recharge", """{"amountYuan":50}""")
        assertEquals(
            Outcome.Refused(
                RefusalCode.BLOCKED,
                "Plugin \"wallet\" has its money tools turned off. The user can change this in Settings → Plugins → wallet → AI permissions.",
            ),
            call.outcome,
        )
        assertEquals(listOf("wallet__cardBalance"), harness.modelTools("c1").sampleNames().filter { it.startsWith("wallet") })
        harness.setMode("wallet", Effect.MONEY, Mode.AUTO)
        assertEquals(Verdict.Run, harness.invokeAsAgent("c1", "wallet.recharge", """{"amountYuan":50}""").decision.verdict)
    }

    @Test fun a_disabled_plugin_is_unavailable_until_enabled_again() = runTest {
        val harness = sampleHarness()
        harness.setEnabled("canteen", false)
        assertEquals(false, harness.plugins().first { it.id == "canteen" }.enabled)
        val call = harness.invokeAsUser("canteen.openNow", "{}")
        assertEquals(
            Outcome.Refused(
                RefusalCode.UNAVAILABLE,
                "Plugin \"canteen\" is turned off. The user turns it on in Settings → Plugins → canteen.",
            ),
            call.outcome,
        )
        harness.setEnabled("canteen", true)
        assertEquals(Verdict.Run, harness.invokeAsUser("canteen.openNow", "{}").decision.verdict)
    }

    @Test fun a_removed_plugin_is_gone_and_removing_it_again_is_not_found() = runTest {
        val harness = sampleHarness()
        harness.removePlugin("mcp-forum")
        assertEquals(listOf("canteen", "wallet"), harness.plugins().samples().map { it.id })
        assertEquals(RefusalCode.UNAVAILABLE, harness.invokeAsAgent("c1", "mcp-forum.latestPosts", "{}").refusal())
        val error = assertFailsWith<HarnessException.NotFound> { harness.removePlugin("mcp-forum") }
        assertEquals("no plugin \"mcp-forum\" is installed", error.reason)
    }

    @Test fun a_global_deny_rule_refuses_the_agent_hides_the_tool_and_leaves_taps_alone() = runTest {
        val harness = sampleHarness()
        harness.setRules(listOf(Rule(RuleKind.DENY, "wallet.recharge")))
        val call = harness.invokeAsAgent("c1", "wallet.recharge", """{"amountYuan":5}""")
        assertEquals(
            Decision(Verdict.Refuse(RefusalCode.DENIED_BY_RULE), DecisionStep.DENY_RULE, RuleRef(RuleScope.GLOBAL, 0u)),
            call.decision,
        )
        assertEquals(allTools - "wallet__recharge", harness.modelTools("c1").sampleNames())
        assertEquals(Verdict.Run, harness.invokeAsUser("wallet.recharge", """{"amountYuan":5}""").decision.verdict)
    }

    @Test fun an_ask_rule_with_a_condition_asks_only_for_matching_inputs() = runTest {
        val platform = ScriptedPlatform(Answer.DENY)
        val harness = sampleHarness(platform)
        harness.setRules(listOf(Rule(RuleKind.ASK, "wallet.*", Effect.MONEY, """{"amountYuan":500}""")))
        val big = harness.invokeAsAgent("c1", "wallet.recharge", """{"amountYuan":500}""")
        assertEquals(Decision(askWrite, DecisionStep.ASK_RULE, RuleRef(RuleScope.GLOBAL, 0u)), big.decision)
        assertEquals("an ask rule wallet.* (global rules[0])", big.reason)
        assertEquals(RefusalCode.DECLINED, big.refusal())
        val small = harness.invokeAsAgent("c1", "wallet.recharge", """{"amountYuan":5}""")
        assertEquals(Decision(Verdict.Run, DecisionStep.MODE, null), small.decision)
        assertEquals(1, platform.prompts.size)
    }

    @Test fun malformed_rules_are_refused_naming_the_rule_and_nothing_is_replaced() {
        val harness = sampleHarness()
        harness.setRules(listOf(Rule(RuleKind.DENY, "wallet.recharge")))
        val pattern = assertFailsWith<HarnessException.InvalidArgument> {
            harness.setRules(listOf(Rule(RuleKind.DENY, "wallet.*"), Rule(RuleKind.DENY, "wallet")))
        }
        assertEquals(
            "rules[1].tool: \"wallet\" is not a rule pattern; use \"<plugin>.<tool>\", \"<plugin>.*\" or \"*\"",
            pattern.reason,
        )
        val condition = assertFailsWith<HarnessException.InvalidArgument> {
            harness.setRules(listOf(Rule(RuleKind.ASK, "*", null, "{not json")))
        }
        assertTrue(condition.reason.startsWith("rules[0].when_json: not valid JSON ("), condition.reason)
        assertEquals(DecisionStep.DENY_RULE, harness.decide(Actor.AGENT, "wallet.recharge", """{"amountYuan":5}""", "c1").step)
    }

    @Test fun a_conversation_rule_applies_to_its_conversation_only() {
        val harness = sampleHarness()
        harness.openConversation("c2")
        harness.setConversationRules("c1", listOf(Rule(RuleKind.ALLOW, "canteen.reserve")))
        assertEquals(
            Decision(Verdict.Run, DecisionStep.ALLOWANCE, RuleRef(RuleScope.CONVERSATION, 0u)),
            harness.decide(Actor.AGENT, "canteen.reserve", SEATS, "c1"),
        )
        assertEquals(askWrite, harness.decide(Actor.AGENT, "canteen.reserve", SEATS, "c2").verdict)
    }

    @Test fun plan_mode_refuses_writes_and_becomes_the_default_for_new_conversations() = runTest {
        val harness = sampleHarness()
        harness.openConversation("other")
        val planning = ConversationSettings(model = "deepseek-chat", preset = Preset.AUTO_EDIT, planMode = true)
        harness.setConversationSettings("c1", planning)
        assertEquals(planning, harness.conversation("c1").settings)
        assertEquals(
            Outcome.Refused(
                RefusalCode.PLAN_MODE,
                "Plan mode is on: only read tools run while planning. The user turns plan mode off in the conversation's composer.",
            ),
            harness.invokeAsAgent("c1", "canteen.reserve", SEATS).outcome,
        )
        assertEquals(Verdict.Run, harness.invokeAsAgent("c1", "canteen.openNow", "{}").decision.verdict)
        assertEquals(planning, harness.openConversation("c2"))
        assertEquals(false, harness.conversation("other").settings.planMode)
    }

    @Test fun the_presets_skip_all_and_ask_every_time_change_what_asks() {
        val harness = sampleHarness()
        harness.setConversationSettings("c1", ConversationSettings(preset = Preset.SKIP_ALL))
        assertEquals(Decision(Verdict.Run, DecisionStep.SKIP_ALL, null), harness.decide(Actor.AGENT, "canteen.reserve", SEATS, "c1"))
        harness.setConversationSettings("c1", ConversationSettings(preset = Preset.ASK_EVERY_TIME))
        assertEquals(
            Decision(askWrite, DecisionStep.ASK_EVERY_TIME, null),
            harness.decide(Actor.AGENT, "wallet.recharge", """{"amountYuan":5}""", "c1"),
        )
        assertEquals(Decision(Verdict.Run, DecisionStep.MODE, null), harness.decide(Actor.AGENT, "wallet.cardBalance", "{}", "c1"))
    }

    @Test fun a_conversation_scope_is_kept_and_unknown_conversations_are_not_found() {
        val harness = sampleHarness()
        val scope = Scope(roots = listOf("/storage/emulated/0/Download"), hosts = listOf("pku.edu.cn"), apps = listOf())
        harness.setConversationScope("c1", scope)
        val c1 = harness.conversation("c1")
        assertEquals(ConversationInfo("c1", ConversationSettings(preset = Preset.AUTO_EDIT), scope, false, 0uL), c1)
        assertEquals("no conversation \"nope\"", assertFailsWith<HarnessException.NotFound> { harness.conversation("nope") }.reason)
        assertFailsWith<HarnessException.NotFound> { harness.setConversationScope("nope", scope) }
    }

    @Test fun before_the_terms_the_agent_is_refused_and_offered_nothing() = runTest {
        val harness = developmentHarness()
        harness.installSamplePlugins()
        harness.openConversation("c1")
        assertEquals(listOf(), harness.modelTools("c1"))
        assertEquals(RefusalCode.TERMS_NOT_ACCEPTED, harness.invokeAsAgent("c1", "canteen.openNow", "{}").refusal())
        harness.acceptTerms()
        assertEquals(Verdict.Run, harness.invokeAsAgent("c1", "canteen.openNow", "{}").decision.verdict)
        assertEquals(allTools, harness.modelTools("c1").sampleNames())
    }

    @Test fun deciding_neither_asks_nor_runs_nor_writes_the_audit_log() {
        val platform = ScriptedPlatform()
        val harness = sampleHarness(platform)
        assertEquals(Decision(askWrite, DecisionStep.MODE, null), harness.decide(Actor.AGENT, "canteen.reserve", SEATS, "c1"))
        assertEquals(Decision(Verdict.Run, DecisionStep.USER_TAP, null), harness.decide(Actor.USER, "canteen.reserve", SEATS, null))
        assertEquals(0, platform.prompts.size)
        assertEquals(listOf(), harness.auditLog())
    }

    @Test fun the_audit_log_records_decision_answer_and_run_in_order() = runTest {
        val harness = sampleHarness(ScriptedPlatform(Answer.ALLOW))
        harness.invokeAsAgent("c1", "canteen.reserve", SEATS)
        val rows = harness.auditLog().map { listOf(it.actor, it.conversation, it.tool, it.effect, it.event, it.detail, it.step) }
        assertEquals(
            listOf(
                listOf("agent", "c1", "canteen.reserve", "write", "decided", "ask:ordinary", "8i"),
                listOf("agent", "c1", "canteen.reserve", "write", "answered", "allow", null),
                listOf("agent", "c1", "canteen.reserve", "write", "ran", null, null),
            ),
            rows,
        )
        assertEquals(listOf(1L, 2L, 3L), harness.auditLog().map { it.seq })
    }

    @Test fun the_model_is_offered_every_reachable_tool_with_its_schema() {
        val tools = sampleHarness().modelTools("c1")
        assertEquals(allTools, tools.sampleNames())
        val reserve = tools.first { it.name == "canteen__reserve" }
        assertEquals("Reserve seats at a canteen. time is local \"HH:mm\" today.", reserve.description)
        assertTrue(reserve.inputSchemaJson.startsWith("{") && "\"seats\"" in reserve.inputSchemaJson)
    }

    @Test fun refusal_codes_have_the_strings_the_agent_sees() {
        val expected = mapOf(
            RefusalCode.UNAVAILABLE to "unavailable", RefusalCode.TERMS_NOT_ACCEPTED to "terms_not_accepted",
            RefusalCode.USER_ONLY to "user_only", RefusalCode.INVALID_INPUT to "invalid_input",
            RefusalCode.DENIED_BY_RULE to "denied_by_rule", RefusalCode.BLOCKED to "blocked",
            RefusalCode.SCHEDULER_READ_ONLY to "scheduler_read_only", RefusalCode.DECLINED to "declined",
            RefusalCode.PLAN_MODE to "plan_mode", RefusalCode.OUT_OF_SCOPE to "out_of_scope",
            RefusalCode.TAINTED to "tainted", RefusalCode.OVER_LIMIT to "over_limit",
        )
        assertEquals(expected, RefusalCode.entries.associateWith { refusalCodeString(it) })
    }
}
