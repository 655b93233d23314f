package edu.pku.harness.ui

import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.setValue
import edu.pku.harness.EventListener
import edu.pku.harness.Harness
import edu.pku.harness.HarnessEvent
import edu.pku.harness.core.Acted
import edu.pku.harness.core.Action
import edu.pku.harness.core.AddPluginScreen
import edu.pku.harness.core.Route
import edu.pku.harness.core.ShellEffect
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.util.concurrent.ConcurrentHashMap

/**
 * One screen's state holder: [model] is the core's whole screen, read in one call, re-read after
 * every tap and whenever [refreshOn] accepts an event. The core's calls run off the main thread
 * (on [Dispatchers.IO]); [model], [message] and [preview] are written on [scope] (the UI's).
 * Reads are coalesced: a burst of events (a streaming answer) costs one read per free moment.
 */
class ScreenModel<T : Any>(
    private val harness: Harness,
    private val phone: PhoneActions,
    private val scope: CoroutineScope,
    private val refreshOn: (HarnessEvent) -> Boolean = { false },
    /** Called after each tap the core took: a tap may change what other screens show. */
    private val afterAct: () -> Unit = {},
    /** Shows a screen a tap asked for (`Acted.Open`). */
    private val open: (Route) -> Unit = {},
    /**
     * Whether the first read starts now. A holder made during a composition must wait for
     * [refresh] from an effect: [model] is created in the composition's snapshot, and a read that
     * lands before that snapshot is applied (the scope's dispatcher need not be the UI thread's:
     * a test's is not) is lost, and the screen stays empty until the next event.
     */
    readNow: Boolean = true,
    /** Shows a conversation a tap asked for (`Acted.OpenConversation`). */
    private val openConversation: (String) -> Unit = {},
    /** Shows a plugin's declared screen a tap asked for (`Acted.OpenPluginScreen`). */
    private val openPluginScreen: (plugin: String, screen: String) -> Unit = { _, _ -> },
    /** Shows a data source no declared screen shows (`Acted.OpenDataSource`). */
    private val openDataSource: (plugin: String, source: String) -> Unit = { _, _ -> },
    private val read: suspend (Harness) -> T,
) : AutoCloseable {
    var model: T? by mutableStateOf(null)
        private set

    /** The core's words for what went wrong with the last tap; null when nothing did. */
    var message: String? by mutableStateOf(null)

    /** The add-plugin screen a link's preview returned, until it is installed or cancelled. */
    var preview: AddPluginScreen? by mutableStateOf(null)

    private val reads = Channel<Unit>(Channel.CONFLATED)
    private val subscription = harness.subscribe(object : EventListener {
        override fun onEvent(event: HarnessEvent) {
            if (refreshOn(event)) reads.trySend(Unit)
        }
    })
    private val reader = scope.launch {
        for (unit in reads) {
            val result = withContext(Dispatchers.IO) { runCatching { read(harness) } }
            result.onSuccess { model = it }.onFailure { message = it.message ?: it.toString() }
        }
    }

    init {
        if (readNow) reads.trySend(Unit)
    }

    fun refresh() {
        reads.trySend(Unit)
    }

    /** Keeps the window out of screenshots while [secret] ([PhoneActions.keepOffScreenshots]). */
    fun keepOffScreenshots(secret: Boolean) = phone.keepOffScreenshots(secret)

    /** Performs the tap [actions] (one after the other, stopping at the first the core refuses). */
    fun act(vararg actions: Action): Job = scope.launch {
        message = null
        for (action in actions) if (!perform(action)) break
        refresh()
        afterAct()
    }

    /** One action and the shell effect it asks for; false (and [message] set) when refused. */
    private suspend fun perform(action: Action): Boolean = try {
        when (val acted = withContext(Dispatchers.IO) { harness.act(action) }) {
            is Acted.Shell -> shell(acted.v1)
            is Acted.Preview -> preview = acted.v1
            is Acted.Open -> withContext(Dispatchers.Main) { open(acted.route) }
            is Acted.OpenConversation -> withContext(Dispatchers.Main) { openConversation(acted.conversation) }
            is Acted.OpenPluginScreen -> withContext(Dispatchers.Main) { openPluginScreen(acted.plugin, acted.screen) }
            is Acted.OpenDataSource -> withContext(Dispatchers.Main) { openDataSource(acted.plugin, acted.source) }
            is Acted.Done, is Acted.TurnEnded -> if (action is Action.InstallPreview) preview = null
        }
        true
    } catch (e: Exception) {
        if (e is kotlinx.coroutines.CancellationException) throw e
        // The bindings' exceptions print as `reason=…`; the user reads the core's words alone.
        message = (e.message ?: e.toString()).removePrefix("reason=")
        false
    }

    private suspend fun shell(effect: ShellEffect) {
        when (effect) {
            is ShellEffect.RequestPermission -> {
                val state = phone.requestPermission(effect.permission)
                withContext(Dispatchers.IO) { harness.reportPermission(effect.permission, state) }
            }
            is ShellEffect.OpenPermissionSettings -> phone.openPermissionSettings(effect.permission)
            is ShellEffect.OpenBrowser -> phone.openBrowser(effect.url)
            is ShellEffect.ScanPairingQr -> phone.scanPairingQr(effect)
            is ShellEffect.PickDocument -> {
                // Cancelled: nothing to attach, and nothing to say.
                val document = phone.pickDocument() ?: return
                withContext(Dispatchers.IO) {
                    harness.act(Action.AttachFile(effect.conversation, document.name, document.bytes))
                }
            }
        }
    }

    override fun close() {
        subscription.cancel()
        reads.close()
        reader.cancel()
    }
}

/**
 * The events that change [conversation]'s chat: the start of each of its agent turns, and every
 * event of a turn not known to be another conversation's (events carry only the turn's id). A
 * turn that started before this holder was made (the activity was recreated while it ran) is
 * taken as this chat's: a needless re-read costs little, a missed one would leave the chat
 * without the rest of the turn. Called on the core's threads.
 */
fun chatEvents(conversation: String): (HarnessEvent) -> Boolean = chatEvents { conversation }

/** [chatEvents] of the conversation [current] names at each event (the chat can switch). */
fun chatEvents(current: () -> String): (HarnessEvent) -> Boolean {
    val others = ConcurrentHashMap.newKeySet<String>()
    fun ours(turn: String) = turn !in others
    return { event ->
        when (event) {
            is HarnessEvent.AgentTurnStarted -> (event.conversation == current()).also { if (!it) others += event.turn }
            is HarnessEvent.TextDelta -> ours(event.turn)
            is HarnessEvent.MessageJoined -> ours(event.turn)
            is HarnessEvent.ThinkingDelta -> ours(event.turn)
            is HarnessEvent.AnswerRestarted -> ours(event.turn)
            is HarnessEvent.ToolCallStarted -> ours(event.turn)
            is HarnessEvent.ToolDecision -> ours(event.turn)
            is HarnessEvent.ToolProgress -> ours(event.turn)
            is HarnessEvent.ToolResult -> ours(event.turn)
            is HarnessEvent.TurnEnded -> ours(event.turn)
            is HarnessEvent.MemoryPending -> event.conversation == current()
            else -> false
        }
    }
}
