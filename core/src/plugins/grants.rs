//! The sign-ins no person makes at a browser, for a client an authorization server issued
//! beforehand: the client credentials grant (OAuth 2.1 §4.2, SEP-1046), the client proving
//! itself by its secret (`client_secret_basic` or `_post`) or by a JWT signed with its private
//! key (`private_key_jwt`, RFC 7523 §2.2); and cross-app access (SEP-990): the enterprise
//! identity provider's ID token exchanged there for an identity assertion grant (an ID-JAG,
//! RFC 8693 token exchange), which the MCP server's authorization server takes as a JWT
//! bearer grant (RFC 7523 §2.1).
//!
//! Each request goes through the HTTP client `oauth` gives (the guarded one of remote plugins);
//! what a grant yields is the token response, which `oauth` keeps in the keystore. A secret, a
//! private key, an ID token or an assertion never reaches an error or a log.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use rmcp::transport::auth::AuthorizationMetadata;
use serde_json::{Value, json};

/// Where a grant's requests go: `oauth`'s guarded client (never following a redirect, the
/// address guard, bounded).
#[async_trait::async_trait]
pub(crate) trait Http: Send + Sync {
    /// The answer to `request`, or why there is none, in words.
    async fn exchange(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Vec<u8>>, String>;
}

const CLIENT_CREDENTIALS: &str = "client_credentials";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const JWT_ASSERTION: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long a client assertion is good for (RFC 7523 §3: a short expiry).
const ASSERTION_SECONDS: u64 = 300;

/// A client's private key (PKCS#8 PEM), for `private_key_jwt`; the algorithm it signs with
/// follows from the key: ES256 (P-256), ES384 (P-384), EdDSA (Ed25519) or RS256 (RSA).
pub(crate) struct ClientKey {
    pair: KeyPair,
}

enum KeyPair {
    Ecdsa(ring::signature::EcdsaKeyPair, &'static str),
    Ed25519(ring::signature::Ed25519KeyPair),
    Rsa(ring::signature::RsaKeyPair),
}

impl ClientKey {
    /// The key in `pem`, or what is wrong with it, in words (never the key).
    pub(crate) fn parse(pem: &str) -> Result<Self, String> {
        use ring::signature::{
            ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, EcdsaKeyPair,
            Ed25519KeyPair, RsaKeyPair,
        };
        let body: String = pem
            .lines()
            .map(str::trim)
            .skip_while(|line| *line != "-----BEGIN PRIVATE KEY-----")
            .skip(1)
            .take_while(|line| !line.starts_with("-----END"))
            .collect();
        let der = STANDARD.decode(body).ok().filter(|der| !der.is_empty()).ok_or(
            "the client's private key is not a PKCS#8 PEM key (\"-----BEGIN PRIVATE KEY-----\"); \
             convert it with `openssl pkcs8 -topk8 -nocrypt`",
        )?;
        let rng = ring::rand::SystemRandom::new();
        let pair = if let Ok(pair) =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
        {
            KeyPair::Ecdsa(pair, "ES256")
        } else if let Ok(pair) =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P384_SHA384_FIXED_SIGNING, &der, &rng)
        {
            KeyPair::Ecdsa(pair, "ES384")
        } else if let Ok(pair) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der) {
            KeyPair::Ed25519(pair)
        } else if let Ok(pair) = RsaKeyPair::from_pkcs8(&der) {
            KeyPair::Rsa(pair)
        } else {
            return Err(
                "the client's private key is none the app signs with (an EC P-256 or \
                        P-384, Ed25519 or RSA key in PKCS#8)"
                    .into(),
            );
        };
        Ok(Self { pair })
    }

    /// The JWS algorithm this key signs with.
    pub(crate) fn algorithm(&self) -> &'static str {
        match &self.pair {
            KeyPair::Ecdsa(_, alg) => alg,
            KeyPair::Ed25519(_) => "EdDSA",
            KeyPair::Rsa(_) => "RS256",
        }
    }

    /// A client assertion (RFC 7523 §3) of client `client` for the authorization server
    /// `audience`: issued by and about the client, for a few minutes, with a fresh `jti`.
    fn assertion(&self, client: &str, audience: &str) -> Result<String, String> {
        let now = now();
        let mut jti = [0u8; 16];
        getrandom::fill(&mut jti).map_err(|e| format!("no random source: {e}"))?;
        let header = json!({"alg": self.algorithm(), "typ": "JWT"});
        let claims = json!({
            "iss": client, "sub": client, "aud": audience,
            "iat": now, "exp": now + ASSERTION_SECONDS,
            "jti": URL_SAFE_NO_PAD.encode(jti),
        });
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let rng = ring::rand::SystemRandom::new();
        let failed = |_| "the client's private key could not sign".to_owned();
        let signature = match &self.pair {
            KeyPair::Ecdsa(pair, _) => pair
                .sign(&rng, signed.as_bytes())
                .map_err(failed)?
                .as_ref()
                .to_vec(),
            KeyPair::Ed25519(pair) => pair.sign(signed.as_bytes()).as_ref().to_vec(),
            KeyPair::Rsa(pair) => {
                let mut signature = vec![0; pair.public().modulus_len()];
                pair.sign(
                    &ring::signature::RSA_PKCS1_SHA256,
                    &rng,
                    signed.as_bytes(),
                    &mut signature,
                )
                .map_err(failed)?;
                signature
            }
        };
        Ok(format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

/// How a client proves itself at a token endpoint: by its secret, or by its private key.
pub(crate) enum Proof<'a> {
    Secret(&'a str),
    Key(&'a ClientKey),
}

/// The client `id` at the authorization server `metadata` describes, proving itself by `proof`.
pub(crate) struct Client<'a> {
    pub id: &'a str,
    pub proof: Proof<'a>,
}

/// The enterprise sign-in of cross-app access: the identity provider's token endpoint and
/// issuer, the app's client there, and the ID token it issued to the student.
pub(crate) struct Enterprise<'a> {
    pub issuer: &'a str,
    pub token_endpoint: &'a str,
    pub client_id: &'a str,
    pub id_token: &'a str,
}

/// Whether the authorization server `metadata` describes issues tokens to a client by the
/// client credentials grant and not to a person by the authorization code grant: the app
/// signs in as the client itself, with no page to show.
pub(crate) fn issues_to_clients(metadata: &AuthorizationMetadata) -> bool {
    let grants = metadata
        .additional_fields
        .get("grant_types_supported")
        .and_then(Value::as_array);
    let lists = |grant: &str| grants.is_some_and(|g| g.iter().any(|g| g == grant));
    lists(CLIENT_CREDENTIALS) && !lists("authorization_code")
}

/// The client credentials grant for `resource` (with `scopes`, none: the server's default):
/// the token response.
pub(crate) async fn client_credentials(
    http: &dyn Http,
    metadata: &AuthorizationMetadata,
    client: &Client<'_>,
    resource: &str,
    scopes: &[String],
) -> Result<Value, String> {
    let mut form = vec![
        ("grant_type", CLIENT_CREDENTIALS.to_owned()),
        ("resource", resource.to_owned()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    token_request(http, metadata, Some(client), form).await
}

/// Cross-app access for `resource`: the ID token exchanged at the identity provider for an
/// ID-JAG meant for the authorization server `metadata` describes, then that assertion
/// presented there as a JWT bearer grant by `client`; the token response.
pub(crate) async fn cross_app(
    http: &dyn Http,
    metadata: &AuthorizationMetadata,
    client: &Client<'_>,
    enterprise: &Enterprise<'_>,
    resource: &str,
    scopes: &[String],
) -> Result<Value, String> {
    let audience = metadata
        .issuer
        .as_deref()
        .ok_or("the authorization server names no issuer, which cross-app access needs")?;
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE.to_owned()),
        ("requested_token_type", ID_JAG.to_owned()),
        ("subject_token", enterprise.id_token.to_owned()),
        ("subject_token_type", ID_TOKEN.to_owned()),
        ("audience", audience.to_owned()),
        ("resource", resource.to_owned()),
        ("client_id", enterprise.client_id.to_owned()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    let idp = format!("the identity provider {}", enterprise.issuer);
    let exchanged = post(http, enterprise.token_endpoint, None, form, &idp).await?;
    let jag = match (
        exchanged["issued_token_type"].as_str(),
        exchanged["access_token"].as_str(),
    ) {
        (Some(ID_JAG), Some(jag)) if !jag.is_empty() => jag.to_owned(),
        _ => return Err(format!("{idp} gave no identity assertion grant (ID-JAG)")),
    };
    let form = vec![("grant_type", JWT_BEARER.to_owned()), ("assertion", jag)];
    token_request(http, metadata, Some(client), form).await
}

/// The token endpoint of the identity provider `issuer` (OpenID discovery, its issuer checked
/// as OpenID Connect Discovery §4.3 says).
pub(crate) async fn identity_provider(http: &dyn Http, issuer: &str) -> Result<String, String> {
    let address = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    let request = http::Request::get(&address)
        .header("accept", "application/json")
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    let idp = format!("the identity provider {issuer}");
    let answer = http
        .exchange(request)
        .await
        .map_err(|e| format!("{idp} could not be reached: {e}"))?;
    let metadata: Value = (answer.status().is_success())
        .then(|| serde_json::from_slice(answer.body()).ok())
        .flatten()
        .ok_or_else(|| format!("{idp} publishes no OpenID configuration at {address}"))?;
    if metadata["issuer"].as_str() != Some(issuer) {
        return Err(format!(
            "{idp} names another issuer in its OpenID configuration; check --idp-issuer"
        ));
    }
    metadata["token_endpoint"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{idp} names no token endpoint"))
}

/// A token request to the authorization server `metadata` describes, `client` authenticated
/// by the method its metadata lists: its private key's JWT, else HTTP Basic where that is the
/// only secret method listed (RFC 6749 §2.3.1), else the secret in the form.
async fn token_request(
    http: &dyn Http,
    metadata: &AuthorizationMetadata,
    client: Option<&Client<'_>>,
    mut form: Vec<(&'static str, String)>,
) -> Result<Value, String> {
    let methods: Vec<&str> = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let server = format!(
        "the authorization server {}",
        metadata
            .issuer
            .as_deref()
            .unwrap_or(&metadata.token_endpoint)
    );
    let mut basic = None;
    match client {
        None => {}
        Some(Client {
            id,
            proof: Proof::Key(key),
        }) => {
            let algorithms = metadata
                .additional_fields
                .get("token_endpoint_auth_signing_alg_values_supported")
                .and_then(Value::as_array);
            if algorithms.is_some_and(|a| !a.iter().any(|a| a == key.algorithm())) {
                return Err(format!(
                    "{server} does not take client assertions signed with {} (the client's \
                     private key); give a key of an algorithm it lists",
                    key.algorithm()
                ));
            }
            let audience = metadata
                .issuer
                .as_deref()
                .unwrap_or(&metadata.token_endpoint);
            form.push(("client_assertion_type", JWT_ASSERTION.to_owned()));
            form.push(("client_assertion", key.assertion(id, audience)?));
        }
        Some(Client {
            id,
            proof: Proof::Secret(secret),
        }) => {
            let only_basic = methods.contains(&"client_secret_basic")
                && !methods.contains(&"client_secret_post");
            if only_basic {
                let encode = |s: &str| {
                    url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>()
                };
                basic = Some(STANDARD.encode(format!("{}:{}", encode(id), encode(secret))));
            } else {
                form.push(("client_id", (*id).to_owned()));
                form.push(("client_secret", (*secret).to_owned()));
            }
        }
    }
    post(http, &metadata.token_endpoint, basic, form, &server).await
}

/// POSTs `form` to `endpoint` (with HTTP Basic `basic` if given): the JSON token response, or
/// `server`'s refusal in words (its `error` and `error_description`, never what was sent).
async fn post(
    http: &dyn Http,
    endpoint: &str,
    basic: Option<String>,
    form: Vec<(&'static str, String)>,
    server: &str,
) -> Result<Value, String> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let mut request = http::Request::post(endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json");
    if let Some(basic) = basic {
        let mut value = http::HeaderValue::from_str(&format!("Basic {basic}"))
            .map_err(|_| "the client's id or secret cannot be sent in a header".to_owned())?;
        value.set_sensitive(true);
        request = request.header(http::header::AUTHORIZATION, value);
    }
    let request = request.body(body.into_bytes()).map_err(|e| e.to_string())?;
    let answer = http
        .exchange(request)
        .await
        .map_err(|e| format!("{server} could not be reached: {e}"))?;
    let json: Value = serde_json::from_slice(answer.body()).unwrap_or(Value::Null);
    if !answer.status().is_success() {
        let error = json["error"].as_str().unwrap_or("no reason given");
        return Err(match json["error_description"].as_str() {
            Some(why) => format!(
                "{server} refused the sign-in (HTTP {}: {error}, {why})",
                answer.status().as_u16()
            ),
            None => format!(
                "{server} refused the sign-in (HTTP {}: {error})",
                answer.status().as_u16()
            ),
        });
    }
    match json["access_token"].as_str() {
        Some(token) if !token.is_empty() => Ok(json),
        _ => Err(format!("{server} answered without a token")),
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
