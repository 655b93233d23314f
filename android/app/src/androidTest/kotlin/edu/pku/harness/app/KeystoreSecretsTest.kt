package edu.pku.harness.app

import androidx.test.ext.junit.runners.AndroidJUnit4
import androidx.test.platform.app.InstrumentationRegistry
import org.junit.Test
import org.junit.runner.RunWith
import java.io.File
import java.security.KeyStore
import java.util.Base64
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNull
import kotlin.test.assertTrue

/** Secrets sealed by the Android Keystore's key, on this phone's disk. */
@RunWith(AndroidJUnit4::class)
class KeystoreSecretsTest {
    private val context = InstrumentationRegistry.getInstrumentation().targetContext
    private val dir = File(context.cacheDir, "secrets-test-${System.nanoTime()}")

    @Test fun a_secret_round_trips_and_its_file_never_holds_the_plaintext() {
        val secrets = KeystoreSecrets(dir)
        val value = "sk-android-keystore-0042"
        assertNull(secrets.read("model.apiKey"))
        secrets.write("model.apiKey", value)
        assertEquals(value, secrets.read("model.apiKey"))
        // A second instance (as after a restart) opens it with the same keystore key.
        assertEquals(value, KeystoreSecrets(dir).read("model.apiKey"))

        val file = secrets.fileFor("model.apiKey")
        assertEquals(dir, file.parentFile)
        assertEquals(SecretFiles.sha256Hex("model.apiKey"), file.name)
        val raw = file.readBytes()
        val stored = String(raw, Charsets.ISO_8859_1)
        assertFalse(stored.contains(value), "plaintext on disk")
        assertFalse(stored.contains("model.apiKey"), "the key's name on disk")
        val sealed = Base64.getDecoder().decode(stored)
        assertFalse(String(sealed, Charsets.ISO_8859_1).contains(value), "plaintext inside the Base64")
        assertEquals(12 + value.length + 16, sealed.size)

        // The key lives in the keystore under its alias, and no user authentication guards it.
        val keystore = KeyStore.getInstance("AndroidKeyStore").apply { load(null) }
        assertTrue(keystore.containsAlias(KeystoreSecrets.KEY_ALIAS))

        secrets.write("model.apiKey", null)
        assertFalse(file.exists())
        assertNull(secrets.read("model.apiKey"))
        dir.deleteRecursively()
    }

    @Test fun the_platform_reads_and_writes_through_the_keystore() {
        val platform = AndroidPlatform(
            context, edu.pku.harness.ui.ApprovalHost(), edu.pku.harness.ui.AppNavigator(),
            secrets = KeystoreSecrets(dir),
        )
        platform.writeSecret("campus.token", "t-1")
        assertEquals("t-1", platform.readSecret("campus.token"))
        assertFalse(String(KeystoreSecrets(dir).fileFor("campus.token").readBytes()).contains("t-1"))
        platform.writeSecret("campus.token", null)
        assertNull(platform.readSecret("campus.token"))
        dir.deleteRecursively()
    }
}
