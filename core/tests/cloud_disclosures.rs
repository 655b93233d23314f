//! A plugin's cloud disclosures (seed 000): the shipped 树洞 plugin's page shows its Allow cloud
//! switch with the lines of `cloud.disclosures` beside it, in the app's language, and the
//! consent screen lists the same lines; the switch's tap is the plugin's cloud consent.

use std::sync::Arc;

use async_trait::async_trait;
use harness_core::invoke::{ApprovalBroker, Prompt};
use harness_core::policy::Answer;
use harness_core::screens::{Live, Screens};
use harness_core::secrets::MemorySecrets;
use harness_core::settings::parse_change;
use harness_core::{Engine, Options};
use serde_json::json;

struct Deny;

#[async_trait]
impl ApprovalBroker for Deny {
    async fn ask(&self, _prompt: Prompt) -> Answer {
        Answer::Deny
    }
}

const TREEHOLE_ZH: &str = "你关注的树洞的编号（只有编号，没有内容）：开启「允许云端」时加密存到云端，你的设备之间同步；关闭时只存在这台手机上";
const TREEHOLE_EN: &str = "The numbers of the Treehole posts you follow (numbers only, no text): encrypted in the cloud and shared by your devices while Allow cloud is on; on this phone only while it is off";

// seed 000: "Next to the switch, the app lists the plugin's disclosure lines, which say in plain
// words what the plugin stores online."
#[tokio::test]
async fn the_plugin_page_shows_allow_cloud_with_its_disclosures_and_the_consent_screen_lists_them()
{
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(Arc::new(Deny));
    options.secrets = Arc::new(MemorySecrets::default());
    options.catalog = Arc::new(harness_core::plugins::script::Shipped);
    let engine = Arc::new(Engine::open(dir.path(), options).unwrap());
    engine.accept_terms().unwrap();
    let screens = Screens::new(engine.clone(), Live::new());

    let page = screens.plugin_detail("treehole").unwrap();
    assert_eq!(page.cloud_label.as_deref(), Some("允许云端"));
    assert!(!page.cloud_allowed);
    assert_eq!(page.disclosure, [TREEHOLE_ZH]);
    let consent = screens.consent();
    let row = consent
        .cloud
        .iter()
        .find(|r| r.plugin == "treehole")
        .unwrap();
    assert_eq!(
        (row.allowed, row.disclosure.as_slice()),
        (false, &[TREEHOLE_ZH.to_owned()][..])
    );
    // A plugin that stores nothing online has no switch and no lines.
    let canteen = screens.plugin_detail("canteen").unwrap();
    assert_eq!((canteen.cloud_label, canteen.cloud_toggle), (None, None));
    assert!(canteen.disclosure.is_empty());

    // The switch's tap is the plugin's Allow cloud consent.
    screens.act(page.cloud_toggle.unwrap()).await.unwrap();
    assert!(engine.consent().cloud.contains("treehole"));
    let on = screens.plugin_detail("treehole").unwrap();
    assert!(on.cloud_allowed);

    engine
        .change_setting(parse_change("language", &json!("en")).unwrap())
        .unwrap();
    let page = screens.plugin_detail("treehole").unwrap();
    assert_eq!(page.cloud_label.as_deref(), Some("Allow cloud"));
    assert_eq!(page.disclosure, [TREEHOLE_EN]);
    let consent = screens.consent();
    let row = consent
        .cloud
        .iter()
        .find(|r| r.plugin == "treehole")
        .unwrap();
    assert_eq!(
        (row.allowed, row.disclosure.as_slice()),
        (true, &[TREEHOLE_EN.to_owned()][..])
    );
}

// seed 000 / the SDK: a TypeScript plugin still declaring the single `disclosure` list is a
// DefinitionError naming `cloud.disclosures`, and so is a `cloud.disclosures` that is no list of
// lines; `cloud.disclosures` with its English loads.
#[test]
fn the_sdk_names_cloud_disclosures_for_the_old_field_and_a_bad_list() {
    use harness_core::plugins::script::{self, Limits};
    let bundle = |declared: &str| {
        format!(
            r#""use strict";var __pkuBundle=(()=>{{
const n=globalThis.__pkuModules["@pku-harness/sdk"];
return {{default:n.definePlugin({{id:"notes",title:"笔记",tools:{{}},{declared}}})}};}})();"#
        )
    };
    let refused = |declared: &str| {
        script::load(&bundle(declared), Limits::default())
            .err()
            .expect("refused")
            .to_string()
    };
    let old = refused(r#"disclosure:["你的笔记"]"#);
    assert!(
        old.contains("cloud.disclosures: the plugin's disclosure lines are now cloud: { disclosures: [...] } (their English in i18n.en.cloud.disclosures)"),
        "{old}"
    );
    let bad = refused(r#"cloud:{disclosures:"你的笔记"}"#);
    assert!(
        bad.contains(
            "cloud.disclosures: a list of lines (strings) saying what the plugin stores online"
        ),
        "{bad}"
    );
    let (plugin, _) = script::load(
        &bundle(
            r#"cloud:{disclosures:["你的笔记"]},i18n:{en:{cloud:{disclosures:["Your notes"]}}}"#,
        ),
        Limits::default(),
    )
    .unwrap();
    assert_eq!(
        (
            plugin.disclosure.as_slice(),
            plugin.disclosure_en.as_slice()
        ),
        (&["你的笔记".to_owned()][..], &["Your notes".to_owned()][..])
    );
}
