package edu.pku.harness.app

import java.io.IOException
import java.io.InputStream

/** The most a picked document may hold, in bytes: 1 MiB. */
const val MAX_DOCUMENT_BYTES = 1 shl 20

/** A picked document over [MAX_DOCUMENT_BYTES]; nothing of it was attached. */
class DocumentTooLargeException(val name: String, message: String) : IOException(message)

/**
 * The text of the document [name] the user picked, read as UTF-8 from [input]. One over [limit]
 * bytes is refused before it is read whole: by the size its provider reports ([declaredSize],
 * null when unknown), and else after reading one byte past the limit, so that a provider that
 * misreports cannot make the phone read a huge file into memory. Which kinds of document are
 * accepted is the core's rule (Harness.attachDocument), not this one's.
 */
fun readDocumentText(name: String, input: InputStream, declaredSize: Long?, limit: Int = MAX_DOCUMENT_BYTES): String {
    if (declaredSize != null && declaredSize > limit) throw tooLarge(name, limit)
    val buffer = ByteArray(limit + 1)
    var filled = 0
    while (filled < buffer.size) {
        val read = input.read(buffer, filled, buffer.size - filled)
        if (read < 0) break
        filled += read
    }
    if (filled > limit) throw tooLarge(name, limit)
    return String(buffer, 0, filled, Charsets.UTF_8)
}

private fun tooLarge(name: String, limit: Int) = DocumentTooLargeException(
    name,
    "\"$name\" is larger than ${limit / 1024} KiB; pick a smaller text or Markdown file",
)
