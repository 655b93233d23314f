package edu.pku.harness

import edu.pku.harness.core.Answer
import edu.pku.harness.core.ApprovalNotice
import org.junit.Test
import kotlin.test.assertEquals
import kotlin.test.assertTrue

/** The event listener and its subscription handle. */
class EventsTest {
    @Test fun a_prompt_is_announced_and_its_answer_follows_with_the_same_id() = runTest {
        val platform = ScriptedPlatform(Answer.ALLOW)
        val harness = sampleHarness(platform)
        val listener = RecordingListener()
        val call = harness.subscribe(listener).use { harness.invokeAsAgent("c1", "canteen.reserve", SEATS) }
        assertEquals(
            listOf(HarnessEvent.ApprovalRequested(1uL, platform.prompts.single().second), HarnessEvent.ApprovalAnswered(1uL, Answer.ALLOW)),
            listener.events.toList(),
        )
        assertEquals(1uL, platform.prompts.single().first)
        // The call's record of the prompt is the prompt shown, without its sheet and the words of
        // its notification away from the app (never the inputs).
        val shown = platform.prompts.single().second
        assertEquals(call.prompt, shown.copy(sheet = null, notice = null))
        assertEquals(ApprovalNotice("助手在等你确认：食堂 · 预订餐位", "解锁后查看并回答", false), shown.notice)
    }

    @Test fun begin_turn_announces_the_turn_number() {
        val harness = sampleHarness()
        val listener = RecordingListener()
        harness.subscribe(listener).use {
            harness.beginTurn("c1")
            harness.beginTurn("c1")
        }
        assertEquals(
            listOf(HarnessEvent.TurnStarted("c1", 1uL), HarnessEvent.TurnStarted("c1", 2uL)),
            listener.events.toList(),
        )
        assertEquals(2uL, harness.conversation("c1").turns)
    }

    @Test fun cancel_stops_delivery_and_a_second_cancel_does_nothing() {
        val harness = sampleHarness()
        val kept = RecordingListener()
        val cancelled = RecordingListener()
        val keptSubscription = harness.subscribe(kept)
        val subscription = harness.subscribe(cancelled)
        harness.beginTurn("c1")
        subscription.cancel()
        subscription.cancel()
        harness.beginTurn("c1")
        keptSubscription.close()
        assertEquals(1, cancelled.events.size)
        assertEquals(2, kept.events.size)
    }

    @Test fun closing_the_subscription_handle_stops_delivery() {
        val harness = sampleHarness()
        val listener = RecordingListener()
        harness.subscribe(listener).use { harness.beginTurn("c1") }
        harness.beginTurn("c1")
        assertEquals(listOf<HarnessEvent>(HarnessEvent.TurnStarted("c1", 1uL)), listener.events.toList())
    }

    @Test fun a_listener_that_throws_does_not_break_the_call() = runTest {
        val harness = sampleHarness(ScriptedPlatform(Answer.ALLOW))
        val subscription = harness.subscribe(object : EventListener {
            override fun onEvent(event: HarnessEvent) = throw IllegalStateException("the UI is gone")
        })
        harness.beginTurn("c1")
        assertEquals(Outcome.Ran(RESERVED, RESERVED), harness.invokeAsAgent("c1", "canteen.reserve", SEATS).outcome)
        subscription.close()
    }

    @Test fun prompt_events_arrive_on_the_callers_thread_not_an_attached_native_one() = runTest {
        val harness = sampleHarness(ScriptedPlatform(Answer.ALLOW))
        val listener = RecordingListener()
        val subscription = harness.subscribe(listener)
        val caller = Thread.currentThread().name
        harness.beginTurn("c1")
        harness.invokeAsAgent("c1", "canteen.reserve", SEATS)
        subscription.close()
        // An agent's call runs on the thread that awaits it: no hop to a worker of the library's
        // runtime, which JNA would have to attach to the JVM for every callback (and the events
        // of a prompt, its answer included, would arrive there).
        assertEquals(listOf(caller, caller, caller), listener.threads.toList())
        assertTrue(listener.threads.none { it.matches(ATTACHED_NATIVE_THREAD) })
    }
}
