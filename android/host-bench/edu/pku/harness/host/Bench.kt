// The cost of one call across the FFI, from Kotlin on the host JVM against the real library:
// a no-op (ping), a decision (decide), and an agent call that raises a prompt answered at once
// by the Kotlin Platform. Prints ns/call after warm-up. Run by scripts/bench-kotlin.sh.
package edu.pku.harness.host

import edu.pku.harness.*
import com.sun.jna.Native
import com.sun.jna.Structure
import kotlinx.coroutines.runBlocking
import java.nio.file.Files

/** Calibration: what JNA itself costs on this machine, without UniFFI or the core. */
object CalibrationLibC {
    init { Native.register("c") }
    @JvmStatic external fun getpid(): Int
}

/** The shape of UniFFI's per-call status structure (a byte and a buffer). */
class CalibrationStatus : Structure() {
    @JvmField var code: Byte = 0
    @JvmField var capacity: Long = 0
    @JvmField var len: Long = 0
    @JvmField var data: Long = 0
    override fun getFieldOrder() = listOf("code", "capacity", "len", "data")
}

/** Answers every prompt Allow at once; everything else does nothing. */
private class AllowAll : Platform {
    override suspend fun askApproval(id: ULong, prompt: ApprovalPrompt) = Answer.ALLOW
    override fun postNotification(notification: AppNotification) {}
    override fun armWakeUp(atEpochMs: Long, exact: Boolean) {}
    override fun cancelWakeUp() {}
    override fun openScreen(route: String) {}
    override fun readSecret(key: String): String? = null
    override fun writeSecret(key: String, value: String?) {}
    override fun permissionState(permission: Permission) = PermissionState.GRANTED
}

private fun measure(name: String, warmup: Int, calls: Int, call: () -> Unit) {
    repeat(warmup) { call() }
    // Best of three rounds: the machine is shared, so the minimum is the call's own cost.
    val best = (1..3).minOf {
        val start = System.nanoTime()
        repeat(calls) { call() }
        (System.nanoTime() - start) / calls
    }
    println("%-44s %,10d ns/call  (%,d calls, best of 3)".format(name, best, calls))
}

fun main() {
    val harness = Harness.open(Files.createTempDirectory("harness-bench").toString(), AllowAll())
    harness.installSamplePlugins()
    harness.setConsent(Consent(termsAccepted = true, met = listOf("campus-session")))
    harness.openConversation("bench")
    val seats = """{"canteen":"学一食堂","seats":2,"time":"12:00"}"""

    measure("JNA: libc getpid() (calibration)", 100_000, 1_000_000) { CalibrationLibC.getpid() }
    measure("JNA: one Structure allocation (calibration)", 50_000, 200_000) { CalibrationStatus() }
    measure("ping (no-op)", 50_000, 200_000) { harness.ping() }
    measure("decide (agent, canteen.reserve → ask)", 20_000, 100_000) {
        harness.decide(Actor.AGENT, "canteen.reserve", seats, "bench")
    }
    measure("invokeAsAgent read, no prompt", 2_000, 10_000) {
        runBlocking { harness.invokeAsAgent("bench", "wallet.cardBalance", "{}") }
    }
    measure("invokeAsAgent write, prompt answered Allow", 2_000, 10_000) {
        runBlocking { harness.invokeAsAgent("bench", "canteen.reserve", seats) }
    }
    harness.shutdown()
}
