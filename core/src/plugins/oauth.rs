//! Signing in to a remote MCP server with OAuth 2.1, as the MCP authorization specification
//! says, on rmcp's `auth` module: the protected resource's metadata (RFC 9728, from the 401's
//! `WWW-Authenticate` or the well-known path), the authorization server's (RFC 8414, then OpenID
//! discovery, then the 2025-03-26 default endpoints), dynamic client registration as a public
//! client, PKCE with S256 (an authorization server that lists methods without S256 is refused),
//! the resource indicator (RFC 8707) on every token request, the scopes of the challenge, else
//! the resource's `scopes_supported`, and refreshing an access token that has expired.
//!
//! What is this product's own: every request of the sign-in goes where the server's own
//! requests may go ([`check_url`]: https to a public address for the app, this machine too for
//! a development tool), through the same guarded client (no redirects, no proxy, the address
//! guard), bounded at 1 MiB and 10 s; the person signs in in a browser the shell opens
//! ([`Browser`]); and what the sign-in yields — the client's registration and its tokens — is
//! kept in the keystore only ([`credentials_key`]), never in SQLite, an error or the audit.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
    AuthorizationRequest, AuthorizationSession, CredentialStore, OAuthClientConfig,
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRequest,
    ProtectedResourceMetadataInvalidReason, StoredCredentials, WWWAuthenticateParams,
};
use serde::{Deserialize, Serialize};
use url::Url;

use super::bounded;
use super::grants::{self, ClientKey, Proof};
use super::remote::{Servers, check_url};
use crate::registry::PluginKind;
use crate::secrets::SecretStore;

/// The keystore key of what signing in to remote server `name` yielded.
pub fn credentials_key(name: &str) -> String {
    format!("mcp.{name}.oauth")
}

/// seed 001's bound of a request to the network, for each request of the sign-in.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The name the app registers under with an authorization server.
const CLIENT_NAME: &str = "PKU Harness";

/// The page the person signs in on, as the shell is to show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignInPage {
    /// The MCP server signed in to.
    pub server: String,
    /// The host of the authorization server whose page it is (where the person types their
    /// password; the shell says it plainly).
    pub authorization_server: String,
    /// The authorization page to open.
    pub url: String,
    /// What the app asks to be allowed (the scopes), as the authorization server names them.
    pub scopes: Vec<String>,
}

/// The shell's part of a sign-in: it opens the authorization page in the system's browser and
/// hands back the address the authorization server sent the person back to.
#[async_trait]
pub trait Browser: Send + Sync {
    /// Where the authorization server is to send the person back (a CLI: a port on this
    /// machine; a phone: the app's own link).
    fn redirect_uri(&self) -> String;

    /// Shows `page`; the address the person came back to, with its `code` and `state`, or why
    /// the sign-in did not finish, in words.
    async fn sign_in(&self, page: &SignInPage) -> Result<String, String>;

    /// The https address of the app's client ID metadata document (the MCP authorization
    /// specification's second way to register: the document names the app and lists this
    /// browser's redirect URI), used as the client id where an authorization server says it
    /// reads such documents; none where the shell publishes none.
    fn client_metadata_url(&self) -> Option<String> {
        None
    }
}

/// A client an authorization server issued for the app beforehand (or registered it as): its
/// id, and its secret when it is a confidential client (OAuth 2.1 §2.4: sent on every token
/// request, by `client_secret_post` or `client_secret_basic` as the authorization server's
/// metadata says). The secret never reaches a log, an error or the model.
#[derive(Clone, PartialEq, Eq)]
pub struct IssuedClient {
    pub id: String,
    pub secret: Option<String>,
}

impl IssuedClient {
    /// A public client: an id and no secret.
    pub fn public(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            secret: None,
        }
    }

    /// A confidential client: an id and its secret.
    pub fn confidential(id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            secret: Some(secret.into()),
        }
    }

    /// rmcp's configuration of this client, sending its secret when it has one.
    fn config(&self, redirect_uri: &str) -> OAuthClientConfig {
        let config = OAuthClientConfig::new(&self.id, redirect_uri);
        match &self.secret {
            Some(secret) => config.with_client_secret(secret),
            None => config,
        }
    }
}

impl std::fmt::Debug for IssuedClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedClient")
            .field("id", &self.id)
            .field("secret", &self.secret.as_ref().map(|_| "[kept]"))
            .finish()
    }
}

/// What else the app signs in with, beside a client issued beforehand, where no person signs in
/// at a browser ([`grants`]): the client's private key, for `private_key_jwt`, and an
/// enterprise sign-in, for cross-app access. Kept in the keystore with the sign-in, so that it
/// is renewed unattended; never in a log, an error or the model.
#[derive(Clone, Default)]
pub struct Credentials {
    /// The issued client's private key, PKCS#8 PEM.
    pub private_key: Option<String>,
    /// The enterprise sign-in whose ID token cross-app access exchanges.
    pub enterprise: Option<EnterpriseSignIn>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("private_key", &self.private_key.as_ref().map(|_| "[kept]"))
            .field("enterprise", &self.enterprise)
            .finish()
    }
}

/// The student's sign-in at their enterprise identity provider (cross-app access, SEP-990):
/// its issuer, the app's client id there, and the ID token it issued.
#[derive(Clone)]
pub struct EnterpriseSignIn {
    pub issuer: String,
    pub client_id: String,
    pub id_token: String,
}

impl std::fmt::Debug for EnterpriseSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterpriseSignIn")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("id_token", &"[kept]")
            .finish()
    }
}

/// How a sign-in no person made is made again when its token expires or is refused: the
/// client credentials grant, or cross-app access with the kept ID token.
#[derive(Clone, Serialize, Deserialize)]
#[serde(tag = "grant", rename_all = "snake_case")]
enum Renewal {
    ClientCredentials,
    CrossApp {
        idp_issuer: String,
        idp_token_endpoint: String,
        idp_client_id: String,
        id_token: String,
    },
}

/// What the keystore holds for a server signed in to: the authorization server's metadata (so
/// a refresh after a restart goes to the same token endpoint without discovering again),
/// rmcp's credentials (the client id and the token response) and the client's secret, for a
/// confidential client (issued beforehand, or given at its dynamic registration).
#[derive(Serialize, Deserialize)]
struct Kept {
    metadata: AuthorizationMetadata,
    credentials: Option<StoredCredentials>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    /// The client's private key, for a client that signs its assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_key: Option<String>,
    /// How a sign-in no person made is made again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    renew: Option<Renewal>,
}

impl Kept {
    /// The client the sign-in was made as, if it was made.
    fn client(&self) -> Option<IssuedClient> {
        Some(IssuedClient {
            id: self.credentials.as_ref()?.client_id.clone(),
            secret: self.client_secret.clone(),
        })
    }
}

/// rmcp's credential store over the keystore: one entry per server.
struct KeystoreCredentials {
    secrets: Arc<dyn SecretStore>,
    key: String,
    metadata: AuthorizationMetadata,
    client_secret: Option<String>,
}

impl KeystoreCredentials {
    fn read(&self) -> Result<Option<Kept>, AuthError> {
        let Some(text) = self.secrets.get(&self.key).map_err(store_error)? else {
            return Ok(None);
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|_| AuthError::CredentialStoreError(format!("{} is unreadable", self.key)))
    }
}

fn store_error(e: crate::secrets::SecretError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait]
impl CredentialStore for KeystoreCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.read()?.and_then(|kept| kept.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        // What rmcp does not know of stays as the sign-in kept it.
        let was = self.read().ok().flatten();
        let kept = Kept {
            metadata: self.metadata.clone(),
            credentials: Some(credentials),
            client_secret: self.client_secret.clone(),
            client_key: was.as_ref().and_then(|w| w.client_key.clone()),
            renew: was.and_then(|w| w.renew),
        };
        let text = serde_json::to_string(&kept)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        self.secrets.set(&self.key, &text).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.secrets.delete(&self.key).map_err(store_error)
    }
}

/// Every request of a sign-in: to where a server may be ([`check_url`]), through the guarded
/// client of remote plugins (or, for a development tool, the loopback one), never following a
/// redirect, each answer at most 1 MiB.
struct GuardedHttp {
    servers: Servers,
    public: reqwest::Client,
    loopback: Option<reqwest::Client>,
}

impl GuardedHttp {
    fn new(servers: Servers) -> Result<Self, String> {
        let failed = |e: reqwest::Error| format!("the HTTP client could not start: {e}");
        Ok(Self {
            servers,
            public: crate::gates::guarded_client(PluginKind::Remote).map_err(failed)?,
            loopback: match servers {
                Servers::AlsoLoopback => Some(crate::gates::loopback_client().map_err(failed)?),
                Servers::PublicOnly => None,
            },
        })
    }

    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpClientError> {
        let (parts, body) = request.into_parts();
        let (url, loopback) = check_url(&parts.uri.to_string(), self.servers)?;
        let client = match (&self.loopback, loopback) {
            (Some(client), true) => client,
            _ => &self.public,
        };
        let sending = client
            .request(parts.method, url.as_str())
            .headers(parts.headers)
            .body(body)
            .send();
        let response = tokio::time::timeout(REQUEST_TIMEOUT, sending)
            .await
            .map_err(|_| format!("{url} did not answer within 10 s"))?
            .map_err(|e| {
                crate::gates::address_refusal(&e)
                    .unwrap_or_else(|| crate::gates::error_chain(&e).to_string())
            })?;
        let mut answer = http::Response::builder().status(response.status());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        let body = bounded::read(response).await?;
        Ok(answer.body(body)?)
    }
}

#[async_trait]
impl grants::Http for GuardedHttp {
    async fn exchange(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Vec<u8>>, String> {
        self.send(request).await.map_err(|e| e.to_string())
    }
}

impl OAuthHttpClient for GuardedHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(self.send(request.request))
    }
}

/// Signs in to the MCP server at `url`, which refused the app with `challenge` (its 401's
/// `WWW-Authenticate`, if it sent one): discovers its authorization server, registers the app
/// (the client registration order of the MCP authorization specification: a `client` id the
/// authorization server issued beforehand, else dynamic registration), has the person sign in
/// through `browser` and keeps what that yields under `key` in the keystore. Nothing is kept
/// when any step fails.
pub async fn sign_in(
    url: &str,
    challenge: Option<&str>,
    servers: Servers,
    secrets: Arc<dyn SecretStore>,
    key: &str,
    browser: &dyn Browser,
    client: Option<&IssuedClient>,
) -> Result<(), String> {
    let credentials = Credentials::default();
    sign_in_with(
        url,
        challenge,
        servers,
        secrets,
        key,
        browser,
        client,
        &credentials,
    )
    .await
}

/// [`sign_in`] with `credentials` beside the issued client: with an enterprise sign-in, or at
/// an authorization server that issues tokens only to clients themselves, the app signs in as
/// the client with no page to show ([`grants`]).
#[allow(clippy::too_many_arguments)]
pub async fn sign_in_with(
    url: &str,
    challenge: Option<&str>,
    servers: Servers,
    secrets: Arc<dyn SecretStore>,
    key: &str,
    browser: &dyn Browser,
    client: Option<&IssuedClient>,
    credentials: &Credentials,
) -> Result<(), String> {
    let client = client.map(|client| Registered {
        client: client.clone(),
        at: None,
        scopes: Vec::new(),
    });
    authorize(
        url,
        challenge,
        servers,
        secrets,
        key,
        browser,
        client,
        credentials,
    )
    .await
}

/// The client to sign in as, without registering: `at` the authorization server it was
/// registered at (none: issued for whichever the server names), and the scopes to ask for
/// (none: chosen as [`authorize`] says).
struct Registered {
    client: IssuedClient,
    at: Option<String>,
    scopes: Vec<String>,
}

/// Which authorization server `metadata` describes: its issuer (RFC 8414 §2), else, for the
/// 2025-03-26 default endpoints, its authorization endpoint.
fn authorization_server(metadata: &AuthorizationMetadata) -> String {
    metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.authorization_endpoint.clone())
}

/// Signs in again to a server that answered a call 403 `insufficient_scope` (the MCP
/// authorization specification's step-up): the client registered at the first sign-in, the
/// scopes granted then and the ones `challenge` asks for. The sign-in kept stays as it is
/// until the new one is done.
pub(crate) async fn step_up(
    url: &str,
    challenge: &str,
    servers: Servers,
    secrets: Arc<dyn SecretStore>,
    key: &str,
    browser: &dyn Browser,
) -> Result<(), String> {
    let (server, _) = check_url(url, servers)?;
    let store = KeystoreCredentials {
        secrets: secrets.clone(),
        key: key.to_owned(),
        metadata: AuthorizationMetadata::default(),
        client_secret: None,
    };
    let kept = store.read().map_err(|e| words(&server, e))?;
    let Some((client, kept)) = kept.and_then(|kept| Some((kept.client()?, kept))) else {
        return sign_in(url, Some(challenge), servers, secrets, key, browser, None).await;
    };
    let asked = WWWAuthenticateParams::parse(challenge, &server).scope;
    let granted = kept
        .credentials
        .map(|c| c.granted_scopes)
        .unwrap_or_default();
    let mut scopes = granted;
    for scope in asked.as_deref().unwrap_or_default().split_whitespace() {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    // A sign-in no person made is made again as it was: with the kept key and ID token.
    let credentials = Credentials {
        private_key: kept.client_key.clone(),
        enterprise: match &kept.renew {
            Some(Renewal::CrossApp {
                idp_issuer,
                idp_client_id,
                id_token,
                ..
            }) => Some(EnterpriseSignIn {
                issuer: idp_issuer.clone(),
                client_id: idp_client_id.clone(),
                id_token: id_token.clone(),
            }),
            _ => None,
        },
    };
    let again = Registered {
        client,
        at: Some(authorization_server(&kept.metadata)),
        scopes,
    };
    authorize(
        url,
        Some(challenge),
        servers,
        secrets,
        key,
        browser,
        Some(again),
        &credentials,
    )
    .await
}

/// The authorization: `client` is a client issued beforehand (or, a step-up, the one
/// registered at the first sign-in) with the scopes to ask for (none: chosen as below); without
/// one the client registers and the scopes are the challenge's, else the resource's. A client
/// registered at another authorization server than the one the server names now (it moved,
/// SEP-2352) is never used there: the app registers at the new one. With an enterprise sign-in
/// in `credentials`, or at an authorization server that issues tokens only to clients, the
/// issued client signs in by itself ([`unattended`]).
#[allow(clippy::too_many_arguments)]
async fn authorize(
    url: &str,
    challenge: Option<&str>,
    servers: Servers,
    secrets: Arc<dyn SecretStore>,
    key: &str,
    browser: &dyn Browser,
    client: Option<Registered>,
    credentials: &Credentials,
) -> Result<(), String> {
    let (server, _) = check_url(url, servers)?;
    let failed = |e: AuthError| words(&server, e);
    let http = Arc::new(GuardedHttp::new(servers)?);
    let mut manager =
        AuthorizationManager::new_with_oauth_http_client(server.as_str(), http.clone())
            .await
            .map_err(failed)?;
    let resolution = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(failed)?;
    let metadata = resolution.metadata;
    if credentials.enterprise.is_some() || grants::issues_to_clients(&metadata) {
        let Some(Registered { client, scopes, .. }) = client else {
            return Err(format!(
                "the authorization server of {server} signs in only clients it issued \
                 beforehand; add the server with the client id it issued for the app"
            ));
        };
        manager.set_metadata(metadata.clone());
        // A step-up's scopes (those granted and those asked for), else the challenge's or the
        // resource's.
        let scopes = match scopes.is_empty() {
            true => manager.select_initial_scopes(&[]).await,
            false => scopes,
        };
        let renew = match &credentials.enterprise {
            None => Renewal::ClientCredentials,
            Some(enterprise) => Renewal::CrossApp {
                idp_token_endpoint: grants::identity_provider(http.as_ref(), &enterprise.issuer)
                    .await?,
                idp_issuer: enterprise.issuer.clone(),
                idp_client_id: enterprise.client_id.clone(),
                id_token: enterprise.id_token.clone(),
            },
        };
        let kept = Kept {
            metadata,
            credentials: None,
            client_secret: client.secret.clone(),
            client_key: credentials.private_key.clone(),
            renew: Some(renew),
        };
        return unattended(
            &server,
            http.as_ref(),
            kept,
            &client.id,
            &scopes,
            &secrets,
            key,
        )
        .await;
    }
    if credentials.private_key.is_some() {
        return Err(format!(
            "the authorization server of {server} signs people in at its page, where the \
             client's private key is not used; add the server without it"
        ));
    }
    // The MCP authorization specification: a client must refuse an authorization server whose
    // metadata does not list S256 among its PKCE methods (rmcp lets an absent list pass). A
    // server that publishes no metadata at all gets the 2025-03-26 revision's default
    // endpoints, where PKCE (S256) is simply required of it.
    let s256 = metadata
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|methods| methods.iter().any(|m| m == "S256"));
    let published = resolution.source != AuthorizationMetadataSource::LegacyEndpointFallback;
    if published && !s256 {
        return Err(failed(AuthError::PkceUnsupported));
    }
    // Registration, in the specification's order: a client issued beforehand, else the app's
    // client ID metadata document where the authorization server reads them, else dynamic
    // registration; an authorization server with none of them is the student's to settle.
    let reads_documents = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        == Some(&serde_json::Value::Bool(true));
    let client = client.filter(|registered| {
        registered
            .at
            .as_ref()
            .is_none_or(|at| *at == authorization_server(&metadata))
    });
    let document = browser.client_metadata_url().filter(|_| reads_documents);
    if client.is_none() && document.is_none() && metadata.registration_endpoint.is_none() {
        return Err(format!(
            "the authorization server of {server} registers no app by itself; add the server \
             with the client id its authorization server issued for the app"
        ));
    }
    manager.set_metadata(metadata.clone());
    let redirect_uri = browser.redirect_uri();
    // Dynamic registration is the app's own step (rather than rmcp's inside the session) so
    // that a secret the authorization server gives the app is kept with the sign-in.
    let client = match (client, &document) {
        (None, None) => Some(Registered {
            client: register(&mut manager, &redirect_uri)
                .await
                .map_err(failed)?,
            at: None,
            scopes: Vec::new(),
        }),
        (client, _) => client,
    };
    // The tokens arrive into this store only when the code is exchanged, the last step.
    manager.set_credential_store(KeystoreCredentials {
        secrets: secrets.clone(),
        key: key.to_owned(),
        metadata: metadata.clone(),
        client_secret: client.as_ref().and_then(|r| r.client.secret.clone()),
    });
    // Scopes: the challenge's, else the protected resource's `scopes_supported`.
    let mut request = AuthorizationRequest::new(redirect_uri)
        .with_client_name(CLIENT_NAME)
        .with_initial_scope_selection();
    if let Some(Registered { client, scopes, .. }) = client {
        request = request
            .with_preregistered_client(client.id)
            .with_scopes(scopes);
        if let Some(secret) = client.secret {
            request = request.with_client_secret(secret);
        }
    }
    if let Some(document) = document {
        request = request.with_client_metadata_url(document);
    }
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| failed(e))?;
    let page = Url::parse(session.get_authorization_url())
        .map_err(|e| format!("the authorization server gave no usable page ({e})"))?;
    let scopes = page
        .query_pairs()
        .find(|(name, _)| name == "scope")
        .map(|(_, scope)| scope.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let back = browser
        .sign_in(&SignInPage {
            server: server.to_string(),
            authorization_server: page.host_str().unwrap_or_default().to_owned(),
            url: page.to_string(),
            scopes,
        })
        .await
        .map_err(|why| format!("the sign-in to {server} was not finished: {why}"))?;
    if let Some(refused) = refusal(&back) {
        return Err(format!("the sign-in to {server} did not finish: {refused}"));
    }
    // The exchange saves the tokens last: a failure here has written nothing.
    session.handle_callback_url(&back).await.map_err(failed)?;
    Ok(())
}

/// Signs in as client `client` with no person at a browser, as `kept.renew` says ([`grants`]),
/// for `scopes`, and keeps the tokens with `kept` under `key`; nothing is kept when it fails.
async fn unattended(
    server: &Url,
    http: &dyn grants::Http,
    mut kept: Kept,
    client: &str,
    scopes: &[String],
    secrets: &Arc<dyn SecretStore>,
    key: &str,
) -> Result<(), String> {
    let private_key = kept
        .client_key
        .as_deref()
        .map(ClientKey::parse)
        .transpose()?;
    let proof = match (&private_key, &kept.client_secret) {
        (Some(private_key), _) => Proof::Key(private_key),
        (None, Some(secret)) => Proof::Secret(secret),
        (None, None) => {
            return Err(format!(
                "the authorization server of {server} signs in a client by itself only with \
                 the client's secret or private key; give one of them with the client id"
            ));
        }
    };
    let proving = grants::Client { id: client, proof };
    let resource = server.as_str();
    let response = match kept.renew.as_ref() {
        Some(Renewal::CrossApp {
            idp_issuer,
            idp_token_endpoint,
            idp_client_id,
            id_token,
        }) => {
            let enterprise = grants::Enterprise {
                issuer: idp_issuer,
                token_endpoint: idp_token_endpoint,
                client_id: idp_client_id,
                id_token,
            };
            grants::cross_app(
                http,
                &kept.metadata,
                &proving,
                &enterprise,
                resource,
                scopes,
            )
            .await?
        }
        _ => grants::client_credentials(http, &kept.metadata, &proving, resource, scopes).await?,
    };
    let granted: Vec<String> = match response["scope"].as_str() {
        Some(scope) => scope.split_whitespace().map(str::to_owned).collect(),
        None => scopes.to_vec(),
    };
    let received = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let credentials = serde_json::from_value(serde_json::json!({
        "client_id": client,
        "token_response": response,
        "granted_scopes": granted,
        "token_received_at": received,
        "issuer": kept.metadata.issuer,
    }))
    .map_err(|_| format!("the authorization server of {server} answered with no usable token"))?;
    kept.credentials = Some(credentials);
    let text = serde_json::to_string(&kept).map_err(|e| e.to_string())?;
    secrets
        .set(key, &text)
        .map_err(|e| format!("the sign-in to {server} could not be kept in the keystore: {e}"))
}

/// Registers the app with the authorization server whose metadata `manager` holds (RFC 7591),
/// for the scopes the sign-in will ask for; the client it issued, with the secret it gave a
/// confidential one.
async fn register(
    manager: &mut AuthorizationManager,
    redirect_uri: &str,
) -> Result<IssuedClient, AuthError> {
    let scopes = manager.select_initial_scopes(&[]).await;
    let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let config = manager
        .register_client(CLIENT_NAME, redirect_uri, &scopes)
        .await
        .map_err(|e| AuthError::RegistrationFailed(format!("Dynamic registration failed: {e}")))?;
    Ok(IssuedClient {
        id: config.client_id,
        secret: config.client_secret,
    })
}

/// Whether the server at `url` now names another authorization server (read from its protected
/// resource metadata, as its 401's `challenge` points to it) than the one the sign-in kept under
/// `key` was made at (SEP-2352): that in words. Metadata that cannot be read now names no other
/// server.
pub(crate) async fn moved(
    url: &str,
    challenge: Option<&str>,
    servers: Servers,
    secrets: &Arc<dyn SecretStore>,
    key: &str,
) -> Result<Option<String>, String> {
    let (url, _) = check_url(url, servers)?;
    let url = &url;
    let store = KeystoreCredentials {
        secrets: secrets.clone(),
        key: key.to_owned(),
        metadata: AuthorizationMetadata::default(),
        client_secret: None,
    };
    let Some(kept) = store.read().map_err(|e| words(url, e))? else {
        return Ok(None);
    };
    let http = Arc::new(GuardedHttp::new(servers)?);
    let manager = AuthorizationManager::new_with_oauth_http_client(url.as_str(), http)
        .await
        .map_err(|e| words(url, e))?;
    let Ok(now) = manager.resolve_metadata_from_challenge(challenge).await else {
        return Ok(None);
    };
    let (was, now) = (
        authorization_server(&kept.metadata),
        authorization_server(&now.metadata),
    );
    Ok((was != now).then(|| {
        format!(
            "the server at {url} now signs in at another authorization server ({now}); the \
             sign-in at {was} has ended: sign in to the server again"
        )
    }))
}

/// The authorization server's refusal in the address it sent the person back to (RFC 6749
/// §4.1.2.1: `error`, and `error_description` if it gave one).
fn refusal(back: &str) -> Option<String> {
    let back = Url::parse(back).ok()?;
    let field = |name: &str| {
        back.query_pairs()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
    };
    let error = field("error")?;
    Some(match field("error_description") {
        Some(description) => format!("{error} ({description})"),
        None => error,
    })
}

/// The access token of a server signed in to, refreshed when it has expired; built from the
/// keystore's entry on first use and kept for the next connects.
pub(crate) struct Access {
    url: Url,
    servers: Servers,
    secrets: Arc<dyn SecretStore>,
    key: String,
    manager: tokio::sync::Mutex<Option<AuthorizationManager>>,
}

impl Access {
    pub(crate) fn new(
        url: Url,
        servers: Servers,
        secrets: Arc<dyn SecretStore>,
        key: String,
    ) -> Self {
        Self {
            url,
            servers,
            secrets,
            key,
            manager: tokio::sync::Mutex::new(None),
        }
    }

    /// Whether the keystore holds a sign-in to this server.
    pub(crate) fn signed_in(&self) -> Result<bool, String> {
        self.secrets
            .get(&self.key)
            .map(|kept| kept.is_some())
            .map_err(|e| format!("could not read the server's sign-in {}: {e}", self.key))
    }

    /// The access token to send, refreshed first when it has expired.
    pub(crate) async fn token(&self) -> Result<String, String> {
        let mut slot = self.held().await?;
        let manager = slot.as_ref().expect("held() fills it");
        match manager.get_access_token().await {
            Ok(token) => Ok(token),
            // A sign-in no person made has no refresh token: it is made again.
            Err(AuthError::AuthorizationRequired) if self.renewable()? => {
                self.renew(&mut slot).await?;
                let manager = slot.as_ref().expect("renew() fills it");
                manager
                    .get_access_token()
                    .await
                    .map_err(|e| words(&self.url, e))
            }
            Err(AuthError::AuthorizationRequired) => Err(self.ended()),
            Err(e) => Err(words(&self.url, e)),
        }
    }

    /// Whether the kept sign-in is one no person made, which is made again rather than
    /// refreshed.
    fn renewable(&self) -> Result<bool, String> {
        let kept = self
            .store(AuthorizationMetadata::default(), None)
            .read()
            .map_err(|e| words(&self.url, e))?;
        Ok(kept.is_some_and(|kept| kept.renew.is_some()))
    }

    /// Makes the kept sign-in no person made again (the client credentials grant, or cross-app
    /// access with the kept ID token), and a manager on it in `slot`. A refusal ends it: an
    /// ID token expired, a secret or key withdrawn.
    async fn renew(&self, slot: &mut Option<AuthorizationManager>) -> Result<(), String> {
        let kept = self
            .store(AuthorizationMetadata::default(), None)
            .read()
            .map_err(|e| words(&self.url, e))?
            .ok_or_else(|| self.ended())?;
        let client = kept.client().ok_or_else(|| self.ended())?;
        let scopes = kept
            .credentials
            .as_ref()
            .map(|c| c.granted_scopes.clone())
            .unwrap_or_default();
        let http = GuardedHttp::new(self.servers)?;
        unattended(
            &self.url,
            &http,
            kept,
            &client.id,
            &scopes,
            &self.secrets,
            &self.key,
        )
        .await
        .map_err(|why| format!("{}: {why}", self.ended()))?;
        *slot = Some(self.manager().await?);
        Ok(())
    }

    /// A new access token, whether or not the one held has expired: the server refused it with
    /// `challenge`. First the server's protected resource metadata is read again (SEP-2352):
    /// when it names another authorization server than the one signed in at, nothing of the
    /// old sign-in goes there, nor is the old one asked: the sign-in has ended.
    pub(crate) async fn refresh(&self, challenge: Option<&str>) -> Result<(), String> {
        if let Some(moved) = self.moved(challenge).await? {
            return Err(moved);
        }
        let mut slot = self.held().await?;
        if self.renewable()? {
            return self.renew(&mut slot).await;
        }
        let manager = slot.as_ref().expect("held() fills it");
        match manager.refresh_token().await {
            Ok(_) => Ok(()),
            Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => {
                Err(self.ended())
            }
            Err(e) => Err(words(&self.url, e)),
        }
    }

    /// The server answered a call 403 `insufficient_scope` with `challenge`: the student signs
    /// in again through `browser` for the scopes it asks for ([`step_up`]).
    pub(crate) async fn step_up(
        &self,
        challenge: &str,
        browser: &dyn Browser,
    ) -> Result<(), String> {
        let secrets = self.secrets.clone();
        step_up(
            self.url.as_str(),
            challenge,
            self.servers,
            secrets,
            &self.key,
            browser,
        )
        .await?;
        // The manager held the old tokens' client and scopes: the next connect builds anew.
        self.manager.lock().await.take();
        Ok(())
    }

    /// The server answered 401 with `challenge` and the kept sign-in could not be refreshed:
    /// the student signs in again through `browser`, with the client registered at the first
    /// sign-in when one is kept ([`step_up`] with the challenge's scopes), else anew.
    pub(crate) async fn sign_in_again(
        &self,
        challenge: Option<&str>,
        browser: &dyn Browser,
    ) -> Result<(), String> {
        let secrets = self.secrets.clone();
        match challenge {
            Some(challenge) => {
                step_up(
                    self.url.as_str(),
                    challenge,
                    self.servers,
                    secrets,
                    &self.key,
                    browser,
                )
                .await?
            }
            None => {
                sign_in(
                    self.url.as_str(),
                    None,
                    self.servers,
                    secrets,
                    &self.key,
                    browser,
                    None,
                )
                .await?
            }
        }
        // The manager held the old tokens: the next connect builds anew.
        self.manager.lock().await.take();
        Ok(())
    }

    /// Whether the server now names another authorization server than the kept sign-in's
    /// ([`moved`]): that in words.
    async fn moved(&self, challenge: Option<&str>) -> Result<Option<String>, String> {
        moved(
            self.url.as_str(),
            challenge,
            self.servers,
            &self.secrets,
            &self.key,
        )
        .await
    }

    /// The keystore entry of this server's sign-in, as rmcp's credential store.
    fn store(
        &self,
        metadata: AuthorizationMetadata,
        client_secret: Option<String>,
    ) -> KeystoreCredentials {
        KeystoreCredentials {
            secrets: self.secrets.clone(),
            key: self.key.clone(),
            metadata,
            client_secret,
        }
    }

    /// The manager, built on first use; held locked, so refreshes happen one at a time.
    async fn held(
        &self,
    ) -> Result<tokio::sync::MutexGuard<'_, Option<AuthorizationManager>>, String> {
        let mut slot = self.manager.lock().await;
        if slot.is_none() {
            *slot = Some(self.manager().await?);
        }
        Ok(slot)
    }

    /// A manager with the kept metadata and client, reading and saving the kept credentials.
    async fn manager(&self) -> Result<AuthorizationManager, String> {
        let kept = self
            .store(AuthorizationMetadata::default(), None)
            .read()
            .map_err(|e| words(&self.url, e))?
            .ok_or_else(|| self.ended())?;
        let client = kept.client().ok_or_else(|| self.ended())?;
        let http = Arc::new(GuardedHttp::new(self.servers)?);
        let mut manager = AuthorizationManager::new_with_oauth_http_client(self.url.as_str(), http)
            .await
            .map_err(|e| words(&self.url, e))?;
        manager.set_metadata(kept.metadata.clone());
        manager.set_credential_store(self.store(kept.metadata, client.secret.clone()));
        // A confidential client's refresh carries its secret, as its token requests did.
        manager
            .configure_client(client.config(self.url.as_str()))
            .map_err(|e| words(&self.url, e))?;
        Ok(manager)
    }

    fn ended(&self) -> String {
        format!(
            "the sign-in to the server at {} has ended (its authorization server no longer \
             accepts it); sign in to the server again",
            self.url
        )
    }
}

/// A sign-in's failure in words for a person, naming the server; never a token.
fn words(server: &Url, error: AuthError) -> String {
    match error {
        AuthError::PkceUnsupported => format!(
            "the authorization server of {server} does not offer PKCE with S256, which the app \
             requires to sign in safely; the server cannot be signed in to"
        ),
        AuthError::RegistrationFailed(why) => format!(
            "the authorization server of {server} did not register the app ({why}); add the \
             server with the client id its authorization server issued for the app"
        ),
        AuthError::CredentialStoreError(why) => {
            format!("the sign-in to {server} could not be kept in the keystore: {why}")
        }
        // RFC 9728: metadata that describes another resource would send the student to sign
        // in for something else, and hand it a token meant for this server.
        AuthError::ProtectedResourceMetadataInvalid { url, reason } => match *reason {
            ProtectedResourceMetadataInvalidReason::ResourceMismatch { permitted, .. } => format!(
                "{server} says its sign-in is for another resource ({permitted}); the app signs in \
                 only for the server it adds, so this server cannot be signed in to"
            ),
            other => {
                format!("signing in to {server} failed: its metadata at {url} is unusable: {other}")
            }
        },
        e => format!("signing in to {server} failed: {e}"),
    }
}
