//! XML bytes (and weights) → load → check: every diagnostic is rendered, as `ovir check` does.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (xml, bin) = common::split(data);
    match ovir::Model::from_bytes("fuzz.xml", xml, bin, &ovir::LoadOptions::default()) {
        Ok(model) => {
            let (_, found) = model.infer();
            for d in found {
                let _ = d.error.to_string();
                let _ = d.error.kind().hint();
            }
        }
        Err(e) => {
            for e in e.iter() {
                let _ = e.to_string();
            }
        }
    }
});
