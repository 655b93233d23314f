package edu.pku.harness.ui

import edu.pku.harness.Answer
import edu.pku.harness.Effect

/**
 * The fixed words of the screens, one object per language. Everything else a screen shows (a
 * prompt's headline and reason, a tool's title, a turn's message) is the core's own text and is
 * shown as the core gives it. Kept small on purpose: these labels move into the core's screen
 * models later, so composables take a [Labels] and never look one up themselves.
 */
interface Labels {
    /** The BCP 47 tag, also the suffix of screenshot names. */
    val language: String
    val chatTitle: String
    val messageHint: String
    val send: String
    val cancel: String
    val you: String
    val assistant: String
    val tool: String
    val plugin: String
    val effectLabel: String
    val inputs: String
    val reason: String
    val approvalTitle: String
    val resultLabel: String
    fun answer(answer: Answer): String
    fun effect(effect: Effect): String
    /** A call's decision as the core streams it: `run`, `ask` or `refused`. */
    fun verdict(verdict: String): String
    fun outcome(ok: Boolean): String
    /** The turn's state: null while none has run, `running`, or how the core says it ended. */
    fun turnState(state: String?): String
}

object ZhLabels : Labels {
    override val language = "zh"
    override val chatTitle = "对话"
    override val messageHint = "输入消息"
    override val send = "发送"
    override val cancel = "停止"
    override val you = "你"
    override val assistant = "助手"
    override val tool = "工具"
    override val plugin = "插件"
    override val effectLabel = "影响"
    override val inputs = "输入"
    override val reason = "原因"
    override val approvalTitle = "需要你的许可"
    override val resultLabel = "结果"
    override fun answer(answer: Answer) = when (answer) {
        Answer.ALLOW -> "允许"
        Answer.DENY -> "拒绝"
        Answer.ALWAYS_ALLOW -> "总是允许"
        Answer.ALLOW_ONCE -> "允许一次"
        Answer.DONT_ALLOW -> "不允许"
    }
    override fun effect(effect: Effect) = when (effect) {
        Effect.READ -> "读取"
        Effect.WRITE -> "写入"
        Effect.MONEY -> "花钱"
        Effect.PUBLIC -> "公开发布"
    }
    override fun verdict(verdict: String) = when (verdict) {
        "run" -> "直接运行"
        "ask" -> "询问你"
        "refused" -> "已拒绝"
        else -> verdict
    }
    override fun outcome(ok: Boolean) = if (ok) "已完成" else "未完成"
    override fun turnState(state: String?) = when (state) {
        null -> "空闲"
        "running" -> "进行中"
        "done" -> "已完成"
        "cancelled" -> "已停止"
        "interrupted" -> "已中断"
        "failed" -> "失败"
        else -> state
    }
}

object EnLabels : Labels {
    override val language = "en"
    override val chatTitle = "Chat"
    override val messageHint = "Message"
    override val send = "Send"
    override val cancel = "Stop"
    override val you = "You"
    override val assistant = "Assistant"
    override val tool = "Tool"
    override val plugin = "Plugin"
    override val effectLabel = "Effect"
    override val inputs = "Inputs"
    override val reason = "Reason"
    override val approvalTitle = "Your permission is needed"
    override val resultLabel = "Result"
    override fun answer(answer: Answer) = when (answer) {
        Answer.ALLOW -> "Allow"
        Answer.DENY -> "Deny"
        Answer.ALWAYS_ALLOW -> "Always allow"
        Answer.ALLOW_ONCE -> "Allow once"
        Answer.DONT_ALLOW -> "Don't allow"
    }
    override fun effect(effect: Effect) = when (effect) {
        Effect.READ -> "Read"
        Effect.WRITE -> "Write"
        Effect.MONEY -> "Spends money"
        Effect.PUBLIC -> "Posts publicly"
    }
    override fun verdict(verdict: String) = when (verdict) {
        "run" -> "Ran without asking"
        "ask" -> "Asked you"
        "refused" -> "Refused"
        else -> verdict
    }
    override fun outcome(ok: Boolean) = if (ok) "Done" else "Not done"
    override fun turnState(state: String?) = when (state) {
        null -> "Idle"
        "running" -> "Running"
        "done" -> "Done"
        "cancelled" -> "Stopped"
        "interrupted" -> "Interrupted"
        "failed" -> "Failed"
        else -> state
    }
}

/** The labels for a language tag (`zh`, `zh-CN`, `en`, …); English when there are none. */
fun labelsFor(language: String): Labels =
    if (language.lowercase().startsWith("zh")) ZhLabels else EnLabels
