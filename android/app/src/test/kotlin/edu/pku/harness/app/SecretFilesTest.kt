package edu.pku.harness.app

import org.junit.Test
import java.io.File
import java.nio.file.Files
import java.util.Base64
import javax.crypto.KeyGenerator
import javax.crypto.SecretKey
import kotlin.test.assertContentEquals
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertNotEquals
import kotlin.test.assertNull
import kotlin.test.assertTrue

/** The secret file format on the host JVM, with a JCE AES-256 key in place of the keystore's. */
class SecretFilesTest {
    private fun aesKey(): SecretKey = KeyGenerator.getInstance("AES").apply { init(256) }.generateKey()
    private val dir: File = Files.createTempDirectory("secret-files").toFile()
    private val key = aesKey()
    private val secrets = SecretFiles(dir, { key })

    @Test fun a_written_secret_reads_back_and_a_missing_one_is_null() {
        assertNull(secrets.read("model.apiKey"))
        secrets.write("model.apiKey", "sk-模型-0042")
        assertEquals("sk-模型-0042", secrets.read("model.apiKey"))
        secrets.write("model.apiKey", "sk-second")
        assertEquals("sk-second", secrets.read("model.apiKey"))
        assertNull(secrets.read("campus.password"))
    }

    @Test fun the_file_is_named_by_the_keys_sha256_and_holds_base64_of_iv_and_ciphertext_only() {
        val value = "sk-plaintext-never-on-disk"
        secrets.write("model.apiKey", value)
        // SHA-256("model.apiKey"), as `printf model.apiKey | sha256sum` prints it.
        val name = SecretFiles.sha256Hex("model.apiKey")
        assertEquals("b614b10a553b228602667dcf4a66a1f6d14459ad3a65e907afd8b8bf3eca07de", name)
        assertEquals(listOf(name), dir.list()!!.toList(), "no temp file left behind")
        val stored = File(dir, name).readText()
        assertFalse(stored.contains(value))
        assertFalse(stored.contains("model.apiKey"))
        val bytes = Base64.getDecoder().decode(stored)
        assertFalse(String(bytes, Charsets.ISO_8859_1).contains(value), "the plaintext is not inside the Base64 either")
        // 12-byte IV, then the ciphertext (as long as the UTF-8 value) and GCM's 16-byte tag.
        assertEquals(SecretFiles.IV_BYTES + value.toByteArray().size + 16, bytes.size)
    }

    @Test fun each_write_draws_a_fresh_iv() {
        secrets.write("k", "same value")
        val first = Base64.getDecoder().decode(secrets.fileFor("k").readText())
        secrets.write("k", "same value")
        val second = Base64.getDecoder().decode(secrets.fileFor("k").readText())
        assertNotEquals(first.copyOfRange(0, 12).toList(), second.copyOfRange(0, 12).toList())
        assertFalse(first.contentEquals(second))
    }

    @Test fun writing_null_deletes_the_file() {
        secrets.write("k", "v")
        assertTrue(secrets.fileFor("k").exists())
        secrets.write("k", null)
        assertFalse(secrets.fileFor("k").exists())
        assertNull(secrets.read("k"))
        secrets.write("k", null) // deleting what is not there is no error
        assertContentEquals(emptyArray(), dir.list())
    }

    @Test fun a_changed_file_or_another_key_is_refused_naming_the_secret() {
        secrets.write("model.apiKey", "sk-1")
        val file = secrets.fileFor("model.apiKey")
        val bytes = Base64.getDecoder().decode(file.readText())
        bytes[bytes.size - 1] = (bytes[bytes.size - 1].toInt() xor 1).toByte()
        file.writeText(Base64.getEncoder().encodeToString(bytes))
        val changed = assertFailsWith<SecretUnreadableException> { secrets.read("model.apiKey") }
        assertEquals(
            "the stored secret \"model.apiKey\" cannot be read (it does not open with this device's key); enter it again in the app to replace it",
            changed.message,
        )

        secrets.write("model.apiKey", "sk-2")
        val otherKey = SecretFiles(dir, { aesKey() })
        assertFailsWith<SecretUnreadableException> { otherKey.read("model.apiKey") }

        file.writeText("not base64 at all!")
        val garbled = assertFailsWith<SecretUnreadableException> { secrets.read("model.apiKey") }
        assertTrue(garbled.message!!.contains("(it is not Base64)"), garbled.message)
        file.writeText(Base64.getEncoder().encodeToString(ByteArray(20)))
        val short = assertFailsWith<SecretUnreadableException> { secrets.read("model.apiKey") }
        assertTrue(short.message!!.contains("(it is 20 bytes long, too short)"), short.message)
    }
}
