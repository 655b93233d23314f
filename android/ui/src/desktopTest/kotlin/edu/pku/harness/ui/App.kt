package edu.pku.harness.ui

import edu.pku.harness.DevelopmentOptions
import edu.pku.harness.Harness
import edu.pku.harness.ScriptedModel
import edu.pku.harness.ScriptedPlatform
import edu.pku.harness.core.Action
import edu.pku.harness.core.Language
import edu.pku.harness.core.Permission
import edu.pku.harness.core.PermissionState
import edu.pku.harness.jsonString
import edu.pku.harness.newDataDir
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.runBlocking
import java.util.concurrent.CopyOnWriteArrayList

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
}

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
    /** The sample plugins (an in-memory `wallet`, …) or, when false, the app's shipped ones. */
    samplePlugins: Boolean = true,
) : AutoCloseable {
    val approvals = ApprovalHost()
    val platform = ScriptedPlatform().apply {
        answerWith = approvals::askApproval
        secrets["model.apiKey"] = "sk-ui"
    }
    val phone = FakePhone(platform)
    val harness: Harness = Harness.openForDevelopment(
        dataDir, platform, DevelopmentOptions(samplePlugins = samplePlugins, campusOrigin = campusOrigin),
    ).apply {
        if (fresh) {
            if (samplePlugins) installSamplePlugins()
            // The terms; the system permissions stay as the phone reports them (not asked
            // yet), as on a new install, and the campus account is not signed in.
            acceptTerms()
        }
        if (model != null) {
            changeSetting("model.endpoint", jsonString(model.endpoint))
            changeSetting("model.name", "\"qwen-plus\"")
        }
        runBlocking { act(Action.SetLanguage(language)) }
    }
    private val withdrawals = harness.subscribe(approvals.listener)
    val scope = CoroutineScope(SupervisorJob() + Dispatchers.Main)
    val navigator = AppNavigator()
    val models = AppModels(harness, phone, scope, navigator)

    override fun close() {
        models.close()
        withdrawals.cancel()
        scope.cancel()
        harness.shutdown()
    }
}
