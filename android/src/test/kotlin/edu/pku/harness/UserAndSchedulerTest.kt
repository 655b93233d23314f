package edu.pku.harness

import edu.pku.harness.core.DecisionStep
import edu.pku.harness.core.Effect
import edu.pku.harness.core.Mode
import edu.pku.harness.core.RefusalCode
import org.junit.Test
import kotlin.test.assertEquals

/** Taps and scheduled runs: never a prompt. */
class UserAndSchedulerTest {
    @Test fun a_user_tap_runs_a_write_whose_mode_is_ask_without_a_prompt() = runTest {
        val platform = ScriptedPlatform()
        val harness = sampleHarness(platform)
        val call = harness.invokeAsUser("canteen.reserve", SEATS)
        assertEquals(Decision(Verdict.Run, DecisionStep.USER_TAP, null), call.decision)
        assertEquals(Outcome.Ran(RESERVED, RESERVED), call.outcome)
        assertEquals(0, platform.prompts.size)
    }

    @Test fun off_refuses_a_user_tap_too() = runTest {
        val harness = sampleHarness()
        harness.setMode("wallet", Effect.MONEY, Mode.OFF)
        val call = harness.invokeAsUser("wallet.recharge", """{"amountYuan":50}""")
        assertEquals(Decision(Verdict.Refuse(RefusalCode.BLOCKED), DecisionStep.MODE_OFF, null), call.decision)
    }

    @Test fun a_scheduled_read_runs() = runTest {
        val harness = sampleHarness()
        val call = harness.invokeAsScheduler("canteen.crowd", "{}")
        assertEquals(Decision(Verdict.Run, DecisionStep.SCHEDULER, null), call.decision)
        assertEquals("""{"crowdPercent":{"农园食堂":40,"学一食堂":85}}""", call.resultJson())
    }

    @Test fun a_scheduled_write_is_refused_scheduler_read_only() = runTest {
        val platform = ScriptedPlatform()
        val harness = sampleHarness(platform)
        val call = harness.invokeAsScheduler("canteen.reserve", SEATS)
        assertEquals(
            Outcome.Refused(
                RefusalCode.SCHEDULER_READ_ONLY,
                "Scheduled runs only read, and \"canteen.reserve\" has the write effect. It can only run from a conversation or a tap.",
            ),
            call.outcome,
        )
        assertEquals(0, platform.prompts.size)
    }

    @Test fun a_scheduled_read_whose_mode_is_ask_is_declined_without_a_prompt() = runTest {
        val platform = ScriptedPlatform()
        val harness = sampleHarness(platform)
        harness.setMode("canteen", Effect.READ, Mode.ASK)
        val call = harness.invokeAsScheduler("canteen.crowd", "{}")
        assertEquals(Decision(Verdict.Refuse(RefusalCode.DECLINED), DecisionStep.SCHEDULER, null), call.decision)
        assertEquals(0, platform.prompts.size)
    }
}
