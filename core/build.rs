//! Stores the SDK runtime (sdk/runtime.js: the SDK and zod every TypeScript plugin imports)
//! deflated in the library: 0.23 MB of JavaScript is a few tens of KB compressed, and the core
//! inflates it once per process, when the first plugin runtime compiles it to bytecode
//! (plugins::script::sdk_runtime; docs/size.md).

use std::io::Write;

fn main() {
    let source = "../sdk/runtime.js";
    println!("cargo:rerun-if-changed={source}");
    let text = std::fs::read(source).expect("sdk/runtime.js: build it with sdk/build.mjs");
    let mut deflated = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    deflated.write_all(&text).expect("deflating into memory");
    let deflated = deflated.finish().expect("deflating into memory");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("runtime.js.deflate"), deflated).expect("writing OUT_DIR");
}
