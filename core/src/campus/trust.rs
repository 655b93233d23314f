//! Which servers the campus client believes (DESIGN.md §10, SERVICES.md §10 TLS): every campus
//! host is checked against the platform's roots; one host that serves its certificate without
//! the intermediate that issued it (教学网, course.pku.edu.cn) may also chain to that
//! intermediate, bundled here as an extra trust anchor for that host alone ([`PINNED`]), as the
//! public clients do (onePKU's OkHttp trust anchor, pyIAAA's extra bundle). Another host's
//! certificate issued by the same intermediate is still checked against the platform's roots
//! only.

use std::sync::{Arc, OnceLock};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::wire::COURSE;

/// The extra trust anchors and the one host each is for: GlobalSign's AlphaSSL CA 2025
/// intermediates (GCC R6, SHA-1 43:19:55:E6:E5:DA:BE:85:7F:13:36:C0:23:68:E5:49:5F:14:3E:ED,
/// issued by GlobalSign Root CA - R6; GCC R46, SHA-1
/// E7:AE:6D:3B:B2:65:B2:04:B7:EA:3D:73:2E:DE:C0:79:9A:B2:24:88, issued by GlobalSign Root R46),
/// each checked with `openssl verify` against its root in the Debian CA store before it was
/// bundled.
pub const PINNED: [(&str, &[u8]); 2] = [
    (
        COURSE,
        include_bytes!("anchors/globalsign-gcc-r6-alphassl-ca-2025.pem"),
    ),
    (
        COURSE,
        include_bytes!("anchors/globalsign-gcc-r46-alphassl-ca-2025.pem"),
    ),
];

/// A server's certificate checked against the platform's roots, and — for a host with pinned
/// anchors only, when the platform's roots do not vouch for it — against that host's anchors.
#[derive(Debug)]
pub struct Anchored {
    platform: Arc<dyn ServerCertVerifier>,
    /// Each host with anchors of its own, and the verifier that trusts those anchors alone.
    pinned: Vec<(String, Arc<WebPkiServerVerifier>)>,
}

impl Anchored {
    /// The platform's roots for every host, and `pins` (a host and a PEM certificate each) as
    /// that host's extra anchors.
    pub fn new(pins: &[(&str, &[u8])]) -> Result<Self, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let platform = rustls_platform_verifier::Verifier::new(provider.clone())
            .map_err(|e| format!("the platform's certificates could not be read: {e}"))?;
        let mut hosts: Vec<&str> = pins.iter().map(|(host, _)| *host).collect();
        hosts.dedup();
        let pinned = hosts
            .into_iter()
            .map(|host| {
                let mut roots = RootCertStore::empty();
                for (_, pem) in pins.iter().filter(|(h, _)| *h == host) {
                    let anchor = CertificateDer::from_pem_slice(pem)
                        .map_err(|e| format!("the anchor for {host} is no certificate: {e}"))?;
                    roots
                        .add(anchor)
                        .map_err(|e| format!("the anchor for {host} was refused: {e}"))?;
                }
                let verifier = anchored(roots, provider.clone())
                    .map_err(|e| format!("the anchors for {host} were refused: {e}"))?;
                Ok((host.to_owned(), verifier))
            })
            .collect::<Result<_, String>>()?;
        Ok(Self {
            platform: Arc::new(platform),
            pinned,
        })
    }

    /// The campus client's: [`PINNED`], read once.
    pub fn campus() -> Result<Arc<Self>, String> {
        static CAMPUS: OnceLock<Result<Arc<Anchored>, String>> = OnceLock::new();
        CAMPUS
            .get_or_init(|| Anchored::new(&PINNED).map(Arc::new))
            .clone()
    }

    fn pinned_for(&self, server: &ServerName<'_>) -> Option<&Arc<WebPkiServerVerifier>> {
        let ServerName::DnsName(name) = server else {
            return None;
        };
        self.pinned
            .iter()
            .find(|(host, _)| host.eq_ignore_ascii_case(name.as_ref()))
            .map(|(_, verifier)| verifier)
    }
}

fn anchored(
    roots: RootCertStore,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, rustls::client::VerifierBuilderError> {
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider).build()
}

impl ServerCertVerifier for Anchored {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let platform = self.platform.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match (platform, self.pinned_for(server_name)) {
            (Err(refused), Some(pinned)) => pinned
                .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
                .map_err(|_| refused),
            (platform, _) => platform,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.platform.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.platform.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.platform.supported_verify_schemes()
    }
}

/// The TLS configuration of the campus client: TLS 1.2 and 1.3 with the ring provider, and
/// [`Anchored::campus`] deciding which servers are believed.
pub fn config() -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Anchored::campus()?;
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("the campus client's TLS could not start: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}
