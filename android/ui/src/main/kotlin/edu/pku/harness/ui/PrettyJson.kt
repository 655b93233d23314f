package edu.pku.harness.ui

/**
 * Indents JSON text for reading, two spaces a level, one member a line. It only adds and drops
 * whitespace between tokens: every string, number and key is shown exactly as the core sent
 * it (an approval shows the exact inputs the tool will receive), and text that is not JSON
 * comes back unchanged rather than half-formatted.
 */
fun prettyJson(text: String): String {
    val out = StringBuilder(text.length + 16)
    var depth = 0
    var inString = false
    var escaped = false
    var i = 0
    fun newline() {
        out.append('\n')
        repeat(depth) { out.append("  ") }
    }
    while (i < text.length) {
        val c = text[i]
        if (inString) {
            out.append(c)
            when {
                escaped -> escaped = false
                c == '\\' -> escaped = true
                c == '"' -> inString = false
            }
            i++
            continue
        }
        when (c) {
            '"' -> { inString = true; out.append(c) }
            '{', '[' -> {
                // An empty object or array stays on its line.
                var j = i + 1
                while (j < text.length && text[j].isWhitespace()) j++
                val next = text.getOrNull(j)
                if (next == '}' || next == ']') {
                    out.append(c).append(next)
                    i = j
                } else {
                    depth++
                    out.append(c)
                    newline()
                }
            }
            '}', ']' -> {
                if (depth == 0) return text
                depth--
                newline()
                out.append(c)
            }
            ',' -> { out.append(c); newline() }
            ':' -> out.append(": ")
            ' ', '\n', '\r', '\t' -> {}
            else -> out.append(c)
        }
        i++
    }
    return if (depth == 0 && !inString) out.toString() else text
}
