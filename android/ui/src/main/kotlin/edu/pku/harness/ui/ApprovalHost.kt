package edu.pku.harness.ui

import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.setValue
import edu.pku.harness.ApprovalPrompt
import edu.pku.harness.ElicitationReply
import edu.pku.harness.EventListener
import edu.pku.harness.HarnessEvent
import edu.pku.harness.HarnessException
import edu.pku.harness.core.Answer
import edu.pku.harness.core.ElicitationAction
import edu.pku.harness.core.ElicitationSheet
import edu.pku.harness.core.SignInSheet
import kotlinx.coroutines.CompletableDeferred

/** A prompt on screen, or waiting behind the one that is. */
class PendingApproval(val id: ULong, val prompt: ApprovalPrompt) {
    internal val answer = CompletableDeferred<Answer>()
}

/**
 * Owns the approval sheet: the app's Platform hands its `askApproval` here, which shows the
 * prompt and suspends until the user taps one of the prompt's answers. Prompts that arrive
 * while one is shown wait their turn, in order. A prompt leaves the screen when it is answered,
 * when the core withdraws it (the `ApprovalWithdrawn` event, through [listener]), and when the
 * core stops waiting (its turn was cancelled: the call is cancelled and `askApproval` with it).
 *
 * Thread-safe: the core asks from its own threads and events arrive on them; the screen reads
 * [current], a snapshot state, from the UI thread.
 */
class ApprovalHost {
    private val lock = Any()
    private var queue by mutableStateOf(emptyList<PendingApproval>())

    /** The prompt to show now; null when none waits. */
    val current: PendingApproval? get() = queue.firstOrNull()

    /** The ids of the prompts waiting for an answer, the shown one first. */
    val waiting: List<ULong> get() = queue.map { it.id }

    /** The Platform's `askApproval`: the answer the user tapped, one of `prompt.offers`. */
    suspend fun askApproval(id: ULong, prompt: ApprovalPrompt): Answer {
        // The sheet is what the user reads; a prompt without one cannot be shown, so it is
        // declined (fail closed) rather than answered from fields the user never saw.
        if (prompt.sheet == null) throw HarnessException.Platform("approval $id arrived without its sheet")
        val pending = PendingApproval(id, prompt)
        synchronized(lock) { queue = queue + pending }
        try {
            return pending.answer.await()
        } finally {
            synchronized(lock) { queue = queue - pending }
        }
    }

    /**
     * The user tapped [answer] on prompt [id]. An answer the prompt did not offer (nor its sheet,
     * as one of "Always allow"'s scopes) is no consent: it is ignored and false is returned (the
     * core would refuse it as well).
     */
    fun answer(id: ULong, answer: Answer): Boolean {
        val pending = synchronized(lock) { queue.firstOrNull { it.id == id } } ?: return false
        // "Always allow" narrowed to a scope the sheet offered is the same consent, shorter.
        val scoped = pending.prompt.sheet?.alwaysScopes.orEmpty().any { it.answer == answer }
        if (answer !in pending.prompt.offers && !scoped) return false
        return pending.answer.complete(answer)
    }

    /** Closes prompt [id] without an answer; the core declines the call (fail closed). A
     *  server's question [id] closes as cancelled. */
    fun withdraw(id: ULong) {
        synchronized(lock) { questions.firstOrNull { it.id == id } }
            ?.reply?.complete(ElicitationReply(ElicitationAction.CANCEL, emptyList()))
        val pending = synchronized(lock) { queue.firstOrNull { it.id == id } } ?: return
        pending.answer.completeExceptionally(HarnessException.Platform("approval $id was withdrawn"))
    }

    private var questions by mutableStateOf(emptyList<PendingQuestion>())
    private var signIns by mutableStateOf(emptyList<PendingSignIn>())

    /** A remote server's question to show now, when no approval prompt is up. */
    val question: PendingQuestion? get() = questions.firstOrNull()

    /** A remote server's sign-in sheet to show now, when nothing else is up. */
    val signIn: PendingSignIn? get() = signIns.firstOrNull()

    /** The Platform's `askElicitation`: the answer the student tapped, with what they typed. */
    suspend fun askQuestion(id: ULong, sheet: ElicitationSheet): ElicitationReply {
        val pending = PendingQuestion(id, sheet)
        synchronized(lock) { questions = questions + pending }
        try {
            return pending.reply.await()
        } finally {
            synchronized(lock) { questions = questions - pending }
        }
    }

    /** The student tapped an answer of question [id]. */
    fun reply(id: ULong, reply: ElicitationReply): Boolean {
        val pending = synchronized(lock) { questions.firstOrNull { it.id == id } } ?: return false
        return pending.reply.complete(reply)
    }

    /** The first half of the Platform's `signIn`: whether the student went on to the page. */
    suspend fun confirmSignIn(sheet: SignInSheet): Boolean {
        val pending = PendingSignIn(sheet)
        synchronized(lock) { signIns = signIns + pending }
        try {
            return pending.go.await()
        } finally {
            synchronized(lock) { signIns = signIns - pending }
        }
    }

    /** The student tapped Continue ([go]) or Cancel on the shown sign-in sheet. */
    fun answerSignIn(go: Boolean): Boolean = signIn?.go?.complete(go) ?: false

    /** Subscribe this to the Harness, so that a prompt the core withdraws leaves the screen. */
    val listener: EventListener = object : EventListener {
        override fun onEvent(event: HarnessEvent) {
            if (event is HarnessEvent.ApprovalWithdrawn) withdraw(event.id)
        }
    }
}
