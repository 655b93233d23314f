//! The bindings generator, pinned to the uniffi version the library is built with.
//! `cargo run -p harness-ffi --features cli --bin uniffi-bindgen -- generate --library …`
fn main() {
    uniffi::uniffi_bindgen_main()
}
