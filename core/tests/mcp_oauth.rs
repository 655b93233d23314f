//! Signing in to a remote MCP server with OAuth 2.1, against the loopback test server's own
//! authorization server (`common::mcp_server`, `McpServer::signing_in`): discovery from the
//! 401's challenge or the well-known paths, dynamic registration, PKCE, the resource indicator,
//! refresh, and where the sign-in is kept. The person's browser is played by [`Person`], which
//! opens the authorization page and follows the authorization server's redirect back, as a
//! person who signs in does (the test server signs them in at once).

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::Denies;
use common::mcp_server::{McpServer, OAuthConfig, secret_of, tool};
use harness_core::invoke::{Call, Outcome};
use harness_core::plugins::oauth::{
    Browser, Credentials, EnterpriseSignIn, IssuedClient, SignInPage, credentials_key,
};
use harness_core::plugins::remote::token_key;
use harness_core::policy::Actor;
use harness_core::secrets::{MemorySecrets, SecretStore};
use harness_core::{Engine, Options};
use serde_json::json;

/// Where the test's authorization server sends the person back (never listened on: [`Person`]
/// hands the address to the app itself).
const BACK: &str = "http://127.0.0.1:9/callback";

/// The person signing in: each page they were shown, and their browser.
#[derive(Default)]
struct Person {
    pages: Mutex<Vec<SignInPage>>,
}

#[async_trait]
impl Browser for Person {
    fn redirect_uri(&self) -> String {
        BACK.to_owned()
    }

    async fn sign_in(&self, page: &SignInPage) -> Result<String, String> {
        self.pages.lock().unwrap().push(page.clone());
        let _ = rustls::crypto::ring::default_provider().install_default();
        let browser = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let answer = browser
            .get(&page.url)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        match answer.headers().get("location") {
            Some(back) => Ok(back.to_str().unwrap().to_owned()),
            None => Err(format!("the page answered HTTP {}", answer.status())),
        }
    }
}

impl Person {
    fn pages(&self) -> Vec<SignInPage> {
        self.pages.lock().unwrap().clone()
    }
}

/// An engine as the CLI opens it (servers on this machine accepted), its keystore `secrets`.
fn engine(dir: &std::path::Path, secrets: Arc<MemorySecrets>) -> Engine {
    let mut options = Options::new(Arc::new(Denies::default()));
    options.development_servers = true;
    options.secrets = secrets;
    let engine = Engine::open(dir, options).unwrap();
    engine.accept_terms().unwrap();
    engine
}

/// A data directory of its own, its keystore, and an engine on them (see [`engine`]).
fn fresh() -> (tempfile::TempDir, Arc<MemorySecrets>, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(MemorySecrets::default());
    let engine = engine(dir.path(), secrets.clone());
    (dir, secrets, engine)
}

async fn echo(engine: &Engine, plugin: &str, message: &str) -> Outcome {
    engine
        .invoke(Call {
            tool: format!("{plugin}.echo"),
            actor: Actor::User,
            input: json!({"message": message}),
            conversation: None,
        })
        .await
        .outcome
}

fn text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Ran { result, .. } => result["content"][0].as_str().unwrap_or_default().into(),
        other => panic!("the call did not run: {other:?}"),
    }
}

fn field<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn a_server_that_asks_for_a_sign_in_is_added_once_the_student_signs_in_and_the_sign_in_stays_in_the_keystore()
 {
    let server = McpServer::signing_in(vec![tool("echo", true)], OAuthConfig::default()).await;
    let url = server.url();
    let base = url.trim_end_matches("/mcp").to_owned();
    let (dir, secrets, engine) = fresh();
    let person = Person::default();

    let id = engine
        .add_remote_signing_in(&url, "notes", &person, None)
        .await
        .unwrap();
    assert_eq!(id, "mcp-notes");

    // One page, on the authorization server the resource's metadata named, asking for the
    // scope the 401 asked for.
    let pages = person.pages();
    assert_eq!(pages.len(), 1);
    assert_eq!(pages[0].server, url);
    assert_eq!(pages[0].authorization_server, "127.0.0.1");
    assert_eq!(pages[0].scopes, vec!["tools:read".to_owned()]);
    assert!(
        pages[0].url.starts_with(&format!("{base}/authorize?")),
        "{}",
        pages[0].url
    );

    // Registered as a public client of the app, sent back to the shell's redirect URI.
    let registrations = server.registrations();
    assert_eq!(registrations.len(), 1);
    assert_eq!(registrations[0]["client_name"], "PKU Harness");
    assert_eq!(registrations[0]["redirect_uris"], json!([BACK]));
    assert_eq!(registrations[0]["token_endpoint_auth_method"], "none");

    // The authorization request: PKCE S256 and the resource indicator (RFC 8707).
    let authorization = &server.authorizations()[0];
    assert_eq!(field(authorization, "code_challenge_method"), Some("S256"));
    assert_eq!(field(authorization, "resource"), Some(url.as_str()));
    assert_eq!(field(authorization, "client_id"), Some("client-1"));
    assert_eq!(field(authorization, "redirect_uri"), Some(BACK));
    // The code exchange the test server checked against the challenge.
    let exchange = &server.token_requests()[0];
    assert_eq!(field(exchange, "grant_type"), Some("authorization_code"));
    assert_eq!(field(exchange, "resource"), Some(url.as_str()));
    assert_eq!(server.token_requests().len(), 1);

    // The plugin's calls carry the access token.
    assert_eq!(text(&echo(&engine, "mcp-notes", "hi").await), "echo: hi");
    let access = server.access_tokens();
    assert_eq!(access.len(), 1);
    let bearer = format!("Bearer {}", access[0]);
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.body["method"] == "tools/call"
                && r.header("authorization") == Some(bearer.as_str())),
        "the call carried the sign-in's access token"
    );

    // The sign-in is in the keystore only: no bearer token kept, nothing in the audit, the
    // plugin's view, or any file of the data directory.
    let kept = secrets.get(&credentials_key("notes")).unwrap().unwrap();
    assert!(kept.contains(&access[0]), "{kept}");
    assert_eq!(secrets.get(&token_key("notes")).unwrap(), None);
    let refresh = access[0].replace("access-", "refresh-");
    let audit = format!("{:?}", engine.audit_log().unwrap());
    assert!(
        !audit.contains(&access[0]) && !audit.contains(&refresh),
        "{audit}"
    );
    assert!(!format!("{:?}", engine.plugins()).contains(&access[0]));

    // Removing the plugin removes its sign-in.
    engine.remove_plugin("mcp-notes").unwrap();
    assert_eq!(secrets.get(&credentials_key("notes")).unwrap(), None);
    drop(engine);
    for (path, bytes) in common::files(dir.path()) {
        for secret in [access[0].as_str(), refresh.as_str()] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} is in {}",
                path.display()
            );
        }
    }
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_without_the_browser_and_a_sign_in_that_ended_says_so()
{
    // Each access token has expired as it is issued: every connect refreshes it first.
    let config = OAuthConfig {
        expires_in: 0,
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let (_dir, secrets, engine) = fresh();
    let person = Person::default();
    engine
        .add_remote_signing_in(&server.url(), "notes", &person, None)
        .await
        .unwrap();
    assert_eq!(text(&echo(&engine, "mcp-notes", "one").await), "echo: one");

    let grants: Vec<String> = server
        .token_requests()
        .iter()
        .map(|form| field(form, "grant_type").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(grants[0], "authorization_code");
    assert!(
        grants[1..].iter().all(|g| g == "refresh_token") && grants.len() >= 2,
        "{grants:?}"
    );
    let refresh = server.token_requests().last().cloned().unwrap();
    assert_eq!(field(&refresh, "resource"), Some(server.url().as_str()));
    assert_eq!(person.pages().len(), 1, "a refresh opens no page");
    // The keystore holds the newest tokens.
    let newest = server.access_tokens().last().cloned().unwrap();
    assert!(
        secrets
            .get(&credentials_key("notes"))
            .unwrap()
            .unwrap()
            .contains(&newest)
    );

    // The authorization server ends the sign-in: the open session is refused, the refresh
    // that follows is too, and the call fails saying to sign in again, with no token in its
    // words.
    server.revoke_all();
    let ended = echo(&engine, "mcp-notes", "two").await;
    let Outcome::Failed { message, .. } = &ended else {
        panic!("{ended:?}");
    };
    assert_eq!(
        message,
        &format!(
            "the sign-in to the server at {} has ended (its authorization server no longer \
             accepts it); sign in to the server again",
            server.url()
        )
    );
}

#[tokio::test]
async fn an_authorization_server_without_s256_is_refused_before_any_page_and_nothing_is_kept() {
    let config = OAuthConfig {
        pkce_methods: vec!["plain"],
        ..OAuthConfig::default()
    };
    let (url, refused) = refused_before_any_page(config).await;
    assert_eq!(
        refused,
        format!(
            "the authorization server of {url} does not offer PKCE with S256, which the app \
             requires to sign in safely; the server cannot be signed in to"
        )
    );
}

/// Adds a server whose sign-in the app refuses: its URL and the words, once it is checked that
/// no page was shown, nothing registered, installed or kept.
async fn refused_before_any_page(config: OAuthConfig) -> (String, String) {
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let url = server.url();
    let (_dir, secrets, engine) = fresh();
    let person = Person::default();
    let refused = engine
        .add_remote_signing_in(&url, "notes", &person, None)
        .await
        .unwrap_err();
    assert!(person.pages().is_empty());
    assert!(server.registrations().is_empty());
    assert!(engine.plugins().iter().all(|v| v.plugin.id != "mcp-notes"));
    assert_eq!(secrets.get(&credentials_key("notes")).unwrap(), None);
    (url, refused.to_string())
}

/// A person whose app publishes a client ID metadata document.
#[derive(Default)]
struct Documented(Person);

const DOCUMENT: &str = "https://app.example.edu/oauth/client.json";

#[async_trait]
impl Browser for Documented {
    fn redirect_uri(&self) -> String {
        self.0.redirect_uri()
    }

    async fn sign_in(&self, page: &SignInPage) -> Result<String, String> {
        self.0.sign_in(page).await
    }

    fn client_metadata_url(&self) -> Option<String> {
        Some(DOCUMENT.into())
    }
}

#[tokio::test]
async fn an_authorization_server_that_reads_client_documents_takes_the_app_s_document_before_registering()
 {
    let config = OAuthConfig {
        reads_client_documents: true,
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let (_dir, _, engine) = fresh();
    let person = Documented::default();
    engine
        .add_remote_signing_in(&server.url(), "notes", &person, None)
        .await
        .unwrap();
    // The document's address is the client id; nothing was registered.
    assert!(server.registrations().is_empty());
    let authorizations = server.authorizations();
    assert_eq!(field(&authorizations[0], "client_id"), Some(DOCUMENT));
    let exchange = &server.token_requests()[0];
    assert_eq!(field(exchange, "client_id"), Some(DOCUMENT));
    // A browser without a document registers dynamically at the same server.
    let (_dir, _, engine) = fresh();
    engine
        .add_remote_signing_in(&server.url(), "notes", &Person::default(), None)
        .await
        .unwrap();
    assert_eq!(server.registrations().len(), 1);
}

#[tokio::test]
async fn metadata_that_names_another_resource_is_refused_before_any_page() {
    let config = OAuthConfig {
        names_resource: Some("https://other.example.com/mcp"),
        ..OAuthConfig::default()
    };
    let (url, refused) = refused_before_any_page(config).await;
    assert_eq!(
        refused,
        format!(
            "{url} says its sign-in is for another resource (https://other.example.com/mcp); the \
             app signs in only for the server it adds, so this server cannot be signed in to"
        )
    );
}

#[tokio::test]
async fn the_metadata_is_found_at_the_well_known_paths_and_by_openid_discovery() {
    // The 401 names no metadata URL: the client finds the resource's metadata at its
    // well-known path, and the authorization server's through OpenID discovery.
    let config = OAuthConfig {
        challenge_names_metadata: false,
        openid: true,
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let (_dir, _, engine) = fresh();
    let person = Person::default();
    engine
        .add_remote_signing_in(&server.url(), "notes", &person, None)
        .await
        .unwrap();
    assert_eq!(text(&echo(&engine, "mcp-notes", "hi").await), "echo: hi");
    let paths: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/.well-known/"))
        .map(|r| r.path.clone())
        .collect();
    assert!(
        paths.contains(&"/.well-known/oauth-protected-resource/mcp".to_owned()),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"/.well-known/openid-configuration".to_owned()),
        "{paths:?}"
    );
}

#[tokio::test]
async fn a_sign_in_the_student_declines_installs_nothing() {
    struct Declines;
    #[async_trait]
    impl Browser for Declines {
        fn redirect_uri(&self) -> String {
            BACK.to_owned()
        }
        async fn sign_in(&self, page: &SignInPage) -> Result<String, String> {
            let state = url::Url::parse(&page.url)
                .unwrap()
                .query_pairs()
                .find(|(n, _)| n == "state")
                .map(|(_, v)| v.into_owned())
                .unwrap();
            Ok(format!(
                "{BACK}?error=access_denied&error_description=the+student+declined&state={state}"
            ))
        }
    }
    let server = McpServer::signing_in(vec![tool("echo", true)], OAuthConfig::default()).await;
    let url = server.url();
    let (_dir, secrets, engine) = fresh();
    let refused = engine
        .add_remote_signing_in(&url, "notes", &Declines, None)
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!("the sign-in to {url} did not finish: access_denied (the student declined)")
    );
    assert!(engine.plugins().iter().all(|v| v.plugin.id != "mcp-notes"));
    assert_eq!(secrets.get(&credentials_key("notes")).unwrap(), None);
    assert!(server.token_requests().is_empty());
}

#[tokio::test]
async fn a_server_that_publishes_no_metadata_is_signed_in_to_at_the_2025_03_26_default_endpoints() {
    let config = OAuthConfig {
        no_metadata: true,
        challenge_names_metadata: false,
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let base = server.url().trim_end_matches("/mcp").to_owned();
    let (_dir, _, engine) = fresh();
    let person = Person::default();
    engine
        .add_remote_signing_in(&server.url(), "notes", &person, None)
        .await
        .unwrap();
    assert!(
        person.pages()[0]
            .url
            .starts_with(&format!("{base}/authorize?")),
        "{:?}",
        person.pages()
    );
    // PKCE all the same: the code exchange was checked against its S256 challenge.
    let authorization = &server.authorizations()[0];
    assert_eq!(field(authorization, "code_challenge_method"), Some("S256"));
    assert_eq!(text(&echo(&engine, "mcp-notes", "hi").await), "echo: hi");
}

#[tokio::test]
async fn an_access_token_the_server_refuses_mid_session_is_refreshed_and_the_call_goes_once_more() {
    let server = McpServer::signing_in(vec![tool("echo", true)], OAuthConfig::default()).await;
    let (_dir, _, engine) = fresh();
    let person = Person::default();
    engine
        .add_remote_signing_in(&server.url(), "notes", &person, None)
        .await
        .unwrap();
    assert_eq!(text(&echo(&engine, "mcp-notes", "one").await), "echo: one");
    // The server stops taking the access token (revoked early); the refresh token still works.
    server.revoke_access_tokens();
    assert_eq!(text(&echo(&engine, "mcp-notes", "two").await), "echo: two");
    let grants: Vec<String> = server
        .token_requests()
        .iter()
        .map(|form| field(form, "grant_type").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert_eq!(person.pages().len(), 1, "no page opened again");
    // The refused attempt carried the revoked token, and the one that ran the new token.
    let bearers: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.body["method"] == "tools/call")
        .map(|r| r.header("authorization").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(bearers.len(), 3, "{bearers:?}");
    assert_eq!(bearers[1], bearers[0]);
    let newest = server.access_tokens().last().cloned().unwrap();
    assert_eq!(bearers[2], format!("Bearer {newest}"));
}

#[tokio::test]
async fn a_call_that_needs_more_access_signs_in_again_for_it_with_the_same_client_then_runs() {
    let config = OAuthConfig {
        scoped_tools: vec![("post", "tools:write")],
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true), tool("post", false)], config).await;
    let dir = tempfile::tempdir().unwrap();
    let person = Arc::new(Person::default());
    // The shell's browser, for a sign-in during a call too.
    let mut options = Options::new(Arc::new(Denies::default()));
    options.development_servers = true;
    options.browser = Some(person.clone());
    let engine = Engine::open(dir.path(), options).unwrap();
    engine.accept_terms().unwrap();
    engine
        .add_remote(&server.url(), "notes", None)
        .await
        .unwrap();
    assert_eq!(person.pages()[0].scopes, ["tools:read"]);

    let posted = engine
        .invoke(Call {
            tool: "mcp-notes.post".into(),
            actor: Actor::User,
            input: json!({"message": "hi"}),
            conversation: None,
        })
        .await
        .outcome;
    assert_eq!(text(&posted), "post: hi");
    // One more page, asking for what was granted and what the 403 asked for, with the client
    // registered at the first sign-in.
    let pages = person.pages();
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[1].scopes, ["tools:read", "tools:write"]);
    assert_eq!(server.registrations().len(), 1);
    assert_eq!(
        field(&server.authorizations()[1], "client_id"),
        Some("client-1")
    );
    // The read goes on with the new sign-in.
    assert_eq!(
        text(&echo(&engine, "mcp-notes", "again").await),
        "echo: again"
    );
}

#[tokio::test]
async fn an_authorization_server_that_registers_no_app_takes_the_client_id_it_issued() {
    let config = OAuthConfig {
        issued_clients: vec!["pku-harness-issued"],
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let url = server.url();
    let (_dir, secrets, engine) = fresh();
    let person = Person::default();

    // Without it: refused, saying what to give; nothing kept, no page shown.
    let refused = engine
        .add_remote_signing_in(&url, "notes", &person, None)
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!(
            "the authorization server of {url} registers no app by itself; add the server with \
             the client id its authorization server issued for the app"
        )
    );
    assert!(person.pages().is_empty());
    assert_eq!(secrets.get(&credentials_key("notes")).unwrap(), None);

    // With it: the sign-in goes as the issued client.
    engine
        .add_remote_signing_in(
            &url,
            "notes",
            &person,
            Some(&IssuedClient::public("pku-harness-issued")),
        )
        .await
        .unwrap();
    assert!(server.registrations().is_empty());
    assert_eq!(
        field(&server.authorizations()[0], "client_id"),
        Some("pku-harness-issued")
    );
    assert_eq!(text(&echo(&engine, "mcp-notes", "hi").await), "echo: hi");
}

#[tokio::test]
async fn the_plugins_screens_form_signs_in_as_the_client_id_typed_into_it() {
    let config = OAuthConfig {
        issued_clients: vec!["pku-harness-issued"],
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let dir = tempfile::tempdir().unwrap();
    let person = Arc::new(Person::default());
    let mut options = Options::new(Arc::new(Denies::default()));
    options.development_servers = true;
    options.browser = Some(person.clone());
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    let screens =
        harness_core::screens::Screens::new(engine.clone(), harness_core::screens::Live::new());
    assert_eq!(
        screens.plugins().remote_client_placeholder,
        "客户端标识（服务器的登录要求时填写）"
    );
    let add = harness_core::screens::Action::AddRemoteServer {
        url: server.url(),
        name: "notes".into(),
        token: Some(" ".into()),
        client_id: Some(" pku-harness-issued ".into()),
        client_secret: None,
    };
    screens.act(add).await.unwrap();
    assert_eq!(
        field(&server.authorizations()[0], "client_id"),
        Some("pku-harness-issued")
    );
    assert_eq!(person.pages().len(), 1);
    assert_eq!(text(&echo(&engine, "mcp-notes", "hi").await), "echo: hi");
}

#[tokio::test]
async fn a_server_that_asks_for_a_sign_in_only_at_tools_list_is_signed_in_to_and_added() {
    // MCP authorization: a client must answer a 401 to any request by signing in, not only
    // one to the handshake.
    let config = OAuthConfig {
        open_handshake: true,
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let (_dir, secrets, engine) = fresh();
    let person = Person::default();
    let id = engine
        .add_remote_signing_in(&server.url(), "notes", &person, None)
        .await
        .unwrap();
    assert_eq!(id, "mcp-notes");
    assert_eq!(person.pages().len(), 1);
    assert_eq!(person.pages()[0].scopes, ["tools:read"]);
    assert!(secrets.get(&credentials_key("notes")).unwrap().is_some());
    assert_eq!(text(&echo(&engine, "mcp-notes", "one").await), "echo: one");
}

#[tokio::test]
async fn a_call_refused_401_after_the_sign_in_ended_signs_in_again_through_the_shells_browser() {
    let server = McpServer::signing_in(vec![tool("echo", true)], OAuthConfig::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let person = Arc::new(Person::default());
    let mut options = Options::new(Arc::new(Denies::default()));
    options.development_servers = true;
    options.browser = Some(person.clone());
    let engine = Engine::open(dir.path(), options).unwrap();
    engine.accept_terms().unwrap();
    engine
        .add_remote(&server.url(), "notes", None)
        .await
        .unwrap();
    assert_eq!(text(&echo(&engine, "mcp-notes", "one").await), "echo: one");
    // The authorization server ends the sign-in: the refresh is refused too, so the student
    // signs in again (the same client), and the call goes once more.
    server.revoke_all();
    assert_eq!(text(&echo(&engine, "mcp-notes", "two").await), "echo: two");
    assert_eq!(person.pages().len(), 2);
    assert_eq!(server.registrations().len(), 1);
    assert_eq!(
        field(&server.authorizations()[1], "client_id"),
        Some("client-1")
    );
}

/// An engine whose shell has `person`'s browser, for a sign-in during a call too.
fn engine_with_browser(dir: &std::path::Path, person: Arc<Person>) -> Engine {
    let mut options = Options::new(Arc::new(Denies::default()));
    options.development_servers = true;
    options.browser = Some(person);
    let engine = Engine::open(dir, options).unwrap();
    engine.accept_terms().unwrap();
    engine
}

#[tokio::test]
async fn a_confidential_client_issued_beforehand_sends_its_secret_on_the_exchange_and_every_refresh()
 {
    // OAuth 2.1 §2.4 / MCP authorization: a confidential client authenticates every token
    // request; this authorization server takes the secret in the form (client_secret_post).
    let config = OAuthConfig {
        issued_clients: vec!["pku-harness-issued"],
        client_auth: Some("client_secret_post"),
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let (_dir, secrets, engine) = fresh();
    let person = Person::default();
    let secret = secret_of("pku-harness-issued");
    let client = IssuedClient::confidential("pku-harness-issued", &secret);
    engine
        .add_remote_signing_in(&server.url(), "notes", &person, Some(&client))
        .await
        .unwrap();
    assert_eq!(text(&echo(&engine, "mcp-notes", "one").await), "echo: one");
    server.revoke_access_tokens();
    assert_eq!(text(&echo(&engine, "mcp-notes", "two").await), "echo: two");

    let sent: Vec<(String, String)> = server
        .token_requests()
        .iter()
        .map(|form| {
            let grant = field(form, "grant_type").unwrap_or_default().to_owned();
            (
                grant,
                field(form, "client_secret").unwrap_or_default().into(),
            )
        })
        .collect();
    assert_eq!(
        sent,
        [
            ("authorization_code".to_owned(), secret.clone()),
            ("refresh_token".to_owned(), secret.clone()),
        ]
    );
    // Kept with the sign-in, in the keystore only: never on the page the person saw.
    let kept = secrets.get(&credentials_key("notes")).unwrap().unwrap();
    assert!(kept.contains(&secret));
    assert!(!person.pages()[0].url.contains(&secret));
}

#[tokio::test]
async fn a_secret_given_at_dynamic_registration_is_kept_and_sent_by_http_basic_on_refresh_and_step_up()
 {
    // A confidential client whose secret came from dynamic registration (RFC 7591 §3.2.1):
    // this authorization server lists only client_secret_basic, so each token request carries
    // the id and secret in an HTTP Basic header, the refresh and the step-up's exchange too.
    let config = OAuthConfig {
        client_auth: Some("client_secret_basic"),
        scoped_tools: vec![("post", "tools:write")],
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true), tool("post", false)], config).await;
    let dir = tempfile::tempdir().unwrap();
    let person = Arc::new(Person::default());
    let engine = engine_with_browser(dir.path(), person.clone());
    engine
        .add_remote(&server.url(), "notes", None)
        .await
        .unwrap();
    assert_eq!(text(&echo(&engine, "mcp-notes", "one").await), "echo: one");
    server.revoke_access_tokens();
    assert_eq!(text(&echo(&engine, "mcp-notes", "two").await), "echo: two");
    let posted = engine
        .invoke(Call {
            tool: "mcp-notes.post".into(),
            actor: Actor::User,
            input: json!({"message": "hi"}),
            conversation: None,
        })
        .await
        .outcome;
    assert_eq!(text(&posted), "post: hi");

    assert_eq!(server.registrations().len(), 1);
    let grants: Vec<String> = server
        .token_requests()
        .iter()
        .map(|form| field(form, "grant_type").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        grants,
        ["authorization_code", "refresh_token", "authorization_code"]
    );
    use base64::Engine as _;
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD
            .encode(format!("client-1:{}", secret_of("client-1")))
    );
    let headers: Vec<Option<String>> = server
        .requests()
        .iter()
        .filter(|r| r.path == "/token")
        .map(|r| r.header("authorization").map(str::to_owned))
        .collect();
    assert_eq!(headers, vec![Some(basic); 3]);
}

#[tokio::test]
async fn the_plugins_screens_form_signs_in_as_the_confidential_client_typed_into_it() {
    let config = OAuthConfig {
        issued_clients: vec!["pku-harness-issued"],
        client_auth: Some("client_secret_post"),
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let dir = tempfile::tempdir().unwrap();
    let person = Arc::new(Person::default());
    let engine = Arc::new(engine_with_browser(dir.path(), person.clone()));
    let screens =
        harness_core::screens::Screens::new(engine.clone(), harness_core::screens::Live::new());
    assert_eq!(
        screens.plugins().remote_client_secret_placeholder,
        "客户端密钥（与客户端标识 一同签发时填写；只存在钥匙串里）"
    );
    let add = |client_id: Option<&str>| harness_core::screens::Action::AddRemoteServer {
        url: server.url(),
        name: "notes".into(),
        token: None,
        client_id: client_id.map(str::to_owned),
        client_secret: Some(format!(" {} ", secret_of("pku-harness-issued"))),
    };
    // A secret without the client id it goes with: refused, naming the field to fill in.
    let refused = screens.act(add(None)).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "客户端密钥需要与它一同签发的客户端标识：请同时填写客户端标识"
    );
    assert!(person.pages().is_empty());

    screens.act(add(Some("pku-harness-issued"))).await.unwrap();
    assert_eq!(
        field(&server.token_requests()[0], "client_secret"),
        Some(secret_of("pku-harness-issued").as_str())
    );
    assert_eq!(text(&echo(&engine, "mcp-notes", "hi").await), "echo: hi");
}

#[tokio::test]
async fn a_server_that_moves_to_another_authorization_server_is_signed_in_to_there_anew() {
    // SEP-2352: on a 401 for a kept sign-in the client reads the protected resource metadata
    // again; it names another authorization server, so the app registers there and the student
    // signs in again — nothing of the old sign-in (client, refresh token) goes anywhere.
    let server = McpServer::signing_in(vec![tool("echo", true)], OAuthConfig::default()).await;
    let base = server.url().trim_end_matches("/mcp").to_owned();
    let dir = tempfile::tempdir().unwrap();
    let person = Arc::new(Person::default());
    let engine = engine_with_browser(dir.path(), person.clone());
    engine
        .add_remote(&server.url(), "notes", None)
        .await
        .unwrap();
    assert_eq!(text(&echo(&engine, "mcp-notes", "one").await), "echo: one");
    let before = server.requests().len();

    server.move_authorization_server();
    assert_eq!(text(&echo(&engine, "mcp-notes", "two").await), "echo: two");

    let pages = person.pages();
    assert_eq!(pages.len(), 2);
    assert!(
        pages[1].url.starts_with(&format!("{base}/as2/authorize?")),
        "{}",
        pages[1].url
    );
    let registered: Vec<String> = server
        .registrations()
        .iter()
        .map(|r| r["client_name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(registered, ["PKU Harness", "PKU Harness"]);
    assert_eq!(
        field(&server.authorizations()[1], "client_id"),
        Some("client-4")
    );
    // After the move: not one request to the old authorization server's endpoints.
    let after: Vec<String> = server.requests()[before..]
        .iter()
        .map(|r| format!("{} {}", r.method, r.path.split('?').next().unwrap()))
        .filter(|r| !r.ends_with("/mcp") && !r.contains("/.well-known/"))
        .collect();
    assert_eq!(
        after,
        [
            "POST /as2/register",
            "GET /as2/authorize",
            "POST /as2/token"
        ]
    );
}

#[tokio::test]
async fn a_server_that_moves_right_after_the_sign_in_is_signed_in_to_at_the_new_authorization_server_and_added()
 {
    // SEP-2352, while adding: the listing after the sign-in is refused 401, and the resource
    // metadata now names another authorization server: the app registers there, the student
    // signs in there, and the server is added — the first sign-in's client never goes there.
    let server = McpServer::signing_in(vec![tool("echo", true)], OAuthConfig::default()).await;
    let base = server.url().trim_end_matches("/mcp").to_owned();
    let (_dir, _, engine) = fresh();
    let person = Person::default();
    server.move_authorization_server_at_next_listing();
    let id = engine
        .add_remote_signing_in(&server.url(), "notes", &person, None)
        .await
        .unwrap();
    assert_eq!(id, "mcp-notes");
    let pages: Vec<String> = person
        .pages()
        .iter()
        .map(|p| p.url.split('?').next().unwrap().to_owned())
        .collect();
    assert_eq!(
        pages,
        [format!("{base}/authorize"), format!("{base}/as2/authorize")]
    );
    assert_eq!(server.registrations().len(), 2);
    let authorizations = server.authorizations();
    let clients: Vec<&str> = authorizations
        .iter()
        .map(|a| field(a, "client_id").unwrap_or_default())
        .collect();
    assert_eq!(clients, ["client-1", "client-4"]);
    assert_eq!(text(&echo(&engine, "mcp-notes", "hi").await), "echo: hi");
}

#[tokio::test]
async fn an_access_token_refused_at_the_first_connect_of_a_new_engine_is_refreshed() {
    let server = McpServer::signing_in(vec![tool("echo", true)], OAuthConfig::default()).await;
    let (dir, secrets, first) = fresh();
    let person = Person::default();
    first
        .add_remote_signing_in(&server.url(), "notes", &person, None)
        .await
        .unwrap();
    first.shutdown().await;
    drop(first);
    server.revoke_access_tokens();
    let second = engine(dir.path(), secrets);
    assert_eq!(text(&echo(&second, "mcp-notes", "two").await), "echo: two");
}

/// The grant of each token request, with how its client proved itself: `basic` (HTTP Basic),
/// `secret` (in the form), `assertion` (a signed JWT), or `none`.
fn grants_sent(server: &McpServer) -> Vec<(String, &'static str)> {
    server
        .token_requests()
        .iter()
        .map(|form| {
            let proof = if field(form, "client_assertion").is_some() {
                "assertion"
            } else if field(form, "client_secret").is_some() {
                "secret"
            } else {
                "basic-or-none"
            };
            (
                field(form, "grant_type").unwrap_or_default().to_owned(),
                proof,
            )
        })
        .collect()
}

#[tokio::test]
async fn a_client_the_authorization_server_issues_tokens_to_signs_in_by_itself_with_http_basic_and_again_when_refused()
 {
    // SEP-1046 / OAuth 2.1 §4.2: an authorization server that lists only the client
    // credentials grant signs in the issued client itself, with no page for a person; its
    // secret by HTTP Basic, the only method listed. No refresh token comes: a refused token is
    // answered by the grant again.
    let config = OAuthConfig {
        issued_clients: vec!["pku-harness-machine"],
        client_auth: Some("client_secret_basic"),
        grants: vec!["client_credentials"],
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let (_dir, secrets, engine) = fresh();
    let person = Person::default();
    let secret = secret_of("pku-harness-machine");
    let client = IssuedClient::confidential("pku-harness-machine", &secret);
    engine
        .add_remote_signing_in(&server.url(), "machine", &person, Some(&client))
        .await
        .unwrap();
    assert_eq!(
        text(&echo(&engine, "mcp-machine", "one").await),
        "echo: one"
    );
    server.revoke_access_tokens();
    assert_eq!(
        text(&echo(&engine, "mcp-machine", "two").await),
        "echo: two"
    );

    let cc = "client_credentials".to_owned();
    assert_eq!(
        grants_sent(&server),
        [(cc.clone(), "basic-or-none"), (cc, "basic-or-none")]
    );
    let resource = server.url();
    for form in server.token_requests() {
        assert_eq!(field(&form, "resource"), Some(resource.as_str()));
        assert_eq!(field(&form, "scope"), Some("tools:read"));
    }
    assert!(person.pages().is_empty(), "no page is shown");
    assert!(server.authorizations().is_empty());
    let kept = secrets.get(&credentials_key("machine")).unwrap().unwrap();
    assert!(kept.contains(&secret));
}

/// A P-256 key in PKCS#8 PEM, as an authorization server's console hands one out, and its
/// public key.
fn p256_key() -> (String, Vec<u8>) {
    use base64::Engine;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let body = base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref());
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    );
    (pem, pair.public_key().as_ref().to_vec())
}

#[tokio::test]
async fn a_client_with_a_private_key_signs_in_by_itself_with_a_signed_assertion_and_again_when_refused()
 {
    // RFC 7523 §2.2 (private_key_jwt): the client proves itself by an ES256 JWT of its own
    // (iss and sub the client, aud the authorization server), no secret in the form; the key is
    // kept with the sign-in so a refused token is answered by the grant again.
    let (pem, public) = p256_key();
    let config = OAuthConfig {
        issued_clients: vec!["pku-harness-signed"],
        client_auth: Some("private_key_jwt"),
        grants: vec!["client_credentials"],
        client_key: Some(public),
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let (_dir, secrets, engine) = fresh();
    let person = Person::default();
    let client = IssuedClient::public("pku-harness-signed");
    let credentials = Credentials {
        private_key: Some(pem.clone()),
        ..Credentials::default()
    };
    engine
        .add_remote_signing_in_with(
            &server.url(),
            "signed",
            &person,
            Some(&client),
            &credentials,
        )
        .await
        .unwrap();
    assert_eq!(text(&echo(&engine, "mcp-signed", "one").await), "echo: one");
    server.revoke_access_tokens();
    assert_eq!(text(&echo(&engine, "mcp-signed", "two").await), "echo: two");

    let cc = "client_credentials".to_owned();
    assert_eq!(
        grants_sent(&server),
        [(cc.clone(), "assertion"), (cc, "assertion")]
    );
    assert!(person.pages().is_empty());
    let kept = secrets.get(&credentials_key("signed")).unwrap().unwrap();
    assert!(kept.contains("BEGIN PRIVATE KEY"));
}

#[tokio::test]
async fn an_enterprise_sign_in_is_exchanged_for_an_id_jag_and_that_for_the_servers_token_again_when_refused()
 {
    // SEP-990 cross-app access: the identity provider's ID token exchanged there (RFC 8693)
    // for an ID-JAG meant for the server's authorization server and this resource, which the
    // issued client presents there as a JWT bearer grant (RFC 7523 §2.1), its secret by HTTP
    // Basic. A refused token is answered by both steps again with the kept ID token.
    let config = OAuthConfig {
        issued_clients: vec!["pku-harness-xaa"],
        client_auth: Some("client_secret_basic"),
        grants: vec!["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        id_token: Some("id-token-of-the-student"),
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true)], config).await;
    let (_dir, secrets, engine) = fresh();
    let person = Person::default();
    let client = IssuedClient::confidential("pku-harness-xaa", secret_of("pku-harness-xaa"));
    let base = server.url().trim_end_matches("/mcp").to_owned();
    let credentials = Credentials {
        enterprise: Some(EnterpriseSignIn {
            issuer: format!("{base}/idp"),
            client_id: "pku-harness-at-idp".into(),
            id_token: "id-token-of-the-student".into(),
        }),
        ..Credentials::default()
    };
    engine
        .add_remote_signing_in_with(&server.url(), "xaa", &person, Some(&client), &credentials)
        .await
        .unwrap();
    assert_eq!(text(&echo(&engine, "mcp-xaa", "one").await), "echo: one");
    server.revoke_access_tokens();
    assert_eq!(text(&echo(&engine, "mcp-xaa", "two").await), "echo: two");

    let exchanges = server.identity_provider_requests();
    assert_eq!(exchanges.len(), 2);
    assert_eq!(field(&exchanges[0], "audience"), Some(base.as_str()));
    assert_eq!(
        field(&exchanges[0], "resource"),
        Some(server.url().as_str())
    );
    assert_eq!(
        field(&exchanges[0], "client_id"),
        Some("pku-harness-at-idp")
    );
    let bearer = "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned();
    assert_eq!(
        grants_sent(&server),
        [(bearer.clone(), "basic-or-none"), (bearer, "basic-or-none")]
    );
    assert!(person.pages().is_empty());
    let kept = secrets.get(&credentials_key("xaa")).unwrap().unwrap();
    assert!(kept.contains("id-token-of-the-student"));
}

#[tokio::test]
async fn an_http_sse_servers_401_to_a_message_and_at_the_connect_refreshes_the_sign_in_and_the_call_goes_once_more()
 {
    // MCP authorization: a client responds to a 401 from any request, over the HTTP+SSE
    // transport (2024-11-05) as over Streamable HTTP: a message POSTed on the open session, and
    // the event stream's GET when a new process connects, each refused for an access token
    // that is no longer taken, refresh the kept sign-in once and the call goes once more.
    let server = McpServer::sse_signing_in(vec![tool("echo", true)], OAuthConfig::default()).await;
    let (dir, secrets, engine) = fresh();
    let person = Person::default();
    engine
        .add_remote_signing_in(&server.url(), "legacy", &person, None)
        .await
        .unwrap();
    assert_eq!(text(&echo(&engine, "mcp-legacy", "one").await), "echo: one");

    // The open session's next message is refused.
    server.revoke_access_tokens();
    assert_eq!(text(&echo(&engine, "mcp-legacy", "two").await), "echo: two");

    // A new engine (every `harness` process) connects with the kept token: the GET is refused.
    server.revoke_access_tokens();
    drop(engine);
    let again = self::engine(dir.path(), secrets);
    assert_eq!(
        text(&echo(&again, "mcp-legacy", "three").await),
        "echo: three"
    );

    let grants: Vec<String> = server
        .token_requests()
        .iter()
        .map(|form| field(form, "grant_type").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        grants,
        ["authorization_code", "refresh_token", "refresh_token"]
    );
    assert_eq!(person.pages().len(), 1, "signed in once, at the add");
}

#[tokio::test]
async fn a_call_that_needs_more_access_signs_a_client_with_a_private_key_in_again_with_its_kept_key()
 {
    // MCP authorization's step-up (403 insufficient_scope) for a sign-in no person made: the
    // grant is made again with the key kept at the add, for the scopes granted and those asked
    // for, and no page is shown.
    let (pem, public) = p256_key();
    let config = OAuthConfig {
        issued_clients: vec!["pku-harness-signed"],
        client_auth: Some("private_key_jwt"),
        grants: vec!["client_credentials"],
        client_key: Some(public),
        scoped_tools: vec![("post", "tools:write")],
        ..OAuthConfig::default()
    };
    let server = McpServer::signing_in(vec![tool("echo", true), tool("post", false)], config).await;
    let dir = tempfile::tempdir().unwrap();
    let person = Arc::new(Person::default());
    let engine = engine_with_browser(dir.path(), person.clone());
    let client = IssuedClient::public("pku-harness-signed");
    let credentials = Credentials {
        private_key: Some(pem),
        ..Credentials::default()
    };
    engine
        .add_remote_signing_in_with(
            &server.url(),
            "signed",
            &*person,
            Some(&client),
            &credentials,
        )
        .await
        .unwrap();
    let posted = engine
        .invoke(Call {
            tool: "mcp-signed.post".into(),
            actor: Actor::User,
            input: json!({"message": "hi"}),
            conversation: None,
        })
        .await
        .outcome;
    assert_eq!(text(&posted), "post: hi");
    let scopes: Vec<String> = server
        .token_requests()
        .iter()
        .map(|form| field(form, "scope").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(scopes, ["tools:read", "tools:read tools:write"]);
    assert_eq!(
        grants_sent(&server),
        [
            ("client_credentials".to_owned(), "assertion"),
            ("client_credentials".to_owned(), "assertion"),
        ]
    );
    assert!(person.pages().is_empty());
}
