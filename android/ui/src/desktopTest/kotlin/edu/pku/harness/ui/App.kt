package edu.pku.harness.ui

import androidx.compose.ui.graphics.ImageBitmap
import androidx.compose.ui.graphics.toComposeImageBitmap
import edu.pku.harness.DevelopmentOptions
import edu.pku.harness.Harness
import edu.pku.harness.HarnessException
import edu.pku.harness.ScriptedModel
import edu.pku.harness.ScriptedPlatform
import edu.pku.harness.core.Action
import edu.pku.harness.core.Language
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.core.Route
import edu.pku.harness.core.SetupStep
import edu.pku.harness.follow
import edu.pku.harness.jsonString
import edu.pku.harness.newDataDir
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.runBlocking
import java.util.concurrent.CopyOnWriteArrayList
import org.jetbrains.skia.Image

/** The phone's side, faked: what the screens asked of it, and what the "user" chose there. */
class FakePhone(private val platform: ScriptedPlatform) : PhoneActions {
    val requested = CopyOnWriteArrayList<Permission>()
    val opened = CopyOnWriteArrayList<Permission>()
    @Volatile var choice = PermissionState.DENIED
    @Volatile var document: PickedDocument? = null

    override suspend fun requestPermission(permission: Permission): PermissionState {
        requested += permission
        // As Android would report it from now on.
        platform.permissions[permission] = choice
        return choice
    }

    override fun openPermissionSettings(permission: Permission) {
        opened += permission
    }

    override suspend fun pickDocument(): PickedDocument? = document

    /** The pages the screens asked the browser to open. */
    val browsed = CopyOnWriteArrayList<String>()

    override fun openBrowser(url: String) {
        browsed += url
    }

    /** Each time a screen asked the window kept out of screenshots (true) or not (false). */
    val secureWindow = CopyOnWriteArrayList<Boolean>()

    override fun keepOffScreenshots(secret: Boolean) {
        secureWindow += secret
    }

    /** The desktop's decoder: Skia, which Compose for desktop draws with. */
    override fun decodeImage(bytes: ByteArray): ImageBitmap? =
        runCatching { Image.makeFromEncoded(bytes).toComposeImageBitmap() }.getOrNull()
}

/** The first run's steps after the terms. */
val LATER = listOf(SetupStep.MODEL, SetupStep.CAMPUS, SetupStep.NOTIFICATIONS)

/**
 * The app on the real library: a Harness on [dataDir] (the sample plugins installed on a fresh
 * one, the terms accepted), in [language], its model [model], its prompts answered
 * through an [ApprovalHost], its screens' holders in [models].
 */
class App(
    language: Language,
    model: ScriptedModel? = null,
    val dataDir: String = newDataDir(),
    fresh: Boolean = true,
    /** Where the campus is reached: a campus simulator (`startCampusSimulator()`). */
    campusOrigin: String? = null,
    /** A new install's first run still to go (the terms not accepted); else it is over. */
    firstRun: Boolean = false,
    /** The sample plugins; without them, the app's own shipped plugins as a phone has them. */
    samples: Boolean = true,
    /** Remote servers on this machine (a test's), as a development build reaches them. */
    servers: Boolean = false,
    /** Which screen shows; the chat unless a test opens the app as a phone does (`AppNavigator()`: Today). */
    val navigator: AppNavigator = AppNavigator(Route.CHAT),
) : AutoCloseable {
    val approvals = ApprovalHost()
    val platform = ScriptedPlatform().apply {
        answerWith = approvals::askApproval
        // A server's question and sign-in sheet on the screen; the browser is a test's.
        questionWith = approvals::askQuestion
        signInWith = { sheet, _ ->
            if (!approvals.confirmSignIn(sheet)) throw HarnessException.Platform("the student cancelled the sign-in")
            follow(sheet.page)
        }
        secrets["model.apiKey"] = "sk-ui"
    }
    val phone = FakePhone(platform)
    val harness: Harness = Harness.openForDevelopment(
        dataDir, platform,
        DevelopmentOptions(samplePlugins = samples, campusOrigin = campusOrigin, serversOnThisMachine = servers),
    ).apply {
        if (fresh && samples) installSamplePlugins()
        if (fresh && !firstRun) {
            // The terms, and the first run's other steps left for later: the system
            // permissions stay as the phone reports them (not asked yet), as on a new install,
            // and the campus account is not signed in.
            acceptTerms()
            for (step in LATER) passSetupStep(step)
        }
        if (model != null) {
            changeSetting("model.endpoint", jsonString(model.endpoint))
            changeSetting("model.name", "\"qwen-plus\"")
        }
        runBlocking { act(Action.SetLanguage(language)) }
    }
    private val withdrawals = harness.subscribe(approvals.listener)
    val scope = CoroutineScope(SupervisorJob() + Dispatchers.Main)
    val models = AppModels(harness, phone, scope, navigator)

    override fun close() {
        models.close()
        withdrawals.cancel()
        scope.cancel()
        harness.shutdown()
    }
}
