//! Stores the shipped JavaScript deflated in the library (docs/size.md): the SDK runtime
//! (sdk/runtime.js: the SDK and zod every TypeScript plugin imports), the JSON Schema
//! validator (sdk/validator.js, `schema`), both as bytecode, and each shipped plugin's
//! `bundle.js` (plugins/<id>/), inflated when its runtime is made (plugins::script::Bundle);
//! its `manifest.json`, which every open reads, is stored as text (`include_str!`). The SDK
//! runtime and the validator are compiled here to QuickJS bytecode, stored deflated, which a
//! runtime loads (plugins::script::load_sdk, schema::Engine): no process parses them (issue 40:
//! a bundle's first call within 10 ms).

use std::io::Write;
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    compile_module(
        Path::new("../sdk/runtime.js"),
        "@pku-harness/runtime",
        &out.join("runtime.qjsbc.deflate"),
    );
    compile_module(
        Path::new("../sdk/validator.js"),
        "@pku-harness/validator",
        &out.join("validator.qjsbc.deflate"),
    );
    println!("cargo:rerun-if-changed=../plugins");
    let plugins = std::fs::read_dir("../plugins").expect("plugins/: the shipped plugins");
    for plugin in plugins {
        let plugin = plugin.expect("reading plugins/").path();
        let Some(id) = plugin.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        let from = plugin.join("bundle.js");
        if from.is_file() {
            let to = out.join("plugins").join(id);
            std::fs::create_dir_all(&to).expect("writing OUT_DIR");
            deflate(&from, &to.join("bundle.js.deflate"));
        }
    }
}

/// The module `name` of `from`, compiled and written as QuickJS bytecode without its source text
/// (line numbers stay), deflated into `to`. QuickJS's bytecode is its own
/// version's, in little-endian order whatever the machine building: the same crate version is
/// linked into the library, which reads it on any of the phones' architectures.
fn compile_module(from: &Path, name: &str, to: &Path) {
    println!("cargo:rerun-if-changed={}", from.display());
    let source = std::fs::read_to_string(from)
        .unwrap_or_else(|e| panic!("{}: {e} (sdk/build.mjs builds it)", from.display()));
    let runtime = rquickjs::Runtime::new().expect("a QuickJS runtime for build.rs");
    let context = rquickjs::Context::full(&runtime).expect("a QuickJS context for build.rs");
    let bytecode = context
        .with(|cx| {
            let module = rquickjs::Module::declare(cx.clone(), name, source)?;
            module.write(rquickjs::WriteOptions {
                endianness: rquickjs::WriteOptionsEndianness::Little,
                strip_source: true,
                ..rquickjs::WriteOptions::default()
            })
        })
        .unwrap_or_else(|e| panic!("{}: does not compile in QuickJS: {e}", from.display()));
    write_deflated(&bytecode, to);
}

fn deflate(from: &Path, to: &Path) {
    println!("cargo:rerun-if-changed={}", from.display());
    let text = std::fs::read(from)
        .unwrap_or_else(|e| panic!("{}: {e} (sdk/build.mjs builds it)", from.display()));
    write_deflated(&text, to);
}

fn write_deflated(text: &[u8], to: &Path) {
    let mut deflated = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    deflated.write_all(text).expect("deflating into memory");
    let deflated = deflated.finish().expect("deflating into memory");
    std::fs::write(to, deflated).expect("writing OUT_DIR");
}
