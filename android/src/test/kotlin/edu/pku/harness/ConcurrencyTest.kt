package edu.pku.harness

import edu.pku.harness.core.Answer
import edu.pku.harness.core.Effect
import edu.pku.harness.core.Mode
import edu.pku.harness.core.ModeSource
import edu.pku.harness.core.RefusalCode
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.Test
import java.util.concurrent.atomic.AtomicInteger
import kotlin.test.assertEquals
import kotlin.test.assertTrue
import kotlin.test.fail

/** Calls from many coroutines at once. */
class ConcurrencyTest {
    @Test fun agent_calls_from_sixteen_coroutines_each_get_their_own_answer() = runTest {
        val platform = ScriptedPlatform()
        // Odd prompt ids are allowed, even ones denied: each answer must reach its own call.
        platform.answerWith = { id, _ -> if (id % 2uL == 1uL) Answer.ALLOW else Answer.DENY }
        val harness = sampleHarness(platform)
        (0 until 16).forEach { harness.openConversation("k$it") }
        val calls = withContext(Dispatchers.Default) {
            (0 until 16).map { i ->
                async {
                    val read = harness.invokeAsAgent("k$i", "wallet.cardBalance", "{}")
                    assertEquals(BALANCE, read.resultJson())
                    harness.invokeAsAgent("k$i", "canteen.reserve", SEATS)
                }
            }.awaitAll()
        }
        assertEquals(16, platform.prompts.size)
        assertEquals((1uL..16uL).toList(), platform.prompts.map { it.first }.sorted())
        for (call in calls) {
            when (call.answer) {
                Answer.ALLOW -> assertEquals(Outcome.Ran(RESERVED, RESERVED), call.outcome)
                Answer.DENY -> assertEquals(RefusalCode.DECLINED, call.refusal())
                else -> error("unexpected answer ${call.answer}")
            }
        }
        assertEquals(8, calls.count { it.answer == Answer.ALLOW })
        assertEquals(16 * 2 + 16 * 2 + 16, harness.auditLog().size)
    }

    @Test fun twenty_concurrent_taps_all_reach_the_card() = runTest {
        val harness = sampleHarness()
        withContext(Dispatchers.Default) {
            (0 until 20).map { async { harness.invokeAsUser("wallet.recharge", """{"amountYuan":1}""") } }.awaitAll()
        }
        assertEquals(
            """{"balanceYuan":62.5,"dailyLimitYuan":200.0,"spentTodayYuan":18.5}""",
            harness.invokeAsUser("wallet.cardBalance", "{}").resultJson(),
        )
    }

    @Test fun waiting_prompts_do_not_block_each_other() = runTest {
        val platform = ScriptedPlatform()
        // The user answers no sheet until all eight are open at once: were they answered one by
        // one, the second would never open (an event, not a clock, on a loaded machine).
        val open = AtomicInteger(0)
        val allOpen = CompletableDeferred<Unit>()
        platform.answerWith = { _, _ ->
            if (open.incrementAndGet() == 8) allOpen.complete(Unit)
            withTimeoutOrNull(50_000) { allOpen.await() }
                ?: fail("only ${open.get()} of 8 sheets were open at once: they were answered one by one")
            Answer.ALLOW
        }
        val harness = sampleHarness(platform)
        val calls = withContext(Dispatchers.Default) {
            (0 until 8).map { async { harness.invokeAsAgent("c1", "canteen.reserve", SEATS) } }.awaitAll()
        }
        assertTrue(calls.all { it.outcome == Outcome.Ran(RESERVED, RESERVED) })
    }

    @Test fun sync_calls_from_many_threads_see_consistent_state() = runTest {
        val harness = sampleHarness()
        withContext(Dispatchers.Default) {
            (0 until 8).map { i ->
                async {
                    repeat(50) {
                        harness.setMode("canteen", Effect.WRITE, if (i % 2 == 0) Mode.AUTO else Mode.ASK)
                        assertEquals(3, harness.plugins().samples().size)
                        harness.ping()
                    }
                }
            }.awaitAll()
        }
        val write = harness.plugins().first { it.id == "canteen" }.modes[1]
        assertEquals(ModeSource.USER, write.source)
    }
}
