//! The Swift bindings generator, pinned like uniffi-bindgen: UniFFI's Swift-only command, which
//! writes one module map for the headers of both components (scripts/gen-bindings.sh).
fn main() {
    uniffi::uniffi_bindgen_swift()
}
