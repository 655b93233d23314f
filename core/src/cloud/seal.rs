//! The account key and what it seals (DESIGN.md §12): 256 bits that never leave the student's
//! devices (the keystore, the QR, the recovery code). From it come, each by its own HMAC label,
//! the key that seals values (XChaCha20-Poly1305, bound to account, plugin, key and version as
//! associated data, so the server can neither swap records nor pass an old one off as new), the
//! key that turns plugin and key names into HMACs, and the recovery key pair whose public half
//! lets the server recognise a device that knows the code.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use ed25519_dalek::SigningKey;
use hmac::{Hmac, KeyInit as _, Mac};

type HmacSha256 = Hmac<sha2_11::Sha256>;

const NONCE_BYTES: usize = 24;
const TAG_BYTES: usize = 16;
/// What sealing adds to a value: the nonce and the tag.
pub const SEAL_OVERHEAD: usize = NONCE_BYTES + TAG_BYTES;

/// RFC 4648's base32 alphabet: letters and the digits 2–7, none that reads as another.
const BASE32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/// 256 bits in base32, and one group more of checksum.
const CODE_CHARS: usize = 52;
const CHECK_CHARS: usize = 4;

pub fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the system's random source");
    bytes
}

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length");
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// The account key. Its bytes are not printed by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct AccountKey([u8; 32]);

impl std::fmt::Debug for AccountKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccountKey(…)")
    }
}

impl AccountKey {
    pub fn generate() -> Self {
        Self(random())
    }

    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// For the keystore (base64url), and nowhere else.
    pub fn to_keystore(&self) -> String {
        B64.encode(self.0)
    }

    pub fn from_keystore(text: &str) -> Option<Self> {
        B64.decode(text).ok()?.try_into().ok().map(Self)
    }

    fn derive(&self, label: &str) -> [u8; 32] {
        hmac(&self.0, &[label.as_bytes()])
    }

    /// The key pair the server knows the public half of as the account's recovery key.
    pub fn recovery_signing_key(&self) -> SigningKey {
        SigningKey::from_bytes(&self.derive("harness-cloud recovery v1"))
    }

    /// A plugin's name as the server sees it.
    pub fn plugin_name(&self, plugin: &str) -> String {
        B64.encode(hmac(
            &self.derive("harness-cloud names v1"),
            &[b"plugin\0", plugin.as_bytes()],
        ))
    }

    /// A key's name as the server sees it (the plugin's id in it, so two plugins' equal keys
    /// differ on the server too).
    pub fn key_name(&self, plugin: &str, key: &str) -> String {
        B64.encode(hmac(
            &self.derive("harness-cloud names v1"),
            &[b"key\0", plugin.as_bytes(), b"\0", key.as_bytes()],
        ))
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(&self.derive("harness-cloud values v1").into())
    }

    /// A value sealed for one account, plugin, key and version: nonce ‖ ciphertext ‖ tag.
    pub fn seal(&self, bound: &Bound<'_>, plaintext: &[u8]) -> Vec<u8> {
        let nonce: [u8; NONCE_BYTES] = random();
        let aad = bound.aad();
        let sealed = self
            .cipher()
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            .expect("XChaCha20-Poly1305 seals any value under 256 GiB");
        [nonce.as_slice(), &sealed].concat()
    }

    /// The value, when it was sealed under this key for exactly this account, plugin, key and
    /// version.
    pub fn open(&self, bound: &Bound<'_>, sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < SEAL_OVERHEAD {
            return None;
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_BYTES);
        let aad = bound.aad();
        self.cipher()
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: &aad,
                },
            )
            .ok()
    }

    /// The recovery code the student is shown once: the key in base32 and a checksum group,
    /// in groups of four joined by `-` (`K7QF-2MXD-…`).
    pub fn recovery_code(&self) -> String {
        let mut chars = base32(&self.0);
        chars.push_str(&checksum(&self.0));
        let chars: Vec<char> = chars.chars().collect();
        chars
            .chunks(4)
            .map(|group| group.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join("-")
    }

    /// Reads a recovery code as the student typed it: any case, with or without the dashes
    /// and spaces. None when it is not one (a character off, one missing, a typo).
    pub fn from_recovery_code(code: &str) -> Option<Self> {
        let chars: String = code
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if chars.len() != CODE_CHARS + CHECK_CHARS || !chars.is_ascii() {
            return None;
        }
        let (body, check) = chars.split_at(CODE_CHARS);
        let key: [u8; 32] = unbase32(body)?.try_into().ok()?;
        (checksum(&key) == check && base32(&key) == body).then_some(Self(key))
    }
}

/// What a sealed value is bound to.
pub struct Bound<'a> {
    pub account: &'a str,
    pub plugin: &'a str,
    pub key: &'a str,
    pub version: i64,
}

impl Bound<'_> {
    fn aad(&self) -> Vec<u8> {
        format!(
            "harness-cloud record v1\0{}\0{}\0{}\0{}",
            self.account, self.plugin, self.key, self.version
        )
        .into_bytes()
    }
}

fn base32(bytes: &[u8]) -> String {
    let mut out = String::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for &byte in bytes {
        buffer = (buffer << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(BASE32[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(BASE32[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
}

fn unbase32(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let value = BASE32.iter().position(|&b| b == c)? as u32;
        buffer = ((buffer << 5) | value) & 0xffff;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    Some(out)
}

/// Four base32 characters of the key's digest: a mistyped code is caught before it is sent.
fn checksum(key: &[u8; 32]) -> String {
    let digest = hmac(b"harness-cloud recovery code check v1", &[key]);
    base32(&digest)[..CHECK_CHARS].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recovery_code_reads_back_as_its_key_and_a_typo_does_not() {
        let key = AccountKey::generate();
        let code = key.recovery_code();
        assert_eq!(code.len(), 14 * 4 + 13);
        assert!(
            code.split('-')
                .all(|g| g.len() == 4 && g.bytes().all(|b| BASE32.contains(&b)))
        );
        assert_eq!(AccountKey::from_recovery_code(&code), Some(key.clone()));
        let typed = format!(" {} ", code.to_lowercase().replace('-', " "));
        assert_eq!(AccountKey::from_recovery_code(&typed), Some(key.clone()));
        let mut typo: Vec<char> = code.chars().collect();
        typo[0] = if typo[0] == 'A' { 'B' } else { 'A' };
        assert_eq!(
            AccountKey::from_recovery_code(&typo.into_iter().collect::<String>()),
            None
        );
        assert_eq!(
            AccountKey::from_recovery_code(&code[..code.len() - 1]),
            None
        );
    }

    // DESIGN §12: values bound to account, plugin, key and version.
    #[test]
    fn a_sealed_value_opens_only_where_it_was_sealed() {
        let key = AccountKey::generate();
        let at = |account, plugin, key, version| Bound {
            account,
            plugin,
            key,
            version,
        };
        let sealed = key.seal(&at("a", "p", "k", 2), b"secret words");
        assert_eq!(
            key.open(&at("a", "p", "k", 2), &sealed).as_deref(),
            Some(&b"secret words"[..])
        );
        for other in [
            at("b", "p", "k", 2),
            at("a", "q", "k", 2),
            at("a", "p", "j", 2),
            at("a", "p", "k", 1),
        ] {
            assert_eq!(key.open(&other, &sealed), None);
        }
        assert_eq!(
            AccountKey::generate().open(&at("a", "p", "k", 2), &sealed),
            None
        );
        assert_eq!(sealed.len(), b"secret words".len() + SEAL_OVERHEAD);
        assert!(!sealed.windows(6).any(|w| w == b"secret"));
    }
}
