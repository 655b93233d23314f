package edu.pku.harness.app

import android.app.Activity
import android.content.Intent
import android.net.Uri
import androidx.compose.ui.test.ComposeTimeoutException
import androidx.compose.ui.test.hasAnyAncestor
import androidx.compose.ui.test.hasClickAction
import androidx.compose.ui.test.hasTestTag
import androidx.compose.ui.test.isEnabled
import androidx.compose.ui.test.isRoot
import androidx.compose.ui.test.printToString
import androidx.compose.ui.test.junit4.ComposeTestRule
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import androidx.test.core.app.ActivityScenario
import androidx.test.core.app.ApplicationProvider
import edu.pku.harness.core.ChatItemKind
import edu.pku.harness.core.ChatScreen
import edu.pku.harness.core.SetupStep
import edu.pku.harness.Consent
import edu.pku.harness.ui.ApprovalTags
import edu.pku.harness.ui.MAIN_CONVERSATION

// The app's journeys, shared by the Robolectric tests (src/test: scripts/test-android-robolectric.sh,
// `./gradlew :app:testDebugUnitTest`) and the instrumented ones (src/androidTest: an emulator or a
// phone). Each runs the app's own Application, activity and receivers on the real core library
// and a scripted model server on 127.0.0.1; what differs between a phone and Robolectric (how the
// system's own dialogs are answered, what the test may set of the system) is [TestSystem].

const val SEATS = """{"canteen":"学一食堂","seats":2,"time":"12:00"}"""
const val ASK = "帮我在学一订两个座位"

/** The model's stream that calls [name] with [args] (a JSON object as text). */
fun callOf(name: String, args: String, id: String = "call_1") = listOf(
    chunk("""{"tool_calls":[{"index":0,"id":"$id","type":"function","function":{"name":"$name","arguments":${jsonString(args)}}}]}"""),
    chunk("{}", "tool_calls"),
    "[DONE]",
)

/** The model's stream that answers [text] and ends the turn. */
fun answerOf(text: String) = listOf(chunk("""{"content":${jsonString(text)}}""", "stop"), "[DONE]")

/** A model that asks to reserve seats (a write: the core asks the user), then says [answer]. */
fun reservingModel(answer: String) = ScriptedModelServer(callOf("canteen__reserve", SEATS), answerOf(answer))

/**
 * What a test does as the phone's system or its user outside the app's screens. Robolectric's
 * shadows do it in src/test ([RobolectricSystem]); on a phone (src/androidTest) only some of it
 * can be done, and a test that needs the rest is skipped there ([org.junit.Assume]).
 */
interface TestSystem {
    /** Whether this system hands the app's requests for system screens to the test to answer. */
    val answersSystemScreens: Boolean

    /** Answers the notification permission dialog [activity] asked for; false when none was asked. */
    fun answerPermissionDialog(activity: Activity, grant: Boolean): Boolean

    /** Grants the notification permission, as the user would in the settings. */
    fun grantNotifications()

    /** The permissions [activity] asked the system for so far, in order. */
    fun requestedPermissions(activity: Activity): List<String>

    /** Sets whether the app may schedule exact alarms; false when this system cannot be told. */
    fun allowExactAlarms(allowed: Boolean): Boolean

    /** The app's next armed alarm, as the system's AlarmManager holds it; null when none is. */
    fun nextAlarm(): SystemAlarm?

    /** Answers the system screen [activity] opened for a result (the document picker) with [data]. */
    fun answerActivityForResult(activity: Activity, data: Intent?): Intent?

    /** The next of the screens [activity] started (oldest first, each once); null when none is left. */
    fun nextStartedActivity(activity: Activity): Intent?

    /** Moves the system's wall clock to [epochMs]; false when this system cannot be told. */
    fun setWallClock(epochMs: Long): Boolean

    /** Runs what is queued for the main thread (Robolectric's paused looper); nothing on a phone. */
    fun idleMainThread()

    companion object {
        /** Robolectric's when it is on the classpath, the phone's otherwise. */
        val current: TestSystem by lazy {
            val name = if (isRobolectric()) "edu.pku.harness.app.RobolectricSystem" else "edu.pku.harness.app.DeviceSystem"
            Class.forName(name).getDeclaredConstructor().newInstance() as TestSystem
        }

        fun isRobolectric() = "robolectric" == android.os.Build.FINGERPRINT.lowercase()
    }
}

/** An alarm the system holds: when it fires, and whether exactly then (no batching window). */
data class SystemAlarm(val atEpochMs: Long, val exact: Boolean)

/** A document named [name] holding [bytes], as the picker hands it over: a URI the app may open. */
fun documentUri(context: android.content.Context, name: String, bytes: ByteArray): Uri {
    val dir = java.io.File(context.cacheDir, "picked-${System.nanoTime()}").apply { mkdirs() }
    val file = java.io.File(dir, name).apply { writeBytes(bytes) }
    return Uri.fromFile(file)
}

/**
 * The app under test: its Application (and so its one Harness), set up as a student would have
 * it — or, with [firstRun], as a new install whose first run is still to go.
 */
class JourneyApp(model: ScriptedModelServer? = null, firstRun: Boolean = false) {
    val app = ApplicationProvider.getApplicationContext<HarnessApplication>()
    val harness get() = app.harness
    val system = TestSystem.current

    init {
        // The terms accepted and signed in; the system permissions left as the phone reports them.
        harness.installSamplePlugins()
        if (!firstRun) harness.setConsent(Consent(termsAccepted = true, met = emptyList()))
        // The first run's other steps left for later, as a student who skipped them.
        if (!firstRun) for (step in listOf(SetupStep.MODEL, SetupStep.CAMPUS, SetupStep.NOTIFICATIONS)) harness.passSetupStep(step)
        if (model != null) {
            app.platform.writeSecret("model.apiKey", "sk-android")
            harness.changeSetting("model.endpoint", jsonString(model.endpoint))
            harness.changeSetting("model.name", "\"qwen-plus\"")
        }
        // The app opens on Today; the journeys start in the chat, as a student who tapped 对话.
        app.navigator.open(edu.pku.harness.core.Route.CHAT)
    }

    fun platform(): AndroidPlatform = app.platform

    fun chat(): ChatScreen = harness.chatScreen(MAIN_CONVERSATION)

    /** Whether the chat's turn has ended with the model's answer. */
    fun turnOver(): Boolean = chat().let { c -> c.runningTurn == null && c.items.any { it.kind == ChatItemKind.ASSISTANT } }

    fun launch(): ActivityScenario<MainActivity> = ActivityScenario.launch(MainActivity::class.java)

    /** Opens the chat the app shows, as its screen does, for a turn sent without the screen. */
    fun openChat() = harness.openConversation(MAIN_CONVERSATION)
}

/** The activity [scenario] shows now (a new one after a recreation). */
fun ActivityScenario<MainActivity>.activity(): MainActivity {
    lateinit var shown: MainActivity
    onActivity { shown = it }
    return shown
}

/**
 * [condition] within [timeoutMs], checked between frames with what is queued for the main thread
 * run each time: the screens read the core off the main thread and hand the result to it, and
 * Robolectric's main looper runs only when asked. Never waits for the screen to be idle (a
 * running turn's progress indicator never is).
 */
fun ComposeTestRule.await(timeoutMs: Long = 15_000, condition: () -> Boolean) = waitUntil(timeoutMs) {
    TestSystem.current.idleMainThread()
    condition()
}

/**
 * Waits until the chat's draft field is on screen. A failure says what the app showed instead
 * (its route and every root's semantics). Under Robolectric it once never showed when an earlier
 * test's state write had lost its dispatch (SoftwareKeyApplication.onTerminate now applies it).
 */
fun ComposeTestRule.waitForTheChat() = try {
    await(60_000) { onAllNodes(hasTestTag(edu.pku.harness.ui.ChatTags.DRAFT)).fetchSemanticsNodes().isNotEmpty() }
} catch (e: ComposeTimeoutException) {
    val app = ApplicationProvider.getApplicationContext<HarnessApplication>()
    val shown = runCatching { onAllNodes(isRoot()).printToString() }.getOrElse { "(unreadable: $it)" }
    throw AssertionError("the chat's draft never showed; route ${app.navigator.route.value}; on screen:\n$shown", e)
}

/** Taps the sheet's button for [answer], scrolled into view first (the sheet scrolls). */
fun ComposeTestRule.tapAnswer(answer: edu.pku.harness.core.Answer) {
    onNode(hasTestTag(ApprovalTags.answer(answer))).performScrollTo().performClick()
}

/** Waits until the approval sheet is shown and its answers take taps (ANSWER_DELAY_MS after). */
fun ComposeTestRule.waitForTheAnswers() = await(30_000) {
    onAllNodes(hasTestTag(ApprovalTags.SHEET)).fetchSemanticsNodes().isNotEmpty() &&
        onAllNodes(hasClickAction() and isEnabled() and hasAnyAncestor(hasTestTag(ApprovalTags.SHEET)))
            .fetchSemanticsNodes().isNotEmpty()
}

/** [condition] within [timeoutMs], idling the main thread in between; [what] names it in the failure. */
fun waitFor(what: String, timeoutMs: Long = 15_000, condition: () -> Boolean) {
    val system = TestSystem.current
    val deadline = System.nanoTime() + timeoutMs * 1_000_000
    while (!condition()) {
        if (System.nanoTime() > deadline) throw ComposeTimeoutException("waited $timeoutMs ms for $what")
        system.idleMainThread()
        Thread.sleep(20)
    }
}
