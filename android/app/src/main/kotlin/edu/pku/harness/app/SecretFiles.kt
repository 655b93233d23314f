package edu.pku.harness.app

import java.io.File
import java.io.FileOutputStream
import java.io.IOException
import java.nio.file.Files
import java.nio.file.StandardCopyOption
import java.security.GeneralSecurityException
import java.security.MessageDigest
import java.util.Base64
import javax.crypto.Cipher
import javax.crypto.SecretKey
import javax.crypto.spec.GCMParameterSpec

/** A secret file that exists but cannot be read back: damaged, or sealed with another key. */
class SecretUnreadableException(message: String, cause: Throwable? = null) : IOException(message, cause)

/**
 * The secrets the core keeps in the platform keystore (DESIGN.md §6: never in SQLite or logs),
 * one file per key in [dir]: the file's name is the SHA-256 of the key in hex (so a key's name
 * never reaches the disk either), its content Base64(iv || ciphertext) of the value sealed with
 * AES-256-GCM under [key]. Each write draws a fresh IV and replaces the file atomically (temp
 * file, then rename), so a killed process leaves the old value or the new one, never half.
 *
 * Plain JVM: on the phone [key] lives in the Android Keystore ([KeystoreSecrets]); the host
 * tests give it a JCE key.
 */
class SecretFiles(private val dir: File, private val key: () -> SecretKey) {
    /** The value stored for [name]; null when there is none. */
    fun read(name: String): String? {
        val file = fileFor(name)
        val stored = try {
            file.readText(Charsets.US_ASCII)
        } catch (e: java.io.FileNotFoundException) {
            return null
        }
        return String(open(name, stored), Charsets.UTF_8)
    }

    /** Stores [value] for [name]; null deletes it. */
    fun write(name: String, value: String?) {
        val file = fileFor(name)
        if (value == null) {
            if (!file.delete() && file.exists()) throw IOException("secret file ${file.name} cannot be deleted")
            return
        }
        dir.mkdirs()
        if (!dir.isDirectory) throw IOException("secrets directory $dir cannot be created")
        val sealed = seal(value.toByteArray(Charsets.UTF_8))
        val temp = File.createTempFile(file.name, ".tmp", dir)
        try {
            FileOutputStream(temp).use { out ->
                out.write(sealed.toByteArray(Charsets.US_ASCII))
                // On disk before the rename makes it the value: a crash must not leave an empty file.
                out.fd.sync()
            }
            Files.move(temp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
        } finally {
            temp.delete()
        }
    }

    /** The file that holds [name]'s value. */
    fun fileFor(name: String): File = File(dir, sha256Hex(name))

    private fun seal(plaintext: ByteArray): String {
        val cipher = Cipher.getInstance(TRANSFORMATION)
        // No IV passed: the provider draws a fresh random one (the Android Keystore refuses a
        // caller's IV for encryption, and a reused GCM IV would leak both plaintexts).
        cipher.init(Cipher.ENCRYPT_MODE, key())
        val iv = cipher.iv
        check(iv.size == IV_BYTES) { "the cipher chose a ${iv.size}-byte IV, not $IV_BYTES" }
        return Base64.getEncoder().encodeToString(iv + cipher.doFinal(plaintext))
    }

    private fun open(name: String, stored: String): ByteArray {
        val bytes = try {
            Base64.getDecoder().decode(stored.trim())
        } catch (e: IllegalArgumentException) {
            throw unreadable(name, "it is not Base64", e)
        }
        if (bytes.size < IV_BYTES + TAG_BITS / 8) throw unreadable(name, "it is ${bytes.size} bytes long, too short", null)
        return try {
            val cipher = Cipher.getInstance(TRANSFORMATION)
            cipher.init(Cipher.DECRYPT_MODE, key(), GCMParameterSpec(TAG_BITS, bytes, 0, IV_BYTES))
            cipher.doFinal(bytes, IV_BYTES, bytes.size - IV_BYTES)
        } catch (e: GeneralSecurityException) {
            // GCM's tag check: the file was changed, or the keystore key is not the one that sealed it.
            throw unreadable(name, "it does not open with this device's key", e)
        }
    }

    private fun unreadable(name: String, why: String, cause: Throwable?) = SecretUnreadableException(
        "the stored secret \"$name\" cannot be read ($why); enter it again in the app to replace it",
        cause,
    )

    companion object {
        const val TRANSFORMATION = "AES/GCM/NoPadding"
        const val IV_BYTES = 12
        const val TAG_BITS = 128

        fun sha256Hex(text: String): String =
            MessageDigest.getInstance("SHA-256").digest(text.toByteArray(Charsets.UTF_8))
                .joinToString("") { "%02x".format(it.toInt() and 0xff) }
    }
}
