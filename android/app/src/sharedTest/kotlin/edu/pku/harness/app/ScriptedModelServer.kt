package edu.pku.harness.app

import java.io.BufferedInputStream
import java.io.ByteArrayOutputStream
import java.io.InputStream
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.concurrent.thread

/**
 * An OpenAI-compatible server on 127.0.0.1 answering each request with the next scripted
 * stream of `data:` events, as android/src/test's ScriptedModel does on the host. Android has
 * no com.sun.net.httpserver, so this speaks just enough HTTP/1.1 over a socket: one request per
 * connection, the response chunked and the connection closed after it.
 */
class ScriptedModelServer(vararg streams: List<String>) : AutoCloseable {
    private val script = ConcurrentLinkedQueue(streams.toList())
    val bodies = CopyOnWriteArrayList<String>()
    val keys = CopyOnWriteArrayList<String?>()
    private val server = ServerSocket(0, 16, InetAddress.getByName("127.0.0.1"))
    val endpoint = "http://127.0.0.1:${server.localPort}/v1"

    private val acceptor = thread(name = "scripted-model", isDaemon = true) {
        while (!server.isClosed) {
            val socket = try { server.accept() } catch (e: java.io.IOException) { break }
            thread(isDaemon = true) { socket.use { answer(it) } }
        }
    }

    private fun answer(socket: Socket) {
        val input = BufferedInputStream(socket.getInputStream())
        val head = readHead(input)
        val lines = head.split("\r\n")
        val headers = lines.drop(1).filter { ':' in it }.associate {
            it.substringBefore(':').trim().lowercase() to it.substringAfter(':').trim()
        }
        val length = headers["content-length"]?.toInt() ?: 0
        val body = ByteArray(length)
        var read = 0
        while (read < length) {
            val n = input.read(body, read, length - read)
            if (n < 0) break
            read += n
        }
        val out = socket.getOutputStream()
        if (!lines[0].startsWith("POST /v1/chat/completions ")) {
            out.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".toByteArray())
            out.flush()
            return
        }
        bodies.add(body.decodeToString())
        keys.add(headers["authorization"])
        val events = script.poll() ?: emptyList()
        out.write(
            ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n" +
                "Connection: close\r\n\r\n").toByteArray(),
        )
        for (event in events) {
            val chunk = "data: $event\n\n".encodeToByteArray()
            out.write("${Integer.toHexString(chunk.size)}\r\n".toByteArray())
            out.write(chunk)
            out.write("\r\n".toByteArray())
            out.flush()
        }
        out.write("0\r\n\r\n".toByteArray())
        out.flush()
    }

    /** The request line and headers, up to the blank line. */
    private fun readHead(input: InputStream): String {
        val head = ByteArrayOutputStream()
        var last4 = 0
        while (true) {
            val b = input.read()
            if (b < 0) break
            head.write(b)
            last4 = (last4 shl 8) or b
            if (last4 == 0x0d0a0d0a) break
        }
        return head.toString("UTF-8")
    }

    override fun close() {
        server.close()
        acceptor.join(1_000)
    }
}

/** One streamed chunk of a chat completion: `delta` as JSON, and the finish reason if any. */
fun chunk(delta: String, finish: String? = null) =
    """{"choices":[{"index":0,"delta":$delta,"finish_reason":${finish?.let { "\"$it\"" } ?: "null"}}]}"""

/** `text` as a JSON string literal. */
fun jsonString(text: String) =
    "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\""
