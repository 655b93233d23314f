//! Signed requests (DESIGN.md §12): an account is its devices' Ed25519 keys, and every request
//! carries the device's key, a timestamp, a nonce and a signature over the method, the path, the
//! body's digest, the timestamp and the nonce. A stale timestamp or a nonce seen before is
//! refused, so a request captured on the wire cannot be sent again.
//!
//! The client's half is harness-core's `cloud::wire`; the two must write the same bytes.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ed25519_dalek::{Signature, VerifyingKey};
use sha2::{Digest, Sha256};

pub const DEVICE: &str = "x-harness-device";
pub const TIMESTAMP: &str = "x-harness-timestamp";
pub const NONCE: &str = "x-harness-nonce";
pub const SIGNATURE: &str = "x-harness-signature";
pub const REQUEST_ID: &str = "x-harness-request-id";

/// How far a request's timestamp may be from the server's clock, either way.
pub const MAX_SKEW_SECS: i64 = 300;

/// The bytes a device signs for one request.
pub fn signed_message(
    method: &str,
    path: &str,
    body: &[u8],
    timestamp: i64,
    nonce: &str,
) -> Vec<u8> {
    let digest = hex(&Sha256::digest(body));
    format!("harness-cloud-v1\n{method}\n{path}\n{digest}\n{timestamp}\n{nonce}").into_bytes()
}

/// The bytes the recovery key signs to let a new device join its account.
pub fn join_message(device: &[u8], timestamp: i64) -> Vec<u8> {
    format!("harness-cloud-join-v1\n{}\n{timestamp}", B64.encode(device)).into_bytes()
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("the request lacks the {0} header")]
    Missing(&'static str),
    #[error("the {0} header is malformed")]
    Malformed(&'static str),
    #[error("the request's timestamp is more than {MAX_SKEW_SECS} s from the server's clock")]
    Stale,
    #[error("the signature does not verify")]
    BadSignature,
    #[error("the request was already received (nonce reused)")]
    Replayed,
}

/// A request's signed headers, parsed.
pub struct Signed {
    pub device: [u8; 32],
    pub timestamp: i64,
    pub nonce: String,
    signature: [u8; 64],
}

impl Signed {
    pub fn parse(header: impl Fn(&'static str) -> Option<String>) -> Result<Self, AuthError> {
        let get = |name| header(name).ok_or(AuthError::Missing(name));
        let device = decode_array(&get(DEVICE)?).ok_or(AuthError::Malformed(DEVICE))?;
        let timestamp = get(TIMESTAMP)?
            .parse()
            .map_err(|_| AuthError::Malformed(TIMESTAMP))?;
        let nonce = get(NONCE)?;
        if nonce.len() < 16
            || nonce.len() > 64
            || !nonce
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(AuthError::Malformed(NONCE));
        }
        let signature = decode_array(&get(SIGNATURE)?).ok_or(AuthError::Malformed(SIGNATURE))?;
        Ok(Self {
            device,
            timestamp,
            nonce,
            signature,
        })
    }

    /// Checks the timestamp against `now` and the signature over the request; the nonce is
    /// the caller's to record (it needs the database).
    pub fn verify(&self, method: &str, path: &str, body: &[u8], now: i64) -> Result<(), AuthError> {
        if (now - self.timestamp).abs() > MAX_SKEW_SECS {
            return Err(AuthError::Stale);
        }
        let message = signed_message(method, path, body, self.timestamp, &self.nonce);
        verify(&self.device, &message, &self.signature)
    }
}

pub fn verify(key: &[u8; 32], message: &[u8], signature: &[u8; 64]) -> Result<(), AuthError> {
    let key = VerifyingKey::from_bytes(key).map_err(|_| AuthError::BadSignature)?;
    key.verify_strict(message, &Signature::from_bytes(signature))
        .map_err(|_| AuthError::BadSignature)
}

pub fn decode_array<const N: usize>(text: &str) -> Option<[u8; N]> {
    B64.decode(text).ok()?.try_into().ok()
}
