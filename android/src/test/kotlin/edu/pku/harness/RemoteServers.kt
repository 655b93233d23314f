package edu.pku.harness

import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import java.net.HttpURLConnection
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.net.URI
import java.net.URLDecoder
import java.security.MessageDigest
import java.util.Base64
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger
import kotlin.test.fail

/**
 * The browser of a test: opens [page] and answers where its server sends it (the `Location` of
 * its redirect), as a browser follows an authorization server back to the app's link.
 */
fun follow(page: String): String {
    val connection = URI(page).toURL().openConnection() as HttpURLConnection
    connection.instanceFollowRedirects = false
    connection.responseCode
    return connection.getHeaderField("Location") ?: fail("the page sent the browser nowhere")
}

/** Where [freePort] looks next: each test process starts at its own place (by its id). */
private val nextPort = AtomicInteger(Math.floorMod(ProcessHandle.current().pid() * 61, 22_768L).toInt())

/**
 * A free port on this machine for a server started next, below the kernel's ephemeral range
 * (32768 up): a port a `ServerSocket(0)` was given and gave back can be handed to another test's
 * socket before the server binds it; one below the range never is.
 */
fun freePort(): Int {
    while (true) {
        val port = 10_000 + Math.floorMod(nextPort.getAndIncrement(), 22_768)
        if (runCatching { ServerSocket(port, 1, InetAddress.getByName("127.0.0.1")).close() }.isSuccess) return port
    }
}

/**
 * The reference MCP server (`@modelcontextprotocol/server-everything`, which scripts/test.sh
 * installs and names in PKU_HARNESS_MCP_EVERYTHING) in its Streamable HTTP mode.
 */
class Everything : AutoCloseable {
    private val port = freePort()
    private val process: Process
    val url = "http://127.0.0.1:$port/mcp"

    init {
        val script = System.getenv("PKU_HARNESS_MCP_EVERYTHING")
            ?: fail("PKU_HARNESS_MCP_EVERYTHING names no MCP test server: run scripts/test.sh, which installs it")
        process = ProcessBuilder("node", script, "streamableHttp")
            .apply { environment()["PORT"] = "$port" }
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start()
        val until = System.currentTimeMillis() + 60_000
        while (runCatching { Socket("127.0.0.1", port).close() }.isFailure) {
            if (System.currentTimeMillis() > until) fail("the MCP test server did not start")
            Thread.sleep(50)
        }
    }

    override fun close() {
        process.destroy()
        process.waitFor()
    }
}

/**
 * An MCP server with one tool (`echo`) that answers only those signed in to its OAuth 2.1
 * authorization server, on the same address: the 401 naming its resource metadata, the
 * authorization server's metadata, dynamic registration, an authorization page that sends the
 * browser straight back with a code, and a token endpoint that checks PKCE (S256) and the
 * resource indicator.
 */
class SigningInServer : AutoCloseable {
    private val http = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
    private val base = "http://127.0.0.1:${http.address.port}"
    val url = "$base/mcp"
    val redirectUris = CopyOnWriteArrayList<String>()
    val issued = CopyOnWriteArrayList<String>()
    private val challenges = HashMap<String, String>()

    init {
        http.createContext("/") { exchange -> exchange.use { answer(it) } }
        http.start()
    }

    override fun close() = http.stop(0)

    private fun form(text: String): Map<String, String> = text.split('&').filter { it.contains('=') }.associate {
        val (k, v) = it.split('=', limit = 2)
        URLDecoder.decode(k, Charsets.UTF_8) to URLDecoder.decode(v, Charsets.UTF_8)
    }

    private fun field(json: String, name: String): String? = Regex("\"$name\"\\s*:\\s*\"([^\"]*)\"").find(json)?.groupValues?.get(1)

    private fun HttpExchange.send(status: Int, body: String, type: String = "application/json", headers: Map<String, String> = emptyMap()) {
        headers.forEach { (k, v) -> responseHeaders.add(k, v) }
        responseHeaders.add("Content-Type", type)
        val bytes = body.toByteArray()
        sendResponseHeaders(status, if (bytes.isEmpty()) -1 else bytes.size.toLong())
        if (bytes.isNotEmpty()) responseBody.write(bytes)
    }

    private fun answer(exchange: HttpExchange) {
        val path = exchange.requestURI.path
        val body = exchange.requestBody.readBytes().toString(Charsets.UTF_8)
        when {
            path == "/.well-known/oauth-protected-resource/mcp" || path == "/.well-known/oauth-protected-resource" ->
                exchange.send(200, """{"resource":"$url","authorization_servers":["$base"],"scopes_supported":["notes:read"]}""")
            path == "/.well-known/oauth-authorization-server" -> exchange.send(
                200,
                """{"issuer":"$base","authorization_endpoint":"$base/authorize","token_endpoint":"$base/token",""" +
                    """"registration_endpoint":"$base/register","response_types_supported":["code"],""" +
                    """"code_challenge_methods_supported":["S256"]}""",
            )
            path.startsWith("/.well-known/") -> exchange.send(404, "")
            path == "/register" -> {
                val uri = Regex("\"redirect_uris\"\\s*:\\s*\\[\\s*\"([^\"]*)\"").find(body)?.groupValues?.get(1).orEmpty()
                redirectUris.add(uri)
                exchange.send(201, """{"client_id":"phone-1","redirect_uris":["$uri"]}""")
            }
            path == "/authorize" -> {
                val query = form(exchange.requestURI.rawQuery.orEmpty())
                if (query["code_challenge_method"] != "S256" || query["resource"] != url) return exchange.send(400, """{"error":"invalid_request"}""")
                val code = "code-${challenges.size + 1}"
                challenges[code] = query.getValue("code_challenge")
                val back = "${query["redirect_uri"]}?code=$code&state=${query["state"]}"
                exchange.send(302, "", "text/plain", mapOf("Location" to back))
            }
            path == "/token" -> {
                val sent = form(body)
                val challenge = challenges.remove(sent["code"])
                val digest = MessageDigest.getInstance("SHA-256").digest(sent["code_verifier"].orEmpty().toByteArray())
                val answers = Base64.getUrlEncoder().withoutPadding().encodeToString(digest)
                if (challenge == null || challenge != answers || sent["resource"] != url) return exchange.send(400, """{"error":"invalid_grant"}""")
                val token = "phone-access-${issued.size + 1}"
                issued.add(token)
                exchange.send(200, """{"access_token":"$token","token_type":"Bearer","expires_in":3600,"scope":"notes:read"}""")
            }
            path == "/mcp" -> mcp(exchange, body)
            else -> exchange.send(404, "")
        }
    }

    private fun mcp(exchange: HttpExchange, body: String) {
        val bearer = exchange.requestHeaders.getFirst("Authorization")?.removePrefix("Bearer ")
        if (bearer == null || bearer !in issued) {
            val challenge = """Bearer resource_metadata="$base/.well-known/oauth-protected-resource/mcp", scope="notes:read""""
            return exchange.send(401, """{"error":"invalid_token"}""", headers = mapOf("WWW-Authenticate" to challenge))
        }
        if (exchange.requestMethod != "POST") return exchange.send(405, "")
        val id = Regex("\"id\"\\s*:\\s*(\\d+|\"[^\"]*\")").find(body)?.groupValues?.get(1)
            ?: return exchange.send(202, "")
        val method = field(body, "method")
        val result = when (method) {
            "initialize" -> """{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"notes","version":"1"}}"""
            "tools/list" -> """{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}},"annotations":{"readOnlyHint":true}}]}"""
            "tools/call" -> """{"content":[{"type":"text","text":"echo: ${field(body, "message")}"}]}"""
            "ping" -> """{}"""
            // A 2025 server knows no other method, server/discover among them (JSON-RPC: -32601).
            else -> return exchange.send(200, """{"jsonrpc":"2.0","id":$id,"error":{"code":-32601,"message":"no method $method"}}""")
        }
        exchange.send(200, """{"jsonrpc":"2.0","id":$id,"result":$result}""", headers = mapOf("Mcp-Session-Id" to "s-1"))
    }
}
