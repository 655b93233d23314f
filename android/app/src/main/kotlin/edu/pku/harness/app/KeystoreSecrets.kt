package edu.pku.harness.app

import android.content.Context
import android.security.keystore.KeyGenParameterSpec
import android.security.keystore.KeyProperties
import java.io.File
import java.security.KeyStore
import javax.crypto.KeyGenerator
import javax.crypto.SecretKey

/**
 * Where the key that seals the secrets lives. On a phone it is [AndroidKeystoreKey]; the
 * Robolectric tests, which have no AndroidKeyStore provider, give a software AES key. The one
 * seam between the app and its tests: everything else they run is the app's own code.
 */
fun interface SealingKey {
    fun key(): SecretKey
}

/** The app's AES-256-GCM key in the Android Keystore, generated there on first use. */
object AndroidKeystoreKey : SealingKey {
    override fun key(): SecretKey = KeystoreSecrets.keystoreKey()
}

/**
 * The core's secret store on Android (DESIGN.md §6): [SecretFiles] under
 * noBackupFilesDir/secrets, sealed with an AES-256-GCM key that never leaves the Android
 * Keystore. No user authentication is bound to the key: scheduled jobs read secrets while the
 * phone is locked. The directory is excluded from backups, since the key cannot follow the
 * files to another phone anyway.
 */
class KeystoreSecrets(dir: File, sealingKey: SealingKey = AndroidKeystoreKey) {
    constructor(context: Context, sealingKey: SealingKey = AndroidKeystoreKey) :
        this(File(context.noBackupFilesDir, "secrets"), sealingKey)

    private val files = SecretFiles(dir, sealingKey::key)

    /** The value stored for [key]; null when there is none. */
    fun read(key: String): String? = files.read(key)

    /** Stores [value] for [key]; null deletes it. */
    fun write(key: String, value: String?) = files.write(key, value)

    /** The file that holds [key]'s value (the tests check that it never holds the plaintext). */
    fun fileFor(key: String): File = files.fileFor(key)

    companion object {
        const val KEY_ALIAS = "pku-harness-secrets"
        private const val PROVIDER = "AndroidKeyStore"
        private val lock = Any()

        /** The app's key, generated in the keystore on first use. */
        fun keystoreKey(): SecretKey = synchronized(lock) {
            val store = KeyStore.getInstance(PROVIDER).apply { load(null) }
            (store.getKey(KEY_ALIAS, null) as SecretKey?) ?: generate()
        }

        private fun generate(): SecretKey {
            val spec = KeyGenParameterSpec.Builder(KEY_ALIAS, KeyProperties.PURPOSE_ENCRYPT or KeyProperties.PURPOSE_DECRYPT)
                .setBlockModes(KeyProperties.BLOCK_MODE_GCM)
                .setEncryptionPaddings(KeyProperties.ENCRYPTION_PADDING_NONE)
                .setKeySize(256)
                // The keystore draws every IV itself (the default): SecretFiles never passes one.
                .setRandomizedEncryptionRequired(true)
                .setUserAuthenticationRequired(false)
                .build()
            return KeyGenerator.getInstance(KeyProperties.KEY_ALGORITHM_AES, PROVIDER).run {
                init(spec)
                generateKey()
            }
        }
    }
}
