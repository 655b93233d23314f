package edu.pku.harness.ui

import androidx.compose.ui.semantics.SemanticsProperties
import androidx.compose.ui.semantics.getOrNull
import androidx.compose.ui.test.ComposeUiTest
import androidx.compose.ui.test.ExperimentalTestApi
import androidx.compose.ui.test.SemanticsMatcher

/**
 * The Latin words a Chinese screen may show that are not data — the one allow-list, kept short.
 * Everything else Latin on a zh screen is a word the core should have said in Chinese.
 */
val ZH_SCREEN_PROPER_NOUNS: Set<String> = setOf(
    // The product's name: "PKU harness" and "PKU harness Cloud".
    "PKU", "harness", "Cloud",
    // Names of protocols and formats, written so in Chinese too.
    "API", "MCP", "OAuth", "QR", "JSON", "https",
    // Names of products and services that have no Chinese name of their own: the phones' systems
    // (a device's kind on 云端) and PKU's sign-in service (北京大学统一身份认证, IAAA).
    "Android", "iPhone", "IAAA",
    // The model providers' own names, which they use in Chinese too (DeepSeek 深度求索, 智谱 GLM).
    "DeepSeek", "Kimi", "GLM", "OpenRouter", "OpenAI",
)

/** Data by its shape: what a screen shows as a value, never as a word of its own. */
private val DATA_SHAPES: List<Regex> = listOf(
    // URLs (any scheme) and e-mail addresses.
    Regex("""[A-Za-z][A-Za-z0-9+.-]*://\S+"""),
    Regex("""[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"""),
    // Host names and addresses, with a port and path: pku.edu.cn, 127.0.0.1:8080/mcp.
    Regex("""\b(?:[A-Za-z0-9-]+\.)+[A-Za-z0-9-]{2,}(?::\d+)?(?:/\S*)?"""),
    // Identifiers joined by '-' or '/' (model ids such as deepseek-chat, Qwen/Qwen3-8B; plugin ids;
    // paths such as /sdcard/Download).
    Regex("""(?<![\w/])/?[A-Za-z0-9_.]+(?:[-/][A-Za-z0-9_.]+)+"""),
    // Sizes after a number: 12 MB, 3.5KB, 2 GiB.
    Regex("""\d+(?:\.\d+)?\s*(?:B|KB|MB|GB|KiB|MiB|GiB)\b"""),
)

private val LATIN_WORD = Regex("""[A-Za-z][A-Za-z0-9]*(?:['’][A-Za-z]+)*""")

/** Every text the screen's semantics carry: texts, edited texts and content descriptions. */
@OptIn(ExperimentalTestApi::class)
fun ComposeUiTest.shownTexts(): List<String> =
    onAllNodes(SemanticsMatcher("any node") { true }, useUnmergedTree = true).fetchSemanticsNodes().flatMap { node ->
        val c = node.config
        c.getOrNull(SemanticsProperties.Text).orEmpty().map { it.text } +
            listOfNotNull(c.getOrNull(SemanticsProperties.EditableText)?.text) +
            c.getOrNull(SemanticsProperties.ContentDescription).orEmpty()
    }.filter { it.isNotBlank() }.distinct()

/**
 * The English words [text] shows on a Chinese screen: its Latin words once [data] (values the test
 * itself put there or a server returned), URLs, e-mail and host names, identifiers, sizes and the
 * proper nouns of [ZH_SCREEN_PROPER_NOUNS] are taken out.
 */
fun englishWords(text: String, data: Collection<String> = emptyList()): List<String> {
    var rest = text
    for (value in data.filter { it.isNotEmpty() }.sortedByDescending { it.length }) rest = rest.replace(value, " ")
    for (shape in DATA_SHAPES) rest = shape.replace(rest, " ")
    return LATIN_WORD.findAll(rest).map { it.value }.filter { it !in ZH_SCREEN_PROPER_NOUNS }.toList()
}

/** The shown texts with English words in them, each as `"text" (word, word)`. */
@OptIn(ExperimentalTestApi::class)
fun ComposeUiTest.englishOnZhScreen(data: Collection<String> = emptyList()): List<String> =
    shownTexts().mapNotNull { text ->
        val words = englishWords(text, data)
        if (words.isEmpty()) null else "\"$text\" (${words.joinToString(", ")})"
    }
