//! What a plugin holds, computed once at load: the load-time checks, the grant row every shell
//! shows, and the warnings for dangerous combinations (seed 001, "What /tools tells you").

use super::network::NetworkPolicy;
use super::tools::{self_grants, unknown_tools};
use super::{GrantError, Grants, PluginKind, ToolCatalog};
use crate::registry::Effect;

/// Every load error in one plugin's grants: allowlist entries in none of the three spellings,
/// and `allow_tools` names that are not known tools or are the plugin's own. (Store names are
/// checked across plugins by [`super::check_store_names`], circles of grants by the installed
/// plugins' owner.)
pub fn check_grants(plugin_id: &str, grants: &Grants, catalog: &ToolCatalog) -> Vec<GrantError> {
    let mut errors: Vec<GrantError> = grants
        .url_allowlist
        .iter()
        .filter_map(|entry| {
            let one = Grants {
                url_allowlist: vec![entry.clone()],
                ..Grants::default()
            };
            NetworkPolicy::new(plugin_id, &one, PluginKind::Bundled).err()
        })
        .collect();
    errors.extend(unknown_tools(plugin_id, grants, catalog));
    errors.extend(self_grants(plugin_id, grants));
    errors
}

/// The plugin's row, e.g. `memory              allow_store, allow_context`: grants in seed 001's
/// fixed order (filesystem, network, store, context, tools, send-message), a grant that is off
/// contributing nothing, tokens carrying their scope, and `no grants` for a powerless plugin —
/// "not installed" and "installed, powerless" must not look alike.
pub fn grant_row(plugin_id: &str, grants: &Grants) -> String {
    row(plugin_id, grants, &EN_TOKENS)
}

/// The same row in Chinese, token for token in the same order with the same scopes, for a
/// Chinese plugin page's developer info (a zh screen shows no English word that is not data).
pub fn grant_row_zh(plugin_id: &str, grants: &Grants) -> String {
    row(plugin_id, grants, &ZH_TOKENS)
}

/// The words of one language's row: each grant's token, and what a scope is wrapped in.
struct Tokens {
    fs: &'static str,
    network: &'static str,
    reaches_nothing: &'static str,
    store: &'static str,
    context: &'static str,
    tools: &'static str,
    send_message: &'static str,
    none: &'static str,
    open: &'static str,
    close: &'static str,
    comma: &'static str,
}

const EN_TOKENS: Tokens = Tokens {
    fs: "allow_fs",
    network: "allow_network",
    reaches_nothing: "no allowlist, reaches nothing",
    store: "allow_store",
    context: "allow_context",
    tools: "allow_tools",
    send_message: "allow_send_message(can start billed turns)",
    none: "no grants",
    open: "(",
    close: ")",
    comma: ", ",
};

const ZH_TOKENS: Tokens = Tokens {
    fs: "文件",
    network: "联网",
    reaches_nothing: "未列出地址，哪里也去不了",
    store: "存储",
    context: "对话内容",
    tools: "调用工具",
    send_message: "发起对话（会产生模型费用）",
    none: "无授权",
    open: "（",
    close: "）",
    comma: "、",
};

fn row(plugin_id: &str, grants: &Grants, words: &Tokens) -> String {
    let mut tokens = Vec::new();
    if grants.allow_fs {
        tokens.push(words.fs.to_owned());
    }
    if grants.allow_network {
        // seed 001: an empty list and a star must not look the same to someone scanning.
        let scope = match NetworkPolicy::new(plugin_id, grants, PluginKind::Bundled) {
            Ok(policy) => policy.describe_allowlist(),
            // Rows are computed for loaded plugins, whose entries parsed; show them as written.
            Err(_) => Some(grants.url_allowlist.join(", ")),
        };
        let scope = scope.unwrap_or_else(|| words.reaches_nothing.to_owned());
        tokens.push(format!(
            "{}{}{scope}{}",
            words.network, words.open, words.close
        ));
    }
    if grants.allow_store {
        tokens.push(words.store.to_owned());
    }
    if grants.allow_context {
        tokens.push(words.context.to_owned());
    }
    if !grants.allow_tools.is_empty() {
        tokens.push(format!(
            "{}{}{}{}",
            words.tools,
            words.open,
            grants.allow_tools.join(", "),
            words.close
        ));
    }
    if grants.allow_send_message {
        tokens.push(words.send_message.to_owned());
    }
    let tokens = if tokens.is_empty() {
        words.none.to_owned()
    } else {
        tokens.join(words.comma)
    };
    format!("{plugin_id:<19} {tokens}")
}

/// The core's own plugins that hold the permission system, what the agent remembers and what
/// runs unattended: a plugin asking to call them is asking to reach past its own tools.
const PERMISSION_PLUGINS: [&str; 3] = ["settings", "memory", "scheduler"];

/// The startup warnings for seed 001's dangerous combinations. A network grant that reaches
/// nothing (no allowlist) pairs with nothing, and a read-only `allow_tools` does not warn, or
/// the warnings become noise the user learns to skip.
pub fn startup_warnings(plugin_id: &str, grants: &Grants, catalog: &ToolCatalog) -> Vec<String> {
    let mut warnings = Vec::new();
    let network = NetworkPolicy::new(plugin_id, grants, PluginKind::Bundled).ok();
    let network_reaches = network
        .as_ref()
        .is_some_and(NetworkPolicy::reaches_anything);
    if network.as_ref().is_some_and(NetworkPolicy::allows_any_host) {
        warnings.push(format!(
            "plugin \"{plugin_id}\" has allow_network(*): it can reach any http or https host; \
             list the hosts it needs in url_allowlist instead"
        ));
    }
    if grants.allow_store && network_reaches {
        warnings.push(format!(
            "plugin \"{plugin_id}\" has allow_store and allow_network: what it keeps about you \
             can be sent to the hosts it reaches, a durable profile"
        ));
    }
    if grants.allow_context && network_reaches {
        warnings.push(format!(
            "plugin \"{plugin_id}\" has allow_context and allow_network: a remote source it \
             controls can shape how the agent behaves, without any tool call"
        ));
    }
    if grants.allow_send_message {
        warnings.push(format!(
            "plugin \"{plugin_id}\" has allow_send_message: every message it sends starts a \
             billed turn"
        ));
    }
    for tool_id in &grants.allow_tools {
        let Some(info) = catalog.get(tool_id) else {
            continue;
        };
        let plugin = tool_id.split_once('.').map_or("", |(plugin, _)| plugin);
        let what = if info.user_only {
            "a tool only you may start: its calls are refused, and asking for it is a red flag"
        } else if info.bundled && PERMISSION_PLUGINS.contains(&plugin) {
            "a tool of the app's own settings, memory or scheduler: it can ask to change what the \
             agent may do, remember or run unattended"
        } else {
            match info.effect {
                Effect::Money => "a money tool: it can start calls that spend money",
                Effect::Public => "a public tool: it can start calls that publish in your name",
                _ => continue,
            }
        };
        warnings.push(format!("plugin \"{plugin_id}\" may call {tool_id}, {what}"));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gates::ToolInfo;

    fn catalog() -> ToolCatalog {
        ToolCatalog::from([
            (
                "wallet.cardBalance".into(),
                ToolInfo {
                    bundled: true,
                    effect: Effect::Read,
                    user_only: false,
                },
            ),
            (
                "wallet.recharge".into(),
                ToolInfo {
                    bundled: true,
                    effect: Effect::Money,
                    user_only: false,
                },
            ),
            (
                "forum.post".into(),
                ToolInfo {
                    bundled: true,
                    effect: Effect::Public,
                    user_only: false,
                },
            ),
        ])
    }

    #[test]
    fn a_call_tool_grant_naming_the_permission_system_or_a_user_only_tool_warns() {
        let mut catalog = catalog();
        let info = |user_only| ToolInfo {
            bundled: true,
            effect: Effect::Write,
            user_only,
        };
        catalog.insert("settings.change".into(), info(false));
        catalog.insert("memory.approve".into(), info(true));
        catalog.insert("scheduler.create".into(), info(false));
        catalog.insert("notes.add".into(), info(false));
        let grants = Grants {
            allow_tools: [
                "settings.change",
                "memory.approve",
                "scheduler.create",
                "notes.add",
            ]
            .map(String::from)
            .to_vec(),
            ..Grants::default()
        };
        assert_eq!(
            startup_warnings("p", &grants, &catalog),
            [
                "plugin \"p\" may call settings.change, a tool of the app's own settings, memory \
                 or scheduler: it can ask to change what the agent may do, remember or run \
                 unattended",
                "plugin \"p\" may call memory.approve, a tool only you may start: its calls are \
                 refused, and asking for it is a red flag",
                "plugin \"p\" may call scheduler.create, a tool of the app's own settings, memory \
                 or scheduler: it can ask to change what the agent may do, remember or run \
                 unattended",
            ]
        );
    }

    fn network(list: &[&str]) -> Grants {
        Grants {
            allow_network: true,
            url_allowlist: list.iter().map(|s| s.to_string()).collect(),
            ..Grants::default()
        }
    }

    #[test]
    fn a_powerless_plugin_still_gets_a_row() {
        assert_eq!(
            grant_row("formatter", &Grants::default()),
            "formatter           no grants"
        );
        // Off contributes nothing, whatever else is written.
        let off = Grants {
            url_allowlist: vec!["a.com".into()],
            ..Grants::default()
        };
        assert_eq!(
            grant_row("formatter", &off),
            "formatter           no grants"
        );
    }

    #[test]
    fn rows_list_grants_in_the_fixed_order_with_their_scope() {
        let all = Grants {
            allow_fs: true,
            allow_network: true,
            url_allowlist: vec!["https://A.com/".into(), "b.org".into()],
            allow_store: true,
            allow_context: true,
            allow_tools: vec!["wallet.cardBalance".into(), "wallet.recharge".into()],
            allow_send_message: true,
        };
        assert_eq!(
            grant_row("memory", &all),
            "memory              allow_fs, allow_network(a.com, b.org), allow_store, \
             allow_context, allow_tools(wallet.cardBalance, wallet.recharge), \
             allow_send_message(can start billed turns)"
        );
    }

    #[test]
    fn network_tokens_carry_their_scope() {
        assert_eq!(
            grant_row("p", &network(&[])),
            "p                   allow_network(no allowlist, reaches nothing)"
        );
        assert_eq!(
            grant_row("p", &network(&["a.com", "*"])),
            "p                   allow_network(*)"
        );
        assert_eq!(
            grant_row(
                "a-very-long-plugin-id",
                &Grants {
                    allow_fs: true,
                    ..Grants::default()
                }
            ),
            "a-very-long-plugin-id allow_fs"
        );
    }

    #[test]
    fn load_errors_are_all_reported() {
        let grants = Grants {
            url_allowlist: vec!["api.*.com".into(), "ok.com".into(), "".into()],
            allow_tools: vec!["wallet.recharge".into(), "wallet.nope".into()],
            ..Grants::default()
        };
        let errors = check_grants("p", &grants, &catalog());
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(matches!(errors[0], GrantError::MisplacedWildcard { .. }));
        assert!(matches!(errors[1], GrantError::NotAHost { .. }));
        assert!(
            matches!(&errors[2], GrantError::UnknownTool { tool, .. } if tool == "wallet.nope")
        );
        assert!(check_grants("p", &Grants::default(), &catalog()).is_empty());
    }

    #[test]
    fn dangerous_combinations_warn() {
        let star = network(&["*"]);
        assert_eq!(
            startup_warnings("p", &star, &catalog()),
            [
                "plugin \"p\" has allow_network(*): it can reach any http or https host; list the \
              hosts it needs in url_allowlist instead"
            ]
        );
        let profile = Grants {
            allow_store: true,
            allow_context: true,
            ..network(&["a.com"])
        };
        let warnings = startup_warnings("p", &profile, &catalog());
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].contains("allow_store and allow_network"));
        assert!(warnings[1].contains("allow_context and allow_network"));
        let send = Grants {
            allow_send_message: true,
            ..Grants::default()
        };
        assert_eq!(
            startup_warnings("p", &send, &catalog()),
            ["plugin \"p\" has allow_send_message: every message it sends starts a billed turn"]
        );
        let tools = Grants {
            allow_tools: vec![
                "wallet.cardBalance".into(),
                "wallet.recharge".into(),
                "forum.post".into(),
            ],
            ..Grants::default()
        };
        assert_eq!(
            startup_warnings("p", &tools, &catalog()),
            [
                "plugin \"p\" may call wallet.recharge, a money tool: it can start calls that \
                 spend money",
                "plugin \"p\" may call forum.post, a public tool: it can start calls that publish \
                 in your name"
            ]
        );
    }

    #[test]
    fn quiet_combinations_do_not_warn() {
        // A network grant that reaches nothing pairs with nothing.
        let unreachable = Grants {
            allow_store: true,
            allow_context: true,
            ..network(&[])
        };
        assert!(startup_warnings("p", &unreachable, &catalog()).is_empty());
        let read_only = Grants {
            allow_tools: vec!["wallet.cardBalance".into()],
            ..Grants::default()
        };
        assert!(startup_warnings("p", &read_only, &catalog()).is_empty());
        assert!(
            startup_warnings(
                "p",
                &Grants {
                    allow_store: true,
                    ..Grants::default()
                },
                &catalog()
            )
            .is_empty()
        );
    }
}
