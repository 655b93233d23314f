package edu.pku.harness

import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CopyOnWriteArrayList

/** An OpenAI-compatible server on 127.0.0.1 answering each request with the next scripted
 *  stream of `data:` events, as the providers stream chat completions. */
class ScriptedModel(vararg streams: List<String>) : AutoCloseable {
    private val script = ConcurrentLinkedQueue(streams.toList())
    val bodies = CopyOnWriteArrayList<String>()
    val keys = CopyOnWriteArrayList<String?>()
    private val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0).apply {
        createContext("/v1/chat/completions") { exchange ->
            bodies.add(exchange.requestBody.readBytes().decodeToString())
            keys.add(exchange.requestHeaders.getFirst("Authorization"))
            val events = script.poll() ?: emptyList()
            exchange.responseHeaders.add("Content-Type", "text/event-stream")
            exchange.sendResponseHeaders(200, 0)
            exchange.responseBody.use { out ->
                for (event in events) out.write("data: $event\n\n".encodeToByteArray())
            }
        }
        start()
    }
    val endpoint = "http://127.0.0.1:${server.address.port}/v1"

    override fun close() = server.stop(0)
}

/** One streamed chunk of a chat completion: `delta` as JSON, and the finish reason if any. */
fun chunk(delta: String, finish: String? = null) =
    """{"choices":[{"index":0,"delta":$delta,"finish_reason":${finish?.let { "\"$it\"" } ?: "null"}}]}"""

/** `text` as a JSON string literal. */
fun jsonString(text: String) =
    "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\""
