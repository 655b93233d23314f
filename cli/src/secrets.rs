//! Secrets for the desktop CLI, in the operating system's keyring (the kernel keyring on
//! Linux, the Keychain on macOS). The phone shells provide their own store.

use harness_core::secrets::{SecretError, SecretStore};

/// The keyring service the CLI's secrets are filed under.
const SERVICE: &str = "edu.pku.harness";

/// The keyring's secrets of one data directory: each directory is one phone's worth of state,
/// so its keys (the campus sessions, the API key) are filed under its path, and two data
/// directories never see each other's sessions.
pub struct KeyringSecrets {
    scope: String,
}

impl KeyringSecrets {
    pub fn for_data_dir(data_dir: &std::path::Path) -> Self {
        let dir = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
        Self {
            scope: dir.display().to_string(),
        }
    }

    fn key(&self, key: &str) -> String {
        format!("{}:{key}", self.scope)
    }
}

fn failed(e: impl std::fmt::Display) -> SecretError {
    SecretError(e.to_string())
}

/// On Linux, the user's kernel keyring (keyutils), which every process of the user shares —
/// unlike a session keyring, which a terminal without a login session does not have.
#[cfg(target_os = "linux")]
mod backend {
    use linux_keyutils::{KeyError, KeyRing, KeyRingIdentifier};

    use super::{SERVICE, SecretError, failed};

    fn ring() -> Result<KeyRing, SecretError> {
        KeyRing::from_special_id(KeyRingIdentifier::User, false).map_err(failed)
    }

    fn description(key: &str) -> String {
        format!("{SERVICE}:{key}")
    }

    pub fn get(key: &str) -> Result<Option<String>, SecretError> {
        match ring()?.search(&description(key)) {
            Ok(found) => String::from_utf8(found.read_to_vec().map_err(failed)?)
                .map(Some)
                .map_err(failed),
            Err(KeyError::KeyDoesNotExist) => Ok(None),
            Err(e) => Err(failed(e)),
        }
    }

    pub fn set(key: &str, value: &str) -> Result<(), SecretError> {
        ring()?
            .add_key(&description(key), value.as_bytes())
            .map(|_| ())
            .map_err(failed)
    }

    pub fn delete(key: &str) -> Result<(), SecretError> {
        let ring = ring()?;
        match ring.search(&description(key)) {
            // Unlinking makes it unfindable at once, and the kernel destroys a key nothing links
            // to (an invalidated key, by contrast, can still be found until it is collected).
            Ok(found) => ring.unlink_key(found).map_err(failed),
            Err(KeyError::KeyDoesNotExist) => Ok(()),
            Err(e) => Err(failed(e)),
        }
    }
}

/// On macOS, the login Keychain.
#[cfg(target_os = "macos")]
mod backend {
    use super::{SERVICE, SecretError, failed};

    fn entry(key: &str) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(SERVICE, key).map_err(failed)
    }

    pub fn get(key: &str) -> Result<Option<String>, SecretError> {
        match entry(key)?.get_password() {
            Ok(value) => Ok(Some(value)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(failed(e)),
        }
    }

    pub fn set(key: &str, value: &str) -> Result<(), SecretError> {
        entry(key)?.set_password(value).map_err(failed)
    }

    pub fn delete(key: &str) -> Result<(), SecretError> {
        match entry(key)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(failed(e)),
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod backend {
    use super::SecretError;

    fn unsupported() -> SecretError {
        SecretError("this system has no keyring the harness CLI can use".into())
    }

    pub fn get(_key: &str) -> Result<Option<String>, SecretError> {
        Err(unsupported())
    }

    pub fn set(_key: &str, _value: &str) -> Result<(), SecretError> {
        Err(unsupported())
    }

    pub fn delete(_key: &str) -> Result<(), SecretError> {
        Err(unsupported())
    }
}

impl SecretStore for KeyringSecrets {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        backend::get(&self.key(key))
    }

    fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
        backend::set(&self.key(key), value)
    }

    fn delete(&self, key: &str) -> Result<(), SecretError> {
        backend::delete(&self.key(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_round_trips_through_the_keyring_within_its_data_directory() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let store = KeyringSecrets::for_data_dir(one.path());
        let other = KeyringSecrets::for_data_dir(two.path());
        let key = format!("test.{}", std::process::id());
        store.set(&key, "sk-test-value").unwrap();
        assert_eq!(store.get(&key).unwrap().as_deref(), Some("sk-test-value"));
        assert_eq!(other.get(&key).unwrap(), None);
        store.delete(&key).unwrap();
        assert_eq!(store.get(&key).unwrap(), None);
    }
}
