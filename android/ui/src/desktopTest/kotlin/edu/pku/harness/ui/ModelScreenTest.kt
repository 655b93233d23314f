package edu.pku.harness.ui

import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.assertTextEquals
import androidx.compose.ui.test.onNodeWithTag
import androidx.compose.ui.test.performClick
import androidx.compose.ui.test.performScrollTo
import androidx.compose.ui.test.performTextClearance
import androidx.compose.ui.test.performTextInput
import com.sun.net.httpserver.HttpServer
import edu.pku.harness.core.Language
import edu.pku.harness.core.Route
import java.net.InetSocketAddress
import java.util.concurrent.ConcurrentLinkedQueue
import kotlin.test.assertEquals
import kotlin.test.assertTrue
import org.junit.Test

/** A provider on 127.0.0.1 answering each request with the next scripted status and JSON body. */
private class Provider(vararg answers: Pair<Int, String>) : AutoCloseable {
    private val script = ConcurrentLinkedQueue(answers.toList())
    val keys = ConcurrentLinkedQueue<String>()
    private val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0).apply {
        createContext("/v1/chat/completions") { exchange ->
            exchange.requestBody.readBytes()
            keys.add(exchange.requestHeaders.getFirst("Authorization") ?: "")
            val (status, body) = script.poll() ?: (599 to "{}")
            val bytes = body.encodeToByteArray()
            exchange.responseHeaders.add("Content-Type", "application/json")
            exchange.sendResponseHeaders(status, bytes.size.toLong())
            exchange.responseBody.use { it.write(bytes) }
        }
        start()
    }
    val endpoint = "http://127.0.0.1:${server.address.port}/v1"

    override fun close() = server.stop(0)
}

/** The model screen (issue 42): a provider in one tap, and Test connection said in words. */
@OptIn(ExperimentalTestApi::class)
class ModelScreenTest {
    private class Words(val deepseek: String, val wrongKey: String, val noBalance: String, val unknown: String, val works: String)

    private val words = mapOf(
        Language.ZH to Words(
            deepseek = "DeepSeek 深度求索",
            wrongKey = "密钥不对：%s 拒绝了这个 API 密钥。请检查「API 密钥」是否完整复制。",
            noBalance = "余额不足：%s 的账户没有余额了。充值后再试。",
            unknown = "%s 没有名为 m-1 的模型。请在「模型名称」中选一个建议的模型。",
            works = "连接成功：%s 已回答。",
        ),
        Language.EN to Words(
            deepseek = "DeepSeek",
            wrongKey = "Wrong key: %s refused this API key. Check that \"API key\" was copied whole.",
            noBalance = "No balance: your %s account has run out. Top it up and try again.",
            unknown = "%s has no model called m-1. Pick a suggested one in \"Model name\".",
            works = "Connected: %s answered.",
        ),
    )

    @Test fun a_provider_is_picked_in_one_tap_and_each_test_says_what_is_wrong() {
        for ((language, said) in words) App(language).use { app ->
            Provider(
                401 to """{"error":{"message":"bad key"}}""",
                402 to """{"error":{"message":"Insufficient Balance"}}""",
                404 to """{"error":{"message":"Not Found"}}""",
                200 to """{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}""",
            ).use { provider ->
                runPhoneTest {
                    setContent { HarnessAppContent(app.models, app.approvals, app.navigator) }
                    app.navigator.open(Route.MODEL)
                    waitUntil("the model screen", 10_000) { app.models.model.model != null }
                    // DeepSeek in one tap: its address and first model filled in, its models offered.
                    onNodeWithTag(ScreenTags.provider("deepseek")).assertTextEquals(said.deepseek).performClick()
                    waitUntil("DeepSeek chosen", 10_000) { app.models.model.model?.endpoint == "https://api.deepseek.com/v1" }
                    assertEquals("deepseek-chat", app.models.model.model?.model)
                    assertEquals(listOf("deepseek-chat", "deepseek-reasoner"), app.models.model.model?.suggestedModels?.map { it.label })
                    saveScreenshot("model-provider", language)

                    // Another address, typed after "other"; each test's words come from the core.
                    onNodeWithTag(ScreenTags.provider("custom")).performScrollTo().performClick()
                    waitUntil("other chosen", 10_000) { app.models.model.model?.endpointEditable == true }
                    onNodeWithTag(ScreenTags.ENDPOINT).performTextInput(provider.endpoint)
                    onNodeWithTag(ScreenTags.MODEL).performTextClearance()
                    onNodeWithTag(ScreenTags.MODEL).performTextInput("m-1")
                    onNodeWithTag(ScreenTags.KEY).performTextInput("sk-model-screen")
                    for (expected in listOf(said.wrongKey, said.noBalance, said.unknown, said.works)) {
                        val text = expected.format(provider.endpoint)
                        onNodeWithTag(ScreenTags.TEST).performScrollTo().performClick()
                        waitUntil(text, 10_000) { app.models.model.model?.testResult == text }
                        onNodeWithTag(ScreenTags.TEST_RESULT).assertTextEquals(text)
                        if (expected == said.noBalance) saveScreenshot("model-test-failed", language)
                    }
                    // The month's spend and where its cap is set, as the core words it.
                    val spend = app.models.model.model!!.monthSpend
                    assertTrue(spend.contains("model.monthlyCapYuan"), spend)
                    onNodeWithTag(ScreenTags.MONTH_SPEND).performScrollTo().assertTextEquals(spend)
                    saveScreenshot("model-test-works", language)
                    assertEquals(List(4) { "Bearer sk-model-screen" }, provider.keys.toList())
                }
            }
        }
    }
}
