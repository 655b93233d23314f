package edu.pku.harness.app

import edu.pku.harness.EventListener
import edu.pku.harness.HarnessEvent
import edu.pku.harness.core.ApprovalNotice
import edu.pku.harness.core.TurnNotice

/**
 * What is posted while the app is not in front — the activity's lifecycle says so through
 * [inFront]. An ask (issue 41.3): each ask waiting on the sheet posts the core's notice; once it
 * is answered or withdrawn, or the app comes to the front where the sheet shows it, the
 * notification goes. A turn (issue 41.5): while any runs, one ongoing notification with the
 * core's [turnNotice] says the assistant is working; it goes when the last turn ends or the app
 * comes to the front. Nothing is posted while notifications are not [allowed].
 */
class ApprovalAlerts(
    private val notifications: ApprovalNotifications,
    private val turns: TurnNotifications,
    private val turnNotice: () -> TurnNotice?,
    private val allowed: () -> Boolean,
) : EventListener {
    private val lock = Any()

    /** The asks waiting for an answer, by the core's prompt id. */
    private val waiting = LinkedHashMap<ULong, ApprovalNotice>()
    private val posted = HashSet<ULong>()

    /** No activity yet: a scheduled run or a receiver's turn asks with the app away. */
    private var front = false

    /** The agent's turns running, by the core's turn id. */
    private val running = HashSet<String>()
    private var turnPosted = false

    /** The activity resumed (true) or paused (false). */
    fun inFront(shown: Boolean) {
        val (post, cancel) = synchronized(lock) {
            front = shown
            if (shown) {
                emptyList<Pair<ULong, ApprovalNotice>>() to posted.toList().also { posted.clear() }
            } else {
                waiting.filterKeys { it !in posted }.toList().also { posted += it.map { (id, _) -> id } } to emptyList<ULong>()
            }
        }
        cancel.forEach { notifications.cancel(it) }
        for ((id, notice) in post) if (allowed()) notifications.post(id, notice)
        showTurn()
    }

    /** Posts the ongoing notification while a turn runs away from the app, or takes it down. */
    private fun showTurn() {
        // Whether to post (true) or take down (false); null: it already shows as it should.
        val change = synchronized(lock) {
            val wanted = running.isNotEmpty() && !front
            (wanted != turnPosted).also { turnPosted = wanted }.takeIf { it }?.let { wanted }
        }
        when (change) {
            true -> if (allowed()) turnNotice()?.let { turns.post(it) }
            false -> turns.cancel()
            null -> Unit
        }
    }

    override fun onEvent(event: HarnessEvent) {
        when (event) {
            is HarnessEvent.ApprovalRequested -> {
                val notice = event.prompt.notice ?: return
                val away = synchronized(lock) {
                    waiting[event.id] = notice
                    (!front).also { if (it) posted += event.id }
                }
                if (away && allowed()) notifications.post(event.id, notice)
            }
            is HarnessEvent.ApprovalAnswered -> ended(event.id)
            is HarnessEvent.ApprovalWithdrawn -> ended(event.id)
            is HarnessEvent.AgentTurnStarted -> {
                synchronized(lock) { running += event.turn }
                showTurn()
            }
            is HarnessEvent.TurnEnded -> {
                synchronized(lock) { running -= event.turn }
                showTurn()
            }
            else -> Unit
        }
    }

    private fun ended(id: ULong) {
        val shown = synchronized(lock) {
            waiting.remove(id)
            posted.remove(id)
        }
        if (shown) notifications.cancel(id)
    }
}
