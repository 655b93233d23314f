package edu.pku.harness.app

import androidx.test.ext.junit.runners.AndroidJUnit4
import androidx.test.platform.app.InstrumentationRegistry
import edu.pku.harness.ui.AppNavigator
import edu.pku.harness.ui.ApprovalHost
import org.junit.After
import org.junit.Assume.assumeTrue
import org.junit.Test
import org.junit.runner.RunWith
import kotlin.test.assertEquals
import kotlin.test.assertNotNull
import kotlin.test.assertNull

/** The core's wake-up through AlarmManager: exact only when the system allows it. */
@RunWith(AndroidJUnit4::class)
class WakeAlarmsTest {
    private val context = InstrumentationRegistry.getInstrumentation().targetContext
    private val inAnHour = System.currentTimeMillis() + 3_600_000

    private fun platform(alarms: WakeAlarms) =
        AndroidPlatform(context, ApprovalHost(), AppNavigator(), alarms = alarms)

    @After fun cancel() = WakeAlarms(context).cancel()

    @Test fun an_exact_wake_up_without_the_permission_falls_back_to_the_inexact_call() {
        val platform = platform(WakeAlarms(context, canScheduleExact = { false }))
        platform.armWakeUp(inAnHour, true)
        assertEquals(ArmedWakeUp(inAnHour, AlarmApi.INEXACT), platform.alarms.armed())
        assertNotNull(WakeAlarms.existingWakeIntent(context), "an alarm is armed")

        platform.cancelWakeUp()
        assertNull(platform.alarms.armed())
        assertNull(WakeAlarms.existingWakeIntent(context), "the alarm is gone")
    }

    @Test fun an_inexact_wake_up_stays_inexact_even_when_exact_ones_are_allowed() {
        val platform = platform(WakeAlarms(context, canScheduleExact = { true }))
        platform.armWakeUp(inAnHour, false)
        assertEquals(ArmedWakeUp(inAnHour, AlarmApi.INEXACT), platform.alarms.armed())
    }

    @Test fun an_exact_wake_up_with_the_permission_uses_the_exact_call() {
        assumeTrue("this phone does not allow the app exact alarms", WakeAlarms.canScheduleExactAlarms(context))
        val platform = platform(WakeAlarms(context))
        platform.armWakeUp(inAnHour, true)
        assertEquals(ArmedWakeUp(inAnHour, AlarmApi.EXACT), platform.alarms.armed())
        assertEquals(edu.pku.harness.core.PermissionState.GRANTED, platform.permissionState(edu.pku.harness.core.Permission.EXACT_ALARM))
    }
}
