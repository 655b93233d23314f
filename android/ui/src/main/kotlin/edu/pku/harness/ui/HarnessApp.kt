package edu.pku.harness.ui

import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.Box
import androidx.compose.foundation.layout.fillMaxSize
import androidx.compose.foundation.layout.padding
import androidx.compose.material3.Badge
import androidx.compose.material3.BadgedBox
import androidx.compose.material3.TabRow
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.Tab
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.DisposableEffect
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.runtime.collectAsState
import androidx.compose.runtime.getValue
import androidx.compose.runtime.key
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.rememberCoroutineScope
import androidx.compose.runtime.setValue
import androidx.compose.ui.Modifier
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.unit.dp
import edu.pku.harness.Harness
import edu.pku.harness.HarnessEvent
import edu.pku.harness.core.ActivityFilter
import edu.pku.harness.core.JobDraft
import edu.pku.harness.core.JobWords
import edu.pku.harness.core.CampusCheck
import edu.pku.harness.core.PayCodeScreen
import edu.pku.harness.core.RideCodeScreen
import edu.pku.harness.core.PluginDetail
import edu.pku.harness.core.PluginScreen
import edu.pku.harness.core.TodayScreen
import edu.pku.harness.core.Route
import kotlinx.coroutines.CoroutineScope

/** A data directory's first conversation: the chat opens on it when there is no other. */
const val MAIN_CONVERSATION = "main"

/** Test tag of a navigation tab. */
fun navTag(route: Route) = "nav-" + route.name.lowercase()

/**
 * Every screen's state holder, for one Harness. A tap the core took on any screen re-reads them
 * all: a tap may change what another screen shows (the language, a plugin's state, a badge).
 */
class AppModels(
    private val harness: Harness,
    private val phone: PhoneActions,
    private val scope: CoroutineScope,
    private val navigator: AppNavigator,
    /** The conversation the chat opens on; the most recently active one when null. */
    start: String? = MAIN_CONVERSATION,
    /** False for models made during a composition: an effect calls [refresh] (see ScreenModel). */
    private val readNow: Boolean = true,
) : AutoCloseable {
    /** The phone's picture decoder, for the chat's tool results. */
    fun decodeImage(bytes: ByteArray) = phone.decodeImage(bytes)

    private val refreshAll: () -> Unit = { refresh() }
    private fun <T : Any> screen(refreshOn: (HarnessEvent) -> Boolean = { false }, read: suspend (Harness) -> T) =
        ScreenModel(harness, phone, scope, refreshOn, refreshAll, navigator::open, readNow, ::switchTo, navigator::openPluginScreen, navigator::openDataSource, read)

    /** The conversation the chat shows now (a new chat, a row of the list, an undo switch it). */
    @Volatile var conversation: String = start ?: harness.latestConversation()
        private set

    /** Shows [id] in the chat. */
    fun switchTo(id: String) {
        conversation = id
        navigator.open(Route.CHAT)
        refresh()
    }

    private val memoryEvents: (HarnessEvent) -> Boolean = { it is HarnessEvent.MemoryPending }

    init {
        // The chat of a conversation nobody opened yet starts with the default settings.
        harness.openConversation(conversation)
    }

    val conversations = screen { it.conversationListScreen() }

    /** The first run's next step; while there is one it covers the app. */
    val firstRun = screen { it.firstRunScreen() }
    val navigation = screen(memoryEvents) { it.navigation() }
    val chat = screen(chatEvents { conversation }) { it.chatScreen(conversation) }
    val conversationSettings = screen { it.conversationSettingsScreen(conversation) }
    val plugins = screen { it.pluginsScreen() }
    val consent = screen { it.consentScreen() }
    val campus = screen { it.campusAccountScreen() }
    val treehole = screen { it.campusCheckScreen(CampusCheck.TREEHOLE) }
    val grades = screen { it.campusCheckScreen(CampusCheck.GRADES) }
    val model = screen { it.modelSettingsScreen() }
    val memory = screen(memoryEvents) { it.memoryInboxScreen() }

    @Volatile var activityFilter = ActivityFilter(plugin = null, effect = null)
        private set

    // 活动 grows with every call: the chat's turns re-read it as well.
    val activity = screen(chatEvents { conversation }) { it.activityScreen(activityFilter) }
    val allowances = screen { it.allowancesScreen() }
    val spending = screen(chatEvents { conversation }) { it.spendingScreen() }
    val cloud = screen { it.cloudScreen() }
    val jobs = screen { it.jobsScreen() }

    /** The 撤销 bar of each public call waiting out its undo window (over every screen). */
    val held = screen({ it is HarnessEvent.HeldCallsChanged }) { it.heldCallsScreen() }

    /** Tells the core whether the 撤销 bar is drawn: only then does a public call wait for it. */
    fun showUndo(shown: Boolean) = harness.showUndo(shown)

    /** The core's notification words for the new-job form's choices (a quick read in memory). */
    fun jobWords(draft: JobDraft): JobWords? = runCatching { harness.jobWords(draft) }.getOrNull()

    private val all = listOf(firstRun, navigation, conversations, chat, conversationSettings, plugins, consent, campus, treehole, grades, model, memory, activity, allowances, spending, cloud, jobs, held)
    private var detail: ScreenModel<PluginDetail>? = null

    /** The holder of the plugin detail on screen, if one is. */
    val currentDetail: ScreenModel<PluginDetail>? get() = detail

    /** The bar item [route] is shown under (the core decides: its own, or "More"). */
    fun tabFor(route: Route): Route = runCatching { harness.tabFor(route) }.getOrDefault(Route.CHAT)

    fun filterActivity(filter: ActivityFilter) {
        activityFilter = filter
        activity.refresh()
    }

    /**
     * A holder of the pay code for the page that shows it, closed with that page: the code is
     * read only while it is on screen, and the first read waits for the page's effect.
     */
    fun payCode(): ScreenModel<PayCodeScreen> =
        ScreenModel(harness, phone, scope, { false }, refreshAll, navigator::open, readNow = false) { it.payCodeScreen() }

    /** A holder of the bus's ride codes for the page that shows them, closed with that page. */
    fun rideCode(): ScreenModel<RideCodeScreen> =
        ScreenModel(harness, phone, scope, { false }, refreshAll, navigator::open, readNow = false) { it.rideCodeScreen() }

    /**
     * A holder of Today for the page that shows it, closed with that page: its tiles read the
     * campus through the data sources' cache only while it is on screen.
     */
    fun today(): ScreenModel<TodayScreen> =
        ScreenModel(harness, phone, scope, { false }, refreshAll, navigator::open, readNow = false, openPluginScreen = navigator::openPluginScreen, openDataSource = navigator::openDataSource) {
            it.todayScreen()
        }

    /** A holder of a plugin's declared screen for the page that shows it, closed with that page. */
    fun pluginScreen(plugin: String, screen: String): ScreenModel<PluginScreen> =
        ScreenModel(harness, phone, scope, { false }, refreshAll, navigator::open, readNow = false, openPluginScreen = navigator::openPluginScreen, openDataSource = navigator::openDataSource) {
            it.pluginScreen(plugin, screen)
        }

    /** A holder of a data source's own value (`Acted.OpenDataSource`), closed with its page. */
    fun sourceScreen(plugin: String, source: String): ScreenModel<PluginScreen> =
        ScreenModel(harness, phone, scope, { false }, refreshAll, navigator::open, readNow = false, openPluginScreen = navigator::openPluginScreen, openDataSource = navigator::openDataSource) {
            it.sourceScreen(plugin, source)
        }

    /** The holder of plugin [id]'s detail screen (one at a time). */
    fun pluginDetail(id: String): ScreenModel<PluginDetail> {
        detail?.close()
        return screen { it.pluginDetailScreen(id) }.also { detail = it }
    }

    fun refresh() {
        all.forEach { it.refresh() }
        detail?.refresh()
    }

    override fun close() {
        all.forEach { it.close() }
        detail?.close()
    }
}

/**
 * The app: the core's navigation (its labels, the pending-memory badge) over the screen
 * [navigator] shows, with the approval sheet over everything.
 */
@Composable
fun HarnessApp(harness: Harness, approvals: ApprovalHost, phone: PhoneActions, navigator: AppNavigator, modifier: Modifier = Modifier) {
    val scope = rememberCoroutineScope()
    val models = remember(harness) { AppModels(harness, phone, scope, navigator, start = null, readNow = false) }
    // The first reads once this composition (which made the holders) is applied.
    DisposableEffect(models) {
        models.refresh()
        onDispose { models.close() }
    }
    HarnessAppContent(models, approvals, navigator, modifier)
}

/** [HarnessApp] on holders made elsewhere (tests hold them to wait on what the core says). */
@Composable
fun HarnessAppContent(models: AppModels, approvals: ApprovalHost, navigator: AppNavigator, modifier: Modifier = Modifier) {
    val route by navigator.route.collectAsState()
    // The 撤销 bar is drawn while the app is: a public call waits its window only then.
    DisposableEffect(models) {
        models.showUndo(true)
        onDispose { models.showUndo(false) }
    }
    HarnessTheme(pictures = models::decodeImage) {
        WithApprovalSheet(approvals) {
            val firstRun = models.firstRun.model?.page
            if (firstRun != null) FirstRunContent(firstRun, models) else Column(modifier.fillMaxSize()) {
                val items = models.navigation.model?.items.orEmpty()
                if (items.isNotEmpty()) {
                    // The bar: at most five, so each fits a phone's width; the rest under "More".
                    val tab = remember(route, items) { models.tabFor(route) }
                    val selected = items.indexOfFirst { it.route == tab }.coerceAtLeast(0)
                    TabRow(selectedTabIndex = selected) {
                        for (item in items) {
                            // The content form of Tab: its text form pads 16 dp each side, which
                            // leaves too little of a fifth of a 360 dp phone for a label.
                            Tab(
                                selected = item.route == tab,
                                onClick = { navigator.open(item.route) },
                                modifier = Modifier.testTag(navTag(item.route)),
                            ) {
                                val label = @Composable {
                                    Text(item.label, maxLines = 1, style = MaterialTheme.typography.titleSmall)
                                }
                                Box(Modifier.padding(horizontal = 4.dp, vertical = 14.dp)) {
                                    val badge = item.badge
                                    if (badge == null) label() else BadgedBox(badge = { Badge { Text("$badge") } }) { label() }
                                }
                            }
                        }
                    }
                }
                // The 撤销 bar below the screen, so it covers none of it (the chat's draft).
                Box(Modifier.weight(1f)) { Route(models, route, navigator) }
                HeldCallsBar(models.held)
            }
        }
    }
}

@Composable
private fun Route(models: AppModels, route: Route, navigator: AppNavigator) {
    when (route) {
        Route.TODAY -> {
            val holder = remember { models.today() }
            DisposableEffect(holder) { onDispose { holder.close() } }
            LaunchedEffect(holder) { holder.refresh() }
            TodayPage(holder)
        }
        Route.PLUGIN_SCREEN -> {
            val shown by navigator.pluginScreen.collectAsState()
            val source by navigator.dataSource.collectAsState()
            shown?.let { (plugin, screen) ->
                key(plugin, screen) {
                    val holder = remember { models.pluginScreen(plugin, screen) }
                    DisposableEffect(holder) { onDispose { holder.close() } }
                    LaunchedEffect(holder) { holder.refresh() }
                    PluginScreenPage(holder)
                }
            }
            source?.let { (plugin, key) ->
                key(plugin, key) {
                    val holder = remember { models.sourceScreen(plugin, key) }
                    DisposableEffect(holder) { onDispose { holder.close() } }
                    LaunchedEffect(holder) { holder.refresh() }
                    PluginScreenPage(holder)
                }
            }
        }
        Route.CHAT -> ChatPage(
            models.chat,
            models.conversationSettings.model?.title,
            openSettings = { navigator.open(Route.CONVERSATION_SETTINGS) },
        )
        Route.CONVERSATION_SETTINGS -> ConversationSettingsPage(models.conversationSettings)
        Route.CONVERSATIONS -> ConversationListPage(models.conversations)
        Route.PLUGINS -> {
            var open by remember { mutableStateOf<String?>(null) }
            val id = open
            if (id == null) {
                PluginsPage(models.plugins) { open = it }
            } else key(id) {
                val holder = remember { models.pluginDetail(id) }
                LaunchedEffect(holder) { holder.refresh() }
                PluginDetailPage(holder) { open = null }
            }
        }
        Route.MEMORY -> MemoryPage(models.memory)
        Route.JOBS -> JobsPage(models.jobs) { draft -> models.jobWords(draft) }
        Route.ACTIVITY -> ActivityPage(models.activity) { models.filterActivity(it) }
        Route.ALLOWANCES -> AllowancesPage(models.allowances)
        Route.SPENDING -> SpendingPage(models.spending)
        Route.CLOUD -> CloudPage(models.cloud)
        Route.CONSENT -> ConsentPage(models.consent)
        Route.MODEL -> ModelPage(models.model)
        Route.MORE -> MorePage(models.navigation.model?.more.orEmpty()) { navigator.open(it) }
        Route.CAMPUS_ACCOUNT -> CampusAccountPage(models.campus)
        Route.TREEHOLE_CHECK -> CampusCheckPage(models.treehole)
        Route.GRADES_CHECK -> CampusCheckPage(models.grades)
        Route.PAY_CODE -> {
            val holder = remember { models.payCode() }
            DisposableEffect(holder) { onDispose { holder.close() } }
            PayCodePage(holder)
        }
        Route.RIDE_CODE -> {
            val holder = remember { models.rideCode() }
            DisposableEffect(holder) { onDispose { holder.close() } }
            RideCodePage(holder)
        }
    }
}
