//! `harness plugins add|remove|update`, `harness mcp add|tools` and `harness call`: plugins from
//! outside, and a user's tap from the terminal.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Subcommand;
use harness_core::Engine;
use harness_core::invoke::{Call, Outcome};
use harness_core::plugins::link::{Preview, Update};
use harness_core::plugins::oauth::{Credentials, EnterpriseSignIn, IssuedClient};
use harness_core::policy::Actor;

use crate::tools::NoPrompts;

#[derive(Subcommand)]
pub enum PluginsCommand {
    /// Preview a plugin document from an https link or a file, then install it once you agree.
    Add {
        /// An https:// link, or the path of a PLUGIN.md file.
        link: String,
        /// Install without asking (for scripts).
        #[arg(long)]
        yes: bool,
        /// Also accept http:// links to a loopback address (plugin authors only).
        #[arg(long)]
        development: bool,
    },
    /// Fetch an installed document's link again; an update that asks for more is shown first.
    Update {
        id: String,
        #[arg(long)]
        yes: bool,
        #[arg(long)]
        development: bool,
    },
    /// Remove a document or remote plugin with its modes, jobs and store.
    Remove { id: String },
}

#[derive(Subcommand)]
pub enum McpCommand {
    /// Connect to an MCP server and install its tools as plugin mcp-NAME. A bearer token, if
    /// the server needs one, is read from $HARNESS_MCP_TOKEN and kept in the keyring; without
    /// one, a server that asks you to sign in (OAuth) opens its sign-in page in $BROWSER (else
    /// xdg-open or open), and the sign-in is kept in the keyring.
    Add {
        url: String,
        #[arg(long)]
        name: String,
        /// The client id the server's authorization server issued for this app, for one that
        /// does not register apps by itself. A confidential client's secret is read from
        /// $HARNESS_OAUTH_CLIENT_SECRET (never a flag, which others see in the process list)
        /// and kept in the keyring with the sign-in.
        #[arg(long)]
        client_id: Option<String>,
        /// A file with that client's private key (PKCS#8 PEM), for an authorization server that
        /// takes signed client assertions (private_key_jwt); the key is kept in the keyring with
        /// the sign-in, so the file may go afterwards.
        #[arg(long, value_name = "PATH")]
        client_key_file: Option<PathBuf>,
        /// Cross-app access: the issuer of your enterprise identity provider, whose ID token
        /// (read from $HARNESS_OAUTH_ID_TOKEN) the app exchanges there for the server's sign-in
        /// with no page to show; needs --idp-client-id and --client-id.
        #[arg(long, value_name = "URL")]
        idp_issuer: Option<String>,
        /// The app's client id at that identity provider.
        #[arg(long)]
        idp_client_id: Option<String>,
    },
    /// Connect to an MCP server and list its tools, installing nothing.
    Tools { url: String },
}

fn open(data_dir: &Path, development: bool) -> Result<Engine, String> {
    let mut options = crate::open::options(data_dir, Arc::new(NoPrompts))?;
    options.development_links = development;
    Engine::open(data_dir, options).map_err(|e| e.to_string())
}

/// A path that exists is a file the user picked; anything else is a link.
fn as_link(link: &str) -> Result<String, String> {
    let path = Path::new(link);
    if !link.contains("://") && path.exists() {
        let absolute = std::fs::canonicalize(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        return Ok(format!("file://{}", absolute.display()));
    }
    Ok(link.to_owned())
}

fn show(preview: &Preview) {
    outln!(
        "{} ({}) · {} plugin from {}",
        preview.title,
        preview.plugin,
        preview.kind.as_str(),
        preview.link
    );
    for tool in &preview.tools {
        let request = tool
            .request
            .as_deref()
            .map_or(String::new(), |r| format!(" → {r}"));
        outln!(
            "  {:<28} {:<6} {}{request}",
            tool.id,
            tool.effect.as_str(),
            tool.title
        );
    }
    let modes: Vec<String> = preview
        .modes
        .iter()
        .map(|(effect, mode)| format!("{effect} {mode}"))
        .collect();
    outln!("  starts with  {}", modes.join(" · "));
    outln!("  grants       {}", preview.grant_row);
    if !preview.requires.is_empty() {
        outln!("  requires     {}", preview.requires.join(", "));
    }
    for source in &preview.data_sources {
        outln!("  data source  {} ({})", source.title, source.tool);
    }
    for line in &preview.disclosure {
        outln!("  stores online: {line}");
    }
    for warning in &preview.warnings {
        outln!("warning: {warning}");
    }
    if !preview.asks_more.is_empty() {
        outln!("This update asks for more than the installed version:");
        for more in &preview.asks_more {
            outln!("  + {more}");
        }
    }
}

fn agreed(yes: bool) -> Result<bool, String> {
    if yes {
        return Ok(true);
    }
    print!("Install? [y/N] ");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

pub async fn plugins(data_dir: &Path, command: PluginsCommand) -> Result<(), String> {
    match command {
        PluginsCommand::Add {
            link,
            yes,
            development,
        } => {
            let engine = open(data_dir, development)?;
            let preview = engine
                .preview_link(&as_link(&link)?)
                .await
                .map_err(|e| e.to_string())?;
            show(&preview);
            if !agreed(yes)? {
                outln!("Not installed.");
                return Ok(());
            }
            let id = engine
                .install_preview(&preview.id)
                .await
                .map_err(|e| e.to_string())?;
            outln!("Installed {id}.");
        }
        PluginsCommand::Update {
            id,
            yes,
            development,
        } => {
            let engine = open(data_dir, development)?;
            match engine
                .update_document(&id)
                .await
                .map_err(|e| e.to_string())?
            {
                Update::Current => outln!("{id} is up to date."),
                Update::Updated => outln!("Updated {id}."),
                Update::NeedsConsent(preview) => {
                    show(&preview);
                    if agreed(yes)? {
                        engine
                            .install_preview(&preview.id)
                            .await
                            .map_err(|e| e.to_string())?;
                        outln!("Updated {id}.");
                    } else {
                        outln!("{id} stays on its installed version.");
                    }
                }
            }
        }
        PluginsCommand::Remove { id } => {
            let engine = open(data_dir, false)?;
            engine.remove_plugin(&id).map_err(|e| e.to_string())?;
            outln!("Removed {id}.");
        }
    }
    Ok(())
}

/// The client `--client-id` names, with the secret in $HARNESS_OAUTH_CLIENT_SECRET when it is
/// a confidential one.
fn issued_client(client_id: Option<String>) -> Result<Option<IssuedClient>, String> {
    let secret = std::env::var("HARNESS_OAUTH_CLIENT_SECRET")
        .ok()
        .filter(|s| !s.is_empty());
    match (client_id, secret) {
        (Some(id), secret) => Ok(Some(IssuedClient { id, secret })),
        (None, None) => Ok(None),
        (None, Some(_)) => Err(
            "HARNESS_OAUTH_CLIENT_SECRET is set but --client-id is not: a \
                                client secret goes with the client id it was issued with; give \
                                --client-id too"
                .into(),
        ),
    }
}

/// What else signs in beside the client: the private key in `--client-key-file`, and the
/// enterprise sign-in `--idp-issuer` and `--idp-client-id` name with the ID token in
/// $HARNESS_OAUTH_ID_TOKEN (never a flag, which others see in the process list).
fn credentials(
    client_id: Option<&str>,
    client_key_file: Option<PathBuf>,
    idp_issuer: Option<String>,
    idp_client_id: Option<String>,
) -> Result<Credentials, String> {
    let given = client_key_file.is_some() || idp_issuer.is_some();
    if given && client_id.is_none() {
        return Err(
            "--client-key-file and --idp-issuer sign in as a client the server's \
                    authorization server issued: give its --client-id too"
                .into(),
        );
    }
    let private_key = match client_key_file {
        Some(path) => Some(std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "--client-key-file: {} could not be read ({e})",
                path.display()
            )
        })?),
        None => None,
    };
    let id_token = std::env::var("HARNESS_OAUTH_ID_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    let enterprise = match (idp_issuer, idp_client_id, id_token) {
        (None, None, None) => None,
        (Some(issuer), Some(client_id), Some(id_token)) => Some(EnterpriseSignIn {
            issuer,
            client_id,
            id_token,
        }),
        (Some(_), Some(_), None) => {
            return Err(
                "--idp-issuer: the ID token your identity provider issued is read \
                        from $HARNESS_OAUTH_ID_TOKEN, which is not set"
                    .into(),
            );
        }
        _ => {
            return Err(
                "cross-app access needs --idp-issuer, --idp-client-id and the ID \
                        token in $HARNESS_OAUTH_ID_TOKEN together"
                    .into(),
            );
        }
    };
    Ok(Credentials {
        private_key,
        enterprise,
    })
}

pub async fn mcp(data_dir: &Path, command: McpCommand) -> Result<(), String> {
    let engine = open(data_dir, false)?;
    let done = mcp_command(&engine, command).await;
    // No session is left open on a server when the process exits.
    engine.shutdown().await;
    done
}

async fn mcp_command(engine: &Engine, command: McpCommand) -> Result<(), String> {
    match command {
        McpCommand::Add {
            url,
            name,
            client_id,
            client_key_file,
            idp_issuer,
            idp_client_id,
        } => {
            let id = match std::env::var("HARNESS_MCP_TOKEN").ok() {
                Some(token) => engine.add_remote(&url, &name, Some(&token)).await,
                None => {
                    let credentials = credentials(
                        client_id.as_deref(),
                        client_key_file,
                        idp_issuer,
                        idp_client_id,
                    )?;
                    let client = issued_client(client_id)?;
                    let browser = crate::browser::DesktopBrowser::listen().await?;
                    engine
                        .add_remote_signing_in_with(
                            &url,
                            &name,
                            &browser,
                            client.as_ref(),
                            &credentials,
                        )
                        .await
                }
            }
            .map_err(|e| e.to_string())?;
            let count = engine
                .plugins()
                .into_iter()
                .find(|v| v.plugin.id == id)
                .map_or(0, |v| v.plugin.tools.len());
            outln!("Installed {id} with {count} tools.");
        }
        McpCommand::Tools { url } => {
            let tools = engine.remote_tools(&url).await.map_err(|e| e.to_string())?;
            outln!("{} tools at {url}", tools.len());
            for tool in tools {
                let effect = if tool.annotations.read_only_hint == Some(true) {
                    "read"
                } else {
                    "write"
                };
                outln!(
                    "  {:<32} {:<6} {}",
                    tool.name,
                    effect,
                    tool.description
                        .unwrap_or_default()
                        .lines()
                        .next()
                        .unwrap_or("")
                );
            }
        }
    }
    Ok(())
}

/// A tap on `tool` with `input`: through the one invoke path as the user.
pub async fn call(
    data_dir: &Path,
    tool: &str,
    input: &str,
    answers: crate::tap::TapAnswers,
) -> Result<(), String> {
    let input = serde_json::from_str(input).map_err(|e| format!("the input is not JSON: {e}"))?;
    let mut options = crate::open::options(data_dir, Arc::new(answers))?;
    // A server that asks for more access than its sign-in gave signs in again in the browser.
    options.browser = Some(Arc::new(crate::browser::DesktopBrowser::listen().await?));
    let engine = Engine::open(data_dir, options).map_err(|e| e.to_string())?;
    let invocation = engine
        .invoke(Call {
            tool: tool.to_owned(),
            actor: Actor::User,
            input,
            conversation: None,
        })
        .await;
    // A remote tool's session is not left open on its server when the process exits.
    engine.shutdown().await;
    match invocation.outcome {
        Outcome::Ran { result, .. } => {
            outln!(
                "{}",
                serde_json::to_string_pretty(&result).unwrap_or_default()
            );
            Ok(())
        }
        Outcome::Failed { message } => Err(format!("{tool} failed: {message}")),
        Outcome::Refused { code, message } => Err(format!(
            "{tool} was refused ({}): {message}",
            serde_json::to_value(code)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        )),
    }
}
