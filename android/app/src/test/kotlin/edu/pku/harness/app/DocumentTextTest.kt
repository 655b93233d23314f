package edu.pku.harness.app

import org.junit.Test
import java.io.ByteArrayInputStream
import java.io.InputStream
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith

/** Reading a picked document: UTF-8, and nothing over 1 MiB read whole. */
class DocumentTextTest {
    @Test fun a_document_reads_as_utf8_up_to_the_limit() {
        val text = "# 通知\n下周三讲座在二教 ✓"
        assertEquals(text, readDocumentText("通知.md", ByteArrayInputStream(text.toByteArray()), null))
        val full = "a".repeat(MAX_DOCUMENT_BYTES)
        assertEquals(full, readDocumentText("a.txt", ByteArrayInputStream(full.toByteArray()), MAX_DOCUMENT_BYTES.toLong()))
    }

    @Test fun a_declared_size_over_the_limit_is_refused_before_reading() {
        val untouched = object : InputStream() {
            override fun read(): Int = throw AssertionError("read although the size was over the limit")
        }
        val error = assertFailsWith<DocumentTooLargeException> {
            readDocumentText("big.txt", untouched, MAX_DOCUMENT_BYTES + 1L)
        }
        assertEquals("\"big.txt\" is larger than 1024 KiB; pick a smaller text or Markdown file", error.message)
    }

    @Test fun an_unknown_or_wrong_size_stops_one_byte_past_the_limit() {
        var served = 0L
        val endless = object : InputStream() {
            override fun read(): Int { served++; return 'x'.code }
            override fun read(b: ByteArray, off: Int, len: Int): Int {
                b.fill('x'.code.toByte(), off, off + len); served += len; return len
            }
        }
        assertFailsWith<DocumentTooLargeException> { readDocumentText("endless.txt", endless, 10) }
        assertEquals(MAX_DOCUMENT_BYTES + 1L, served)
    }
}
