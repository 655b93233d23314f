package edu.pku.harness.ui

import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.setValue
import edu.pku.harness.Answer
import edu.pku.harness.EventListener
import edu.pku.harness.EventSubscription
import edu.pku.harness.Harness
import edu.pku.harness.HarnessEvent
import edu.pku.harness.HarnessException
import edu.pku.harness.TurnResult
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch

/** One line of the chat. */
sealed interface ChatItem {
    data class User(val text: String) : ChatItem

    /** The model's text of one turn, between its tool calls, as it streams. */
    data class Assistant(val turn: String, val text: String) : ChatItem

    /**
     * A tool the model called: what the core decided (`run`, `ask`, `refused`) and why, the
     * user's answer when asked, and the result once it ran (or the error the model was given).
     */
    data class ToolCall(
        val turn: String,
        val call: String,
        val name: String,
        val tool: String?,
        val input: String,
        val verdict: String? = null,
        val reason: String? = null,
        val prompt: ULong? = null,
        val answer: Answer? = null,
        val ok: Boolean? = null,
        val result: String? = null,
    ) : ChatItem

    /** Something the core said about the turn (why it ended, a plugin's notice). */
    data class Notice(val text: String) : ChatItem
}

/**
 * What the chat screen shows. [turnState] is null before the first turn, `running` while one
 * runs, then the state the core ended it with (`done`, `cancelled`, `interrupted`, `failed`).
 */
data class ChatState(
    val items: List<ChatItem> = emptyList(),
    val draft: String = "",
    val turnState: String? = null,
    /** The running turn's id, once the core has announced it: what `cancelTurn` takes. */
    val turn: String? = null,
) {
    val running: Boolean get() = turnState == RUNNING

    companion object {
        const val RUNNING = "running"
    }
}

/**
 * The chat's state holder: sends the student's messages to the Harness, stops a running turn,
 * and folds the Harness's events for this conversation into [state]. Events arrive on the
 * core's threads; they are queued and applied one at a time, in order, on [scope] (the UI's).
 * Close it to stop listening.
 */
class ChatModel(
    private val harness: Harness,
    val conversation: String,
    private val scope: CoroutineScope,
) : AutoCloseable {
    var state by mutableStateOf(ChatState())
        private set

    private sealed interface Step {
        class Event(val event: HarnessEvent) : Step
        class Returned(val result: TurnResult) : Step
        class Failed(val message: String) : Step
    }

    // A turn's events are all delivered before sendMessage returns, so its return, queued
    // here too, comes after them.
    private val steps = Channel<Step>(Channel.UNLIMITED)
    private val turns = HashSet<String>()
    private val subscription: EventSubscription = harness.subscribe(object : EventListener {
        override fun onEvent(event: HarnessEvent) {
            steps.trySend(Step.Event(event))
        }
    })

    init {
        scope.launch { for (step in steps) apply(step) }
    }

    fun onDraftChange(text: String) {
        state = state.copy(draft = text)
    }

    /** Sends the draft as the student's message; does nothing while a turn runs or when blank. */
    fun send() {
        val text = state.draft.trim()
        if (text.isEmpty() || state.running) return
        state = state.copy(
            draft = "",
            items = state.items + ChatItem.User(text),
            turnState = ChatState.RUNNING,
            turn = null,
        )
        scope.launch {
            val step = try {
                Step.Returned(harness.sendMessage(conversation, text))
            } catch (e: HarnessException) {
                Step.Failed(e.message ?: e.toString())
            }
            steps.trySend(step)
        }
    }

    /** Stops the running turn: its stream, and the prompt it waits on (the sheet closes). */
    fun cancel() {
        val turn = state.turn ?: return
        harness.cancelTurn(turn)
    }

    private fun apply(step: Step) {
        state = when (step) {
            is Step.Event -> applyEvent(state, step.event)
            // The TurnEnded event set the state already; this covers a turn that never began.
            is Step.Returned -> if (state.running) state.copy(turnState = step.result.state, turn = null) else state
            is Step.Failed -> state.copy(
                items = state.items + ChatItem.Notice(step.message),
                turnState = "failed",
                turn = null,
            )
        }
    }

    private fun applyEvent(s: ChatState, event: HarnessEvent): ChatState = when (event) {
        is HarnessEvent.AgentTurnStarted -> {
            if (event.conversation != conversation) s else {
                turns += event.turn
                s.copy(turn = event.turn, turnState = ChatState.RUNNING)
            }
        }
        is HarnessEvent.TextDelta -> if (event.turn !in turns) s else {
            val last = s.items.lastOrNull()
            if (last is ChatItem.Assistant && last.turn == event.turn) {
                s.copy(items = s.items.dropLast(1) + last.copy(text = last.text + event.text))
            } else {
                s.copy(items = s.items + ChatItem.Assistant(event.turn, event.text))
            }
        }
        is HarnessEvent.ToolCallStarted -> if (event.turn !in turns) s else s.copy(
            items = s.items + ChatItem.ToolCall(event.turn, event.call, event.name, event.tool, event.input),
        )
        is HarnessEvent.ToolDecision -> if (event.turn !in turns) s else
            s.updateCall(event.turn, event.call) { it.copy(verdict = event.verdict, reason = event.reason) }
        is HarnessEvent.ToolResult -> if (event.turn !in turns) s else
            s.updateCall(event.turn, event.call) { it.copy(ok = event.ok, result = event.result) }
        // The prompt belongs to the call of this conversation that was asked and not answered.
        is HarnessEvent.ApprovalRequested -> if (event.prompt.conversation != conversation) s else {
            val asked = s.items.lastOrNull { it is ChatItem.ToolCall && it.verdict == "ask" && it.prompt == null && it.ok == null }
            if (asked is ChatItem.ToolCall) s.updateCall(asked.turn, asked.call) { it.copy(prompt = event.id) } else s
        }
        is HarnessEvent.ApprovalAnswered -> s.copy(
            items = s.items.map { if (it is ChatItem.ToolCall && it.prompt == event.id) it.copy(answer = event.answer) else it },
        )
        is HarnessEvent.TurnEnded -> if (event.turn !in turns) s else s.copy(
            items = s.items + listOfNotNull(event.message?.let { ChatItem.Notice(it) }),
            turnState = event.state,
            turn = null,
        )
        else -> s
    }

    // Models number their calls per response (call_1, …): the turn tells them apart.
    private fun ChatState.updateCall(turn: String, call: String, change: (ChatItem.ToolCall) -> ChatItem.ToolCall) = copy(
        items = items.map { if (it is ChatItem.ToolCall && it.turn == turn && it.call == call) change(it) else it },
    )

    override fun close() {
        subscription.cancel()
        steps.close()
    }
}
