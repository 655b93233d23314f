package edu.pku.harness.app

import edu.pku.harness.EventListener
import edu.pku.harness.HarnessEvent
import edu.pku.harness.core.ApprovalNotice

/**
 * When an ask's notification is posted (issue 41.3): while the app is not in front — the
 * activity's lifecycle says so through [inFront] — each ask waiting on the sheet posts the core's
 * notice; once it is answered or withdrawn, or the app comes to the front where the sheet shows
 * it, the notification goes. Nothing is posted while notifications are not [allowed].
 */
class ApprovalAlerts(
    private val notifications: ApprovalNotifications,
    private val allowed: () -> Boolean,
) : EventListener {
    private val lock = Any()

    /** The asks waiting for an answer, by the core's prompt id. */
    private val waiting = LinkedHashMap<ULong, ApprovalNotice>()
    private val posted = HashSet<ULong>()

    /** No activity yet: a scheduled run or a receiver's turn asks with the app away. */
    private var front = false

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
