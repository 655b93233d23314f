//! Stores the shipped JavaScript deflated in the library (docs/size.md): the SDK runtime
//! (sdk/runtime.js: the SDK and zod every TypeScript plugin imports), the JSON Schema
//! validator (sdk/validator.js, `schema`) and each shipped plugin's
//! `bundle.js` and `manifest.json` (plugins/<id>/). 0.36 MB of text is under 0.1 MB
//! compressed; the core inflates the runtime once per process, when the first plugin runtime
//! compiles it to bytecode, a bundle's manifest when an engine opens and its bundle when its
//! runtime is made (plugins::script::{sdk_runtime, Bundle}).

use std::io::Write;
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    deflate(
        Path::new("../sdk/runtime.js"),
        &out.join("runtime.js.deflate"),
    );
    deflate(
        Path::new("../sdk/validator.js"),
        &out.join("validator.js.deflate"),
    );
    println!("cargo:rerun-if-changed=../plugins");
    let plugins = std::fs::read_dir("../plugins").expect("plugins/: the shipped plugins");
    for plugin in plugins {
        let plugin = plugin.expect("reading plugins/").path();
        let Some(id) = plugin.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        for file in ["bundle.js", "manifest.json"] {
            let from = plugin.join(file);
            if from.is_file() {
                let to = out.join("plugins").join(id);
                std::fs::create_dir_all(&to).expect("writing OUT_DIR");
                deflate(&from, &to.join(format!("{file}.deflate")));
            }
        }
    }
}

fn deflate(from: &Path, to: &Path) {
    println!("cargo:rerun-if-changed={}", from.display());
    let text = std::fs::read(from)
        .unwrap_or_else(|e| panic!("{}: {e} (sdk/build.mjs builds it)", from.display()));
    let mut deflated = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    deflated.write_all(&text).expect("deflating into memory");
    let deflated = deflated.finish().expect("deflating into memory");
    std::fs::write(to, deflated).expect("writing OUT_DIR");
}
