//! Where the cloud keeps its accounts and records: one trait, two backends (DESIGN.md §12).
//! SQLite is the embedded default; PostgreSQL is for production, where the server keeps no state
//! of its own so that more replicas can share one database.
//!
//! Every write of a record is one transaction that also takes the account's row first, so writes
//! to one account are serialised, its quota is counted exactly and a retried request id finds the
//! write it already made.

pub mod postgres;
pub mod sqlite;

use async_trait::async_trait;

/// A record's value: opaque bytes, sealed by the client (at most [`MAX_VALUE_BYTES`]).
pub const MAX_VALUE_BYTES: usize = 64 * 1024;

/// What one account may keep: the sum of its records' values.
pub const QUOTA_BYTES: i64 = 10 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("postgres: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    #[error("the database URL {0:?} is neither sqlite:PATH nor postgres://…")]
    Url(String),
    #[error("the storage worker stopped")]
    Worker,
}

/// A stored record: its version, and its value unless it was deleted (a deleted record keeps
/// its version, so a later write cannot reuse an old one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub version: i64,
    pub value: Option<Vec<u8>>,
}

/// A device of an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub key: Vec<u8>,
    pub added_at: i64,
    /// What the device said it is at setup or join: "android", "ios", "terminal", or empty.
    pub kind: String,
}

/// A write of one record: the version it makes (the current one plus one) and the value, or
/// none to delete.
#[derive(Debug, Clone)]
pub struct Write<'a> {
    pub account: &'a str,
    pub plugin: &'a str,
    pub key: &'a str,
    pub version: i64,
    pub value: Option<&'a [u8]>,
    /// The client's id for this request: a retry with the same id answers what the first made.
    pub request_id: Option<&'a str>,
    pub now: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    Stored {
        version: i64,
    },
    /// Another write came first: the record is at `current` (0 when there is none).
    Conflict {
        current: i64,
    },
    /// The account would hold more than [`QUOTA_BYTES`].
    QuotaExceeded {
        used: i64,
    },
}

#[async_trait]
pub trait Storage: Send + Sync {
    /// A new account whose first device is `device`. False when the device already belongs to
    /// an account or the recovery key is taken.
    async fn create_account(
        &self,
        account: &str,
        device: &[u8],
        kind: &str,
        recovery_key: &[u8],
        now: i64,
    ) -> Result<bool, StorageError>;
    async fn account_of_device(&self, device: &[u8]) -> Result<Option<String>, StorageError>;
    async fn account_of_recovery_key(&self, key: &[u8]) -> Result<Option<String>, StorageError>;
    /// False when the device already belongs to another account. A device removed before
    /// joins again (it is off the removed list after this).
    async fn add_device(
        &self,
        account: &str,
        device: &[u8],
        kind: &str,
        now: i64,
    ) -> Result<bool, StorageError>;
    async fn devices(&self, account: &str) -> Result<Vec<Device>, StorageError>;
    /// Takes `device` off `account` and keeps it on the removed list; false when it is not a
    /// device of that account.
    async fn remove_device(
        &self,
        account: &str,
        device: &[u8],
        now: i64,
    ) -> Result<bool, StorageError>;
    /// Whether another device of its account removed `device` (and it has not joined since).
    async fn was_removed(&self, device: &[u8]) -> Result<bool, StorageError>;
    async fn used_bytes(&self, account: &str) -> Result<i64, StorageError>;
    /// Records a request's nonce; false when the device used it before (a replay).
    async fn first_use_of_nonce(
        &self,
        device: &[u8],
        nonce: &str,
        now: i64,
    ) -> Result<bool, StorageError>;
    async fn create_pairing(
        &self,
        account: &str,
        token_digest: &[u8],
        expires_at: i64,
    ) -> Result<(), StorageError>;
    /// The pairing's account, once: the token is gone after this, used or expired.
    async fn take_pairing(
        &self,
        token_digest: &[u8],
        now: i64,
    ) -> Result<Option<String>, StorageError>;
    /// The live records of a plugin: (key, version, value), by key. Their values come along:
    /// the names are HMACs, so a client learns which key a record is only by opening it.
    async fn list(
        &self,
        account: &str,
        plugin: &str,
    ) -> Result<Vec<(String, i64, Vec<u8>)>, StorageError>;
    async fn get(
        &self,
        account: &str,
        plugin: &str,
        key: &str,
    ) -> Result<Option<Record>, StorageError>;
    async fn write(&self, write: &Write<'_>) -> Result<Written, StorageError>;
    /// Forgets nonces seen and request ids answered before `before`, and expired pairings.
    async fn prune(&self, before: i64, now: i64) -> Result<(), StorageError>;
}

/// Opens the database a `--db` URL names and brings its schema up to date.
pub async fn open(url: &str) -> Result<Box<dyn Storage>, StorageError> {
    if let Some(path) = url.strip_prefix("sqlite:") {
        return Ok(Box::new(sqlite::Sqlite::open(path)?));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Box::new(postgres::Postgres::connect(url, 8).await?));
    }
    Err(StorageError::Url(url.to_owned()))
}
