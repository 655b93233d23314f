// The cost of one call across the FFI, from Kotlin on the host JVM against the real library,
// each beside its floor: the same call shape exported by bindings/floor (harness-ffi-floor), a
// UniFFI library whose calls do nothing, loaded in the same JVM through the same JNA. What the
// floor costs, UniFFI and JNA cost; the rest is ours. Prints ns/call (best of 3 after warm-up),
// the pieces a call is made of, and the table README.md holds. Run by scripts/bench-kotlin.sh.
package edu.pku.harness.host

import edu.pku.harness.*
import edu.pku.harness.core.*
import edu.pku.harness.floor.Floor
import edu.pku.harness.floor.FloorActor
import edu.pku.harness.floor.FloorAnswer
import edu.pku.harness.floor.FloorPlatform
import edu.pku.harness.floor.FloorPrompt
import com.sun.jna.Native
import com.sun.jna.Pointer
import com.sun.jna.Structure
import kotlinx.coroutines.runBlocking
import java.nio.ByteBuffer
import java.nio.file.Files

/** Calibration: what JNA itself costs on this machine, without UniFFI or the core. */
object CalibrationLibC {
    init { Native.register("c") }
    @JvmStatic external fun getpid(): Int
}

/** The shape of one JNA structure with UniFFI's buffer fields. */
class CalibrationStatus : Structure() {
    @JvmField var code: Byte = 0
    @JvmField var capacity: Long = 0
    @JvmField var len: Long = 0
    @JvmField var data: Long = 0
    override fun getFieldOrder() = listOf("code", "capacity", "len", "data")
}

/** UniFFI 0.32's RustBuffer as its Kotlin declares it (the generated one is internal). */
@Structure.FieldOrder("capacity", "len", "data")
open class UniffiShapeBuffer : Structure() {
    @JvmField var capacity: Long = 0
    @JvmField var len: Long = 0
    @JvmField var data: Pointer? = null
    class ByValue : UniffiShapeBuffer(), Structure.ByValue
}

/** UniFFI 0.32's RustCallStatus as its Kotlin declares it: what every call allocates. */
@Structure.FieldOrder("code", "error_buf")
open class UniffiShapeStatus : Structure() {
    @JvmField var code: Byte = 0
    @JvmField var error_buf: UniffiShapeBuffer.ByValue = UniffiShapeBuffer.ByValue()
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
    override suspend fun signIn(sheet: SignInSheet, redirectUri: String): String =
        throw HarnessException.Platform("no browser in the benchmark")
    override suspend fun askElicitation(id: ULong, sheet: ElicitationSheet) =
        ElicitationReply(ElicitationAction.DECLINE, emptyList())
    override suspend fun pickFile(pluginTitle: String): PickedDocument? = null
    override suspend fun requestPermission(permission: Permission) = PermissionState.UNKNOWN
}

/** The floor's Platform: answers Allow at once, as [AllowAll] does. */
private class FloorAllowAll : FloorPlatform {
    override suspend fun askApproval(id: ULong, prompt: FloorPrompt) = FloorAnswer.ALLOW
}

/** One row of the table: a call, its ns, and its floor's ns (null where it has none). */
private class Row(val call: String, val ns: Long, val floor: Long?)

private const val ROUNDS = 3

private fun timeRound(calls: Int, call: () -> Unit): Long {
    val start = System.nanoTime()
    repeat(calls) { call() }
    return (System.nanoTime() - start) / calls
}

private fun report(name: String, ns: Long, calls: Int) =
    println("%-58s %,10d ns/call  (%,d calls, best of %d)".format(name, ns, calls, ROUNDS))

private fun measure(name: String, warmup: Int, calls: Int, call: () -> Unit): Long {
    repeat(warmup) { call() }
    // Best of the rounds: the machine is shared, so the minimum is the call's own cost.
    val best = (1..ROUNDS).minOf { timeRound(calls, call) }
    report(name, best, calls)
    return best
}

/**
 * A call and its floor, measured in alternate rounds so that whatever else the machine does
 * weighs on both alike; returns (ours, floor), each the best of its rounds.
 */
private fun measurePair(
    floorName: String, ourName: String, warmup: Int, calls: Int, floor: () -> Unit, ours: () -> Unit,
): Pair<Long, Long> {
    repeat(warmup) { floor(); ours() }
    var bestFloor = Long.MAX_VALUE
    var bestOurs = Long.MAX_VALUE
    repeat(ROUNDS) {
        bestFloor = minOf(bestFloor, timeRound(calls, floor))
        bestOurs = minOf(bestOurs, timeRound(calls, ours))
    }
    report(floorName, bestFloor, calls)
    report(ourName, bestOurs, calls)
    return bestOurs to bestFloor
}

/** What lifting a value costs in Kotlin alone: read back from a heap buffer, no JNA. */
private fun <T> measureLift(name: String, value: T, size: (T) -> ULong, write: (T, ByteBuffer) -> Unit, read: (ByteBuffer) -> T): Long {
    val buffer = ByteBuffer.allocate(size(value).toInt())
    write(value, buffer)
    return measure(name, 5_000, 10_000) {
        buffer.rewind()
        check(read(buffer) == value)
    }
}

// Each package of the bindings declares its own FfiConverter: one overload for each.
private fun <T> measureLift(name: String, converter: edu.pku.harness.FfiConverter<T, *>, value: T): Long =
    measureLift(name, value, converter::allocationSize, converter::write, converter::read)

private fun <T> measureLift(name: String, converter: edu.pku.harness.core.FfiConverter<T, *>, value: T): Long =
    measureLift(name, value, converter::allocationSize, converter::write, converter::read)

fun main() {
    val dataDir = Files.createTempDirectory("harness-bench")
    val harness = Harness.openForDevelopment(dataDir.toString(), AllowAll(), DevelopmentOptions(samplePlugins = true, campusOrigin = null))
    harness.installSamplePlugins()
    harness.setConsent(Consent(termsAccepted = true, met = emptyList()))
    harness.openConversation("bench")
    val floor = Floor(FloorAllowAll())
    val seats = """{"canteen":"学一食堂","seats":2,"time":"12:00"}"""
    // The calls measured must do what they say, or the numbers mean nothing.
    check(harness.decide(Actor.AGENT, "canteen.reserve", seats, "bench").verdict is Verdict.Ask)
    check(runBlocking { harness.invokeAsAgent("bench", "canteen.reserve", seats) }.answer == Answer.ALLOW)
    check(runBlocking { harness.invokeAsAgent("bench", "wallet.cardBalance", "{}") }.prompt == null)
    check(runBlocking { floor.invokePrompted("bench", "canteen.reserve", seats) }.answer == FloorAnswer.ALLOW)

    println("-- each call beside its floor")
    val rows = mutableListOf<Row>()
    val getpid = measure("JNA: libc getpid() (calibration)", 100_000, 500_000) { CalibrationLibC.getpid() }
    val structure = measure("JNA: one Structure allocation (calibration)", 20_000, 50_000) { CalibrationStatus() }
    rows += Row("JNA alone: getpid()", getpid, null)
    rows += Row("JNA alone: one Structure allocated", structure, null)
    val floorFn = measure("floor: noop() (top-level function)", 20_000, 50_000) { edu.pku.harness.floor.noop() }
    rows += Row("UniFFI alone: a no-op function", floorFn, null)
    val (ping, floorPing) = measurePair(
        "floor: Floor.ping() (no-op method)", "ours: ping()", 20_000, 50_000,
        { floor.ping() }, { harness.ping() },
    )
    rows += Row("ping (no-op method)", ping, floorPing)
    val (decide, floorDecide) = measurePair(
        "floor: Floor.decide(…) (decide's shape)", "ours: decide (agent, canteen.reserve → ask)", 10_000, 20_000,
        { floor.decide(FloorActor.AGENT, "canteen.reserve", seats, "bench") },
        { harness.decide(Actor.AGENT, "canteen.reserve", seats, "bench") },
    )
    rows += Row("decide (→ ask)", decide, floorDecide)
    val (read, floorRead) = measurePair(
        "floor: Floor.invokeRead (async, ready at once)", "ours: invokeAsAgent read, no prompt", 2_000, 3_000,
        { runBlocking { floor.invokeRead("bench", "wallet.cardBalance", "{}") } },
        { runBlocking { harness.invokeAsAgent("bench", "wallet.cardBalance", "{}") } },
    )
    rows += Row("invokeAsAgent, a read (no prompt)", read, floorRead)
    val (prompt, floorPrompt) = measurePair(
        "floor: Floor.invokePrompted (async + Platform prompt)", "ours: invokeAsAgent write, prompt answered Allow",
        2_000, 3_000,
        { runBlocking { floor.invokePrompted("bench", "canteen.reserve", seats) } },
        { runBlocking { harness.invokeAsAgent("bench", "canteen.reserve", seats) } },
    )
    rows += Row("invokeAsAgent, prompt answered Allow", prompt, floorPrompt)
    val chat = measure("ours: chatScreen (whole screen model)", 2_000, 5_000) { harness.chatScreen("bench") }
    rows += Row("chatScreen (whole model, one call)", chat, null)
    val plugins = measure("ours: pluginsScreen (whole screen model)", 2_000, 5_000) { harness.pluginsScreen() }
    rows += Row("pluginsScreen (whole model, one call)", plugins, null)

    println("-- the pieces: UniFFI's own work per call, on the Kotlin side")
    // Every UniFFI call allocates one call status; a no-op function is little more.
    measurePair(
        "floor: noop() (top-level function)", "UniFFI's call status alone: 2 JNA Structures",
        20_000, 50_000, { edu.pku.harness.floor.noop() }, { UniffiShapeStatus() },
    )
    measureLift("lift Decision (Kotlin only)", FfiConverterTypeDecision,
        harness.decide(Actor.AGENT, "canteen.reserve", seats, "bench"))
    val invocation = runBlocking { harness.invokeAsAgent("bench", "canteen.reserve", seats) }
    measureLift("lift Invocation with its prompt (Kotlin only)", FfiConverterTypeInvocation, invocation)
    measureLift("lift ChatScreen (Kotlin only)", FfiConverterTypeChatScreen, harness.chatScreen("bench"))
    measureLift("lift PluginsScreen (Kotlin only)", FfiConverterTypePluginsScreen, harness.pluginsScreen())
    floor.close()
    harness.shutdown()
    harness.close()
    dataDir.toFile().deleteRecursively()

    // The rows of README.md's numbers table (its size row comes from scripts/check-size.sh).
    println()
    println("| what | measured | floor |")
    println("| --- | ---: | ---: |")
    for (row in rows) {
        println("| ${row.call} | %,d ns | %s |".format(row.ns, row.floor?.let { "%,d ns".format(it) } ?: "—"))
    }
}
