package edu.pku.harness

import edu.pku.harness.core.Answer
import edu.pku.harness.core.ElicitationAction
import edu.pku.harness.core.ElicitationSheet
import edu.pku.harness.core.SignInSheet
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.RefusalCode
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.nio.file.Files
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CopyOnWriteArrayList

/**
 * A Platform that answers approval prompts from a script, the way the app's approval sheet
 * would: each prompt takes the next scripted answer, or `answerWith` decides. A prompt nobody
 * scripted an answer for fails (the core then declines the call: fail closed).
 */
class ScriptedPlatform(vararg answers: Answer) : Platform {
    private val script = ConcurrentLinkedQueue(answers.toList())
    val prompts = CopyOnWriteArrayList<Pair<ULong, ApprovalPrompt>>()
    /** The thread each prompt arrived on (a coroutine the bindings launch for the call). */
    val askThreads = CopyOnWriteArrayList<String>()
    @Volatile var answerWith: (suspend (ULong, ApprovalPrompt) -> Answer)? = null

    val notifications = CopyOnWriteArrayList<AppNotification>()
    val wakeUps = CopyOnWriteArrayList<Long?>()
    val exactWakeUps = CopyOnWriteArrayList<Boolean>()
    val screens = CopyOnWriteArrayList<String>()
    val secrets = ConcurrentHashMap<String, String>()
    val permissions = ConcurrentHashMap<Permission, PermissionState>()

    override suspend fun askApproval(id: ULong, prompt: ApprovalPrompt): Answer {
        prompts.add(id to prompt)
        askThreads.add(Thread.currentThread().name)
        answerWith?.let { return it(id, prompt) }
        return script.poll() ?: throw HarnessException.Platform("no scripted answer for ${prompt.tool}")
    }

    override fun postNotification(notification: AppNotification) { notifications.add(notification) }
    override fun armWakeUp(atEpochMs: Long, exact: Boolean) { wakeUps.add(atEpochMs); exactWakeUps.add(exact) }
    override fun cancelWakeUp() { wakeUps.add(null) }
    override fun openScreen(route: String) { screens.add(route) }
    override fun readSecret(key: String): String? = secrets[key]
    override fun writeSecret(key: String, value: String?) {
        if (value == null) secrets.remove(key) else secrets[key] = value
    }
    override fun permissionState(permission: Permission): PermissionState =
        permissions[permission] ?: PermissionState.UNKNOWN

    /** The sign-in sheets shown, with the redirect URI each was to come back to. */
    val signIns = CopyOnWriteArrayList<Pair<SignInSheet, String>>()
    /** Decides a sign-in: the address the browser came back to. Unset: the student cancels. */
    @Volatile var signInWith: (suspend (SignInSheet, String) -> String)? = null
    /** The questions of remote servers shown. */
    val questions = CopyOnWriteArrayList<ElicitationSheet>()
    /** Answers a server's question. Unset: the student declines. */
    @Volatile var questionWith: (suspend (ULong, ElicitationSheet) -> ElicitationReply)? = null

    override suspend fun signIn(sheet: SignInSheet, redirectUri: String): String {
        signIns.add(sheet to redirectUri)
        return signInWith?.invoke(sheet, redirectUri) ?: throw HarnessException.Platform("the student cancelled the sign-in")
    }

    override suspend fun askElicitation(id: ULong, sheet: ElicitationSheet): ElicitationReply {
        questions.add(sheet)
        return questionWith?.invoke(id, sheet) ?: ElicitationReply(ElicitationAction.DECLINE, emptyList())
    }

    /** The plugins (by title) whose tool opened the file picker. */
    val picks = CopyOnWriteArrayList<String>()
    /** Picks a file in the picker. Unset: the student picks nothing. */
    @Volatile var pickWith: (suspend (String) -> PickedDocument?)? = null
    /** The permissions whose system dialog was shown. */
    val permissionRequests = CopyOnWriteArrayList<Permission>()
    /** Answers a permission's system dialog. Unset: the dialog answers UNKNOWN. */
    @Volatile var permissionWith: (suspend (Permission) -> PermissionState)? = null

    override suspend fun pickFile(pluginTitle: String): PickedDocument? {
        picks.add(pluginTitle)
        return pickWith?.invoke(pluginTitle)
    }

    override suspend fun requestPermission(permission: Permission): PermissionState {
        permissionRequests.add(permission)
        return permissionWith?.invoke(permission) ?: PermissionState.UNKNOWN
    }
}

/** Records every event, with the thread it arrived on. */
class RecordingListener : EventListener {
    val events = CopyOnWriteArrayList<HarnessEvent>()
    val threads = CopyOnWriteArrayList<String>()
    override fun onEvent(event: HarnessEvent) {
        threads.add(Thread.currentThread().name)
        events.add(event)
    }
}

const val SEATS = """{"canteen":"学一食堂","seats":2,"time":"12:00"}"""
const val RESERVED =
    """{"canteen":"学一食堂","reservationId":"R-20261130-0042","seats":2,"status":"reserved","time":"12:00"}"""
const val BALANCE = """{"balanceYuan":42.5,"dailyLimitYuan":200.0,"spentTodayYuan":18.5}"""

fun newDataDir(): String = Files.createTempDirectory("harness-kotlin-test").toString()

/** A Harness with the sample plugins' code (the host library is built for development), on
 *  [dataDir], reaching the campus at [campusOrigin] (a simulator) when given. */
fun developmentHarness(dataDir: String = newDataDir(), platform: Platform = ScriptedPlatform(), campusOrigin: String? = null): Harness =
    Harness.openForDevelopment(dataDir, platform, DevelopmentOptions(samplePlugins = true, campusOrigin = campusOrigin))

/** A Harness on a fresh data directory with the sample plugins, the terms accepted, and
 *  conversation "c1" open. */
fun sampleHarness(platform: Platform = ScriptedPlatform()): Harness {
    val harness = developmentHarness(platform = platform)
    harness.installSamplePlugins()
    harness.setConsent(Consent(termsAccepted = true, met = emptyList()))
    harness.openConversation("c1")
    return harness
}

/**
 * Runs a suspending test body with a deadline, so that a deadlock fails instead of hanging: a
 * minute, which no loaded machine needs.
 */
fun runTest(block: suspend CoroutineScope.() -> Unit) = runBlocking { withTimeout(60_000) { block() } }

/** The core's own bundled plugins, installed in every data directory beside the samples. */
val BUILTIN = setOf("dashboard", "files", "memory", "scheduler", "settings", "time")

/** The app's shipped TypeScript plugins (plugins/<id>/), in every app data directory. */
val SHIPPED = listOf("bus", "canteen", "classrooms", "course", "grades", "library", "notices", "treehole", "wallet")

/** The sample plugins, without the core's own. */
fun List<PluginInfo>.samples(): List<PluginInfo> = filter { it.id !in BUILTIN }

/** The model-facing names of the sample plugins' tools, without the core's own. */
fun List<ModelTool>.sampleNames(): List<String> = map { it.name }.filter { name -> BUILTIN.none { name.startsWith(it + "__") } }

fun Invocation.refusal(): RefusalCode? = (outcome as? Outcome.Refused)?.code

fun Invocation.resultJson(): String? = (outcome as? Outcome.Ran)?.resultJson

/** The name the JVM gives a native thread (here a worker of the library's tokio runtime) that
 *  JNA attached to call into Kotlin. */
val ATTACHED_NATIVE_THREAD = Regex("Thread-[0-9]+")
