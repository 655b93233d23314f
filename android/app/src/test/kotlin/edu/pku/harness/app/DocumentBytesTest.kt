package edu.pku.harness.app

import org.junit.Test
import java.io.ByteArrayInputStream
import java.io.InputStream
import kotlin.test.assertContentEquals
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith

/** Reading a picked document: its bytes as they are, and nothing over 16 MiB read whole. */
class DocumentBytesTest {
    @Test fun a_document_reads_as_its_bytes_up_to_the_limit() {
        val text = "# 通知\n下周三讲座在二教 ✓".toByteArray()
        assertContentEquals(text, readDocumentBytes("通知.md", ByteArrayInputStream(text), null))
        val full = ByteArray(MAX_DOCUMENT_BYTES) { 'a'.code.toByte() }
        assertContentEquals(full, readDocumentBytes("a.pdf", ByteArrayInputStream(full), MAX_DOCUMENT_BYTES.toLong()))
    }

    @Test fun a_declared_size_over_the_limit_is_refused_before_reading() {
        val untouched = object : InputStream() {
            override fun read(): Int = throw AssertionError("read although the size was over the limit")
        }
        val error = assertFailsWith<DocumentTooLargeException> {
            readDocumentBytes("big.pdf", untouched, MAX_DOCUMENT_BYTES + 1L)
        }
        assertEquals("\"big.pdf\" is larger than 16 MiB; pick a smaller file", error.message)
    }

    @Test fun an_unknown_or_wrong_size_stops_one_byte_past_the_limit() {
        var served = 0L
        val endless = object : InputStream() {
            override fun read(): Int { served++; return 'x'.code }
            override fun read(b: ByteArray, off: Int, len: Int): Int {
                b.fill('x'.code.toByte(), off, off + len); served += len; return len
            }
        }
        assertFailsWith<DocumentTooLargeException> { readDocumentBytes("endless.txt", endless, 10) }
        assertEquals(MAX_DOCUMENT_BYTES + 1L, served)
    }

    @Test fun a_file_for_a_plugin_reads_whole_within_the_limit_and_one_byte_past_it_over_it() {
        val text = "周一 高等数学".toByteArray()
        assertContentEquals(text, readBoundedBytes(ByteArrayInputStream(text)))
        var served = 0L
        val endless = object : InputStream() {
            override fun read(): Int { served++; return 'x'.code }
            override fun read(b: ByteArray, off: Int, len: Int): Int {
                b.fill('x'.code.toByte(), off, off + len); served += len; return len
            }
        }
        assertEquals(MAX_DOCUMENT_BYTES + 1, readBoundedBytes(endless).size)
        assertEquals(MAX_DOCUMENT_BYTES + 1L, served)
    }
}
