package edu.pku.harness

import edu.pku.harness.core.Answer
import org.junit.Test
import kotlin.test.assertEquals
import kotlin.test.assertTrue

/** A whole turn of the agent through the FFI: one call from Kotlin, the steps streamed to the
 *  listener, a prompt answered by the Kotlin Platform. */
class TurnTest {
    @Test fun a_message_runs_a_turn_whose_write_is_allowed_from_kotlin() = runTest {
        val reserve = """{"tool_calls":[{"index":0,"id":"call_1","type":"function",""" +
            """"function":{"name":"canteen__reserve","arguments":${jsonString(SEATS)}}}]}"""
        ScriptedModel(
            listOf(chunk(reserve), chunk("{}", "tool_calls"), "[DONE]"),
            listOf(chunk("""{"content":"订好了："}"""), chunk("""{"content":"两个座位。"}""", "stop"), "[DONE]"),
        ).use { model ->
            val platform = ScriptedPlatform(Answer.ALLOW)
            platform.secrets["model.apiKey"] = "sk-kotlin"
            val harness = sampleHarness(platform)
            val listener = RecordingListener()
            val subscription = harness.subscribe(listener)
            harness.changeSetting("model.endpoint", jsonString(model.endpoint))
            harness.changeSetting("model.name", "\"qwen-plus\"")

            val result = harness.sendMessage("c1", "帮我在学一订两个座位")

            assertEquals(
                TurnResult(result.turn, "done", "订好了：两个座位。", null, 2u, 0uL),
                result,
            )
            assertEquals(listOf<String?>("Bearer sk-kotlin", "Bearer sk-kotlin"), model.keys.toList())
            assertEquals(listOf("canteen.reserve"), platform.prompts.map { it.second.tool })
            assertEquals(SEATS, platform.prompts.single().second.inputJson)
            val steps = listener.events.mapNotNull {
                when (it) {
                    is HarnessEvent.AgentTurnStarted -> "started"
                    is HarnessEvent.ToolCallStarted -> "call ${it.name}"
                    is HarnessEvent.ToolResult -> "result ${it.ok}"
                    is HarnessEvent.TextDelta -> "text ${it.text}"
                    is HarnessEvent.TurnEnded -> "ended ${it.state}"
                    else -> null
                }
            }
            assertEquals(
                listOf("started", "call canteen__reserve", "result true", "text 订好了：", "text 两个座位。", "ended done"),
                steps,
            )
            // The reservation's result went back to the model as the tool's message.
            assertTrue(model.bodies[1].contains(""""tool_call_id":"call_1""""), model.bodies[1])
            assertTrue(model.bodies[1].contains("R-20261130-0042"), model.bodies[1])
            val history = harness.history("c1", null, 10u)
            assertEquals(listOf("user", "assistant", "tool", "assistant"), history.map { it.role })
            subscription.cancel()
            harness.shutdown()
        }
    }
}
