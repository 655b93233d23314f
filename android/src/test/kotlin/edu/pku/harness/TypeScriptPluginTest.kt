package edu.pku.harness

import com.sun.net.httpserver.HttpServer
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.RefusalCode
import kotlinx.coroutines.delay
import org.junit.Test
import java.io.File
import java.net.InetSocketAddress
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.test.assertEquals

/** The app's shipped TypeScript plugins, run by the core's QuickJS through the real library,
 *  reaching the campus simulator on this machine. */
class TypeScriptPluginTest {
    private fun appHarness(): Harness {
        val harness = Harness.openForDevelopment(
            newDataDir(),
            ScriptedPlatform(),
            DevelopmentOptions(samplePlugins = false, campusOrigin = startCampusSimulator()),
        )
        harness.setConsent(Consent(termsAccepted = true, met = emptyList()))
        harness.openConversation("c1")
        return harness
    }

    @Test fun the_canteens_crowding_comes_from_a_typescript_plugin_for_the_agent_and_the_tap() = runTest {
        val harness = appHarness()
        val crowd =
            """{"canteens":[{"fullPercent":87,"name":"学一食堂","present":692,"seats":800,"warning":"拥挤"},""" +
                """{"fullPercent":27,"name":"农园食堂","present":318,"seats":1200},""" +
                """{"fullPercent":18,"name":"燕南食堂","present":105,"seats":600}],"takenAt":"2026-12-01 11:50"}"""
        assertEquals(crowd, harness.invokeAsAgent("c1", "canteen.crowd", "{}").resultJson())
        assertEquals(crowd, harness.invokeAsUser("canteen.crowd", "{}").resultJson())
        harness.shutdown()
    }

    @Test fun the_library_search_answers_call_numbers_and_a_bad_input_is_refused_before_it_runs() = runTest {
        val harness = appHarness()
        assertEquals(
            """{"books":[{"author":"Thomas H. Cormen","callNumber":"TP301.6/C81","id":"1002","publisher":"机械工业出版社",""" +
                """"title":"算法导论","year":"2013"}],"page":1,"total":1}""",
            harness.invokeAsAgent("c1", "library.search", """{"query":"算法"}""").resultJson(),
        )
        assertEquals(
            RefusalCode.INVALID_INPUT,
            harness.invokeAsAgent("c1", "classrooms.free", """{"building":"五教"}""").refusal(),
        )
        harness.shutdown()
    }
}

/**
 * The SDK's test plugins (sdk/test-plugins/<id>/bundle.js) run beside the shipped ones through
 * `DevelopmentOptions.bundles`: `probe` uses each of `ctx.services` once, and may call `echo`'s
 * tool. Each service through the generated Kotlin, as the student's tap and as the agent's call;
 * the file picker and the permission dialog are the Kotlin Platform's.
 */
class TypeScriptServicesTest {
    /** A bundle as sdk/build.mjs built it; scripts/test-kotlin-host.sh says where they are. */
    private fun testBundle(id: String): String {
        val plugins = System.getProperty("pku.test.plugins")
            ?: error("set -Dpku.test.plugins to sdk/test-plugins (scripts/test-kotlin-host.sh does)")
        return File(plugins, "$id/bundle.js").readText()
    }

    private fun probeHarness(platform: ScriptedPlatform = ScriptedPlatform()): Harness {
        val harness = Harness.openForDevelopment(
            newDataDir(),
            platform,
            DevelopmentOptions(
                samplePlugins = false,
                campusOrigin = startCampusSimulator(),
                bundles = listOf(testBundle("echo"), testBundle("probe")),
            ),
        )
        harness.setConsent(Consent(termsAccepted = true, met = emptyList()))
        harness.openConversation("c1")
        return harness
    }

    private fun Invocation.failure(): String? = (outcome as? Outcome.Failed)?.message

    @Test fun the_store_keeps_the_json_value_a_tap_set_and_the_agent_reads_it() = runTest {
        val harness = probeHarness()
        assertEquals("""{"value":null}""", harness.invokeAsAgent("c1", "probe.recall", """{"key":"memo"}""").resultJson())
        assertEquals(
            """{"stored":"memo"}""",
            harness.invokeAsUser("probe.remember", """{"key":"memo","value":{"room":"理教 107","at":"08:00"}}""").resultJson(),
        )
        val stored = """{"value":{"at":"08:00","room":"理教 107"}}"""
        assertEquals(stored, harness.invokeAsUser("probe.recall", """{"key":"memo"}""").resultJson())
        assertEquals(stored, harness.invokeAsAgent("c1", "probe.recall", """{"key":"memo"}""").resultJson())
        harness.shutdown()
    }

    @Test fun the_agent_s_notify_message_and_context_reach_the_student_and_the_message_starts_a_turn() = runTest {
        fun calls(id: String, name: String, args: String) = chunk(
            """{"tool_calls":[{"index":0,"id":"$id","type":"function","function":{"name":"$name","arguments":${jsonString(args)}}}]}""",
        )
        ScriptedModel(
            listOf(calls("call_1", "probe__say", """{"text":"已记下"}"""), chunk("{}", "tool_calls"), "[DONE]"),
            listOf(calls("call_2", "probe__send", """{"text":"提醒我交作业"}"""), chunk("{}", "tool_calls"), "[DONE]"),
            listOf(calls("call_3", "probe__setContext", """{"text":"今天有课：高数"}"""), chunk("{}", "tool_calls"), "[DONE]"),
            listOf(chunk("""{"content":"好了"}""", "stop"), "[DONE]"),
            listOf(chunk("""{"content":"收到"}""", "stop"), "[DONE]"),
        ).use { model ->
            val platform = ScriptedPlatform()
            platform.secrets["model.apiKey"] = "sk-kotlin"
            val harness = probeHarness(platform)
            val listener = RecordingListener()
            val subscription = harness.subscribe(listener)
            harness.changeSetting("model.endpoint", jsonString(model.endpoint))
            harness.changeSetting("model.name", "\"qwen-plus\"")

            val result = harness.sendMessage("c1", "记一下")

            assertEquals(TurnResult("c1#1", "done", "好了", null, 4u, 0uL), result)
            // The message the tool sent begins a turn of its own once this one ended.
            while (listener.events.none { it is HarnessEvent.TurnEnded && it.turn == "c1#2" }) delay(10)
            assertEquals(
                listOf(
                    HarnessEvent.ToolResult("c1#1", "call_1", true, """{"said":true}"""),
                    HarnessEvent.HostLine("probe", "log", "[probe] saying 已记下"),
                    HarnessEvent.HostLine("probe", "notify", "[probe] 已记下"),
                    HarnessEvent.ToolResult("c1#1", "call_2", true, """{"sent":true}"""),
                    HarnessEvent.HostLine("probe", "messageSent", "plugin \"probe\" sent a message to the agent:\n提醒我交作业"),
                    HarnessEvent.ContextChanged("probe"),
                    HarnessEvent.ToolResult("c1#1", "call_3", true, """{"set":true}"""),
                    HarnessEvent.HostLine(
                        "probe",
                        "contextChanged",
                        "plugin \"probe\" changed its context contribution (21 bytes):\n今天有课：高数",
                    ),
                ),
                listener.events.filter {
                    it is HarnessEvent.ToolResult || it is HarnessEvent.HostLine || it is HarnessEvent.ContextChanged
                },
            )
            assertEquals(
                listOf("user" to "[from plugin probe] 提醒我交作业", "assistant" to "收到"),
                harness.history("c1", null, 20u).filter { it.turn == 2uL }.map { it.role to it.content },
            )
            subscription.cancel()
            harness.shutdown()
        }
    }

    @Test fun a_message_sent_from_a_tap_outside_a_conversation_fails_saying_so() = runTest {
        val harness = probeHarness()
        assertEquals(
            "sending a message needs a conversation; this call was made outside one",
            harness.invokeAsUser("probe.send", """{"text":"提醒我交作业"}""").failure(),
        )
        harness.shutdown()
    }

    @Test fun tools_call_reaches_echo_say_for_the_tap_and_the_agent() = runTest {
        val harness = probeHarness()
        val input = """{"tool":"echo.say","args":{"text":"嗨"}}"""
        assertEquals("""{"got":{"text":"嗨"}}""", harness.invokeAsUser("probe.callTool", input).resultJson())
        assertEquals("""{"got":{"text":"嗨"}}""", harness.invokeAsAgent("c1", "probe.callTool", input).resultJson())
        harness.shutdown()
    }

    @Test fun a_cloud_call_is_consent_required_until_the_student_allows_it_then_unavailable() = runTest {
        val harness = probeHarness()
        val consentRequired = """{"code":"consent_required","status":"cloud_refused"}"""
        assertEquals(consentRequired, harness.invokeAsUser("probe.cloud", "{}").resultJson())
        assertEquals(consentRequired, harness.invokeAsAgent("c1", "probe.cloud", "{}").resultJson())
        harness.setCloudConsent("probe", true)
        val unavailable = """{"code":"unavailable","status":"cloud_refused"}"""
        assertEquals(unavailable, harness.invokeAsUser("probe.cloud", "{}").resultJson())
        assertEquals(unavailable, harness.invokeAsAgent("c1", "probe.cloud", "{}").resultJson())
        harness.shutdown()
    }

    @Test fun a_tapped_tool_picks_a_file_on_the_platform_and_gets_its_name_and_text() = runTest {
        val platform = ScriptedPlatform()
        platform.pickWith = { PickedDocument("课表.md", "# 周一\n高等数学".toByteArray()) }
        val harness = probeHarness(platform)
        assertEquals(
            """{"name":"课表.md","text":"# 周一\n高等数学"}""",
            harness.invokeAsUser("probe.pick", "{}").resultJson(),
        )
        assertEquals(listOf("探针"), platform.picks.toList())
        harness.shutdown()
    }

    @Test fun nothing_picked_is_null_and_a_file_past_16_mib_is_refused_by_its_size() = runTest {
        val platform = ScriptedPlatform()
        val harness = probeHarness(platform)
        assertEquals("null", harness.invokeAsUser("probe.pick", "{}").resultJson())
        // What AndroidPlatform hands over for a larger file: its first 16 MiB and one byte.
        platform.pickWith = { PickedDocument("讲义.md", ByteArray((16 shl 20) + 1) { 'a'.code.toByte() }) }
        assertEquals("文件“讲义.md”超过 16 MiB，太大了，不能添加", harness.invokeAsUser("probe.pick", "{}").failure())
        assertEquals(listOf("探针", "探针"), platform.picks.toList())
        harness.shutdown()
    }

    @Test fun the_agent_s_call_opens_neither_the_picker_nor_the_permission_dialog() = runTest {
        val platform = ScriptedPlatform()
        platform.pickWith = { PickedDocument("课表.md", "周一 高等数学".toByteArray()) }
        platform.permissionWith = { PermissionState.GRANTED }
        val harness = probeHarness(platform)
        assertEquals(
            "files.pick needs the user's tap on a screen; a tool the agent calls cannot use it",
            harness.invokeAsAgent("c1", "probe.pick", "{}").failure(),
        )
        assertEquals(
            "notify.fix needs the user's tap on a screen; a tool the agent calls cannot use it",
            harness.invokeAsAgent("c1", "probe.fix", "{}").failure(),
        )
        assertEquals(emptyList(), platform.picks.toList())
        assertEquals(emptyList(), platform.permissionRequests.toList())
        harness.shutdown()
    }

    @Test fun a_tapped_tool_shows_the_permission_dialog_and_the_harness_records_its_answer() = runTest {
        val platform = ScriptedPlatform()
        platform.permissionWith = { PermissionState.GRANTED }
        val harness = probeHarness(platform)
        fun notifications() = harness.consentScreen().permissions.single { it.permission == Permission.NOTIFICATIONS }.state
        harness.reportPermission(Permission.NOTIFICATIONS, PermissionState.DENIED)
        assertEquals(PermissionState.DENIED, notifications())
        assertEquals("""{"state":"granted"}""", harness.invokeAsUser("probe.fix", "{}").resultJson())
        assertEquals(listOf(Permission.NOTIFICATIONS), platform.permissionRequests.toList())
        assertEquals(PermissionState.GRANTED, notifications())
        harness.shutdown()
    }

    @Test fun campus_request_of_a_plugin_without_the_campus_session_is_refused_naming_what_to_add() = runTest {
        val harness = probeHarness()
        val input = """{"service":"card","path":"/berserker-app/ykt/tsm/queryCard"}"""
        val refused = "plugin \"probe\" does not require the campus session; add \"campus-session\" to its requires"
        assertEquals(refused, harness.invokeAsUser("probe.campus", input).failure())
        assertEquals(refused, harness.invokeAsAgent("c1", "probe.campus", input).failure())
        harness.shutdown()
    }

    @Test fun http_get_reaches_a_server_on_the_allowlist_on_this_machine_and_refuses_a_host_off_it() = runTest {
        val asked = CopyOnWriteArrayList<String>()
        val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0).apply {
            createContext("/menu") { exchange ->
                asked.add("${exchange.requestMethod} ${exchange.requestURI}")
                val body = """{"open": true}""".encodeToByteArray()
                exchange.sendResponseHeaders(200, body.size.toLong())
                exchange.responseBody.use { it.write(body) }
            }
            start()
        }
        val harness = probeHarness()
        val menu = """{"url":"http://127.0.0.1:${server.address.port}/menu"}"""
        val body = """{"body":"{\"open\": true}"}"""
        assertEquals(body, harness.invokeAsUser("probe.fetch", menu).resultJson())
        assertEquals(body, harness.invokeAsAgent("c1", "probe.fetch", menu).resultJson())
        assertEquals(listOf("GET /menu", "GET /menu"), asked.toList())
        assertEquals(
            "url_allowlist does not permit http://example.com/ (host \"example.com\" is not in url_allowlist) — " +
                "add its host to url_allowlist in this plugin's grants",
            harness.invokeAsAgent("c1", "probe.fetch", """{"url":"http://example.com/"}""").failure(),
        )
        server.stop(0)
        harness.shutdown()
    }

    @Test fun a_tool_is_told_whether_the_student_or_the_agent_called_it() = runTest {
        val harness = probeHarness()
        assertEquals("""{"actor":"user","grant":null,"turn":null}""", harness.invokeAsUser("probe.whoami", "{}").resultJson())
        assertEquals(
            """{"actor":"agent","grant":null,"turn":{"sessionId":"c1","tainted":false,"userAsked":false}}""",
            harness.invokeAsAgent("c1", "probe.whoami", "{}").resultJson(),
        )
        harness.shutdown()
    }
}
