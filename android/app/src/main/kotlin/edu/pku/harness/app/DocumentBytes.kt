package edu.pku.harness.app

import java.io.ByteArrayOutputStream
import java.io.IOException
import java.io.InputStream

/**
 * The most a picked file may hold, in bytes: 16 MiB, the core's bound on a file it reads
 * (harness_core::screens::FILE_BYTES); the core bounds the text it gives by its own rule.
 */
const val MAX_DOCUMENT_BYTES = 16 shl 20

/** A picked document over [MAX_DOCUMENT_BYTES]; nothing of it was attached. */
class DocumentTooLargeException(val name: String, message: String) : IOException(message)

/**
 * The bytes of the document [name] the user picked, read from [input]. One over [limit] bytes
 * is refused before it is read whole: by the size its provider reports ([declaredSize], null
 * when unknown), and else after reading one byte past the limit, so that a provider that
 * misreports cannot make the phone read a huge file into memory. What the bytes are (text,
 * Markdown, PDF) and whether they are accepted is the core's rule (Action.AttachFile), not
 * this one's.
 */
fun readDocumentBytes(name: String, input: InputStream, declaredSize: Long?, limit: Int = MAX_DOCUMENT_BYTES): ByteArray {
    if (declaredSize != null && declaredSize > limit) throw tooLarge(name, limit)
    val read = readBoundedBytes(input, limit, sizeHint = declaredSize)
    if (read.size > limit) throw tooLarge(name, limit)
    return read
}

/**
 * What [input] holds, read to its end but never more than [limit] + 1 bytes: all of a file
 * within the limit, and of one over it just the byte that shows it is, so that the core refuses
 * it by its size (harness_core::picked::FILE_BYTES, for a plugin's `files.pick`) while the phone
 * never reads it whole. [sizeHint], the size the provider reports, only sizes the buffer.
 */
fun readBoundedBytes(input: InputStream, limit: Int = MAX_DOCUMENT_BYTES, sizeHint: Long? = null): ByteArray {
    val read = ByteArrayOutputStream((sizeHint ?: 0L).coerceIn(0L, limit.toLong()).toInt())
    val chunk = ByteArray(64 * 1024)
    while (read.size() <= limit) {
        val n = input.read(chunk, 0, minOf(chunk.size, limit + 1 - read.size()))
        if (n < 0) break
        read.write(chunk, 0, n)
    }
    return read.toByteArray()
}

private fun tooLarge(name: String, limit: Int) = DocumentTooLargeException(
    name,
    "\"$name\" is larger than ${limit shr 20} MiB; pick a smaller file",
)
