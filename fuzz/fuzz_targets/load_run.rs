//! XML bytes (and weights) → load → run on small random inputs, under a small memory budget.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use ovir::io::random;

fuzz_target!(|data: &[u8]| {
    let (xml, bin) = common::split(data);
    let options = ovir::LoadOptions {
        max_memory: Some(1 << 22),
        ..Default::default()
    };
    let Ok(model) = ovir::Model::from_bytes("fuzz.xml", xml, bin, &options) else {
        return;
    };
    let mut rng = random::Rng::new(data.len() as u64);
    let Some(inputs) = random::inputs(model.graph(), &mut rng, 1 << 12) else {
        return;
    };
    match model.run(inputs) {
        Ok(outputs) => {
            for o in outputs {
                let _ = ovir::io::text::render(&o.name, &o.tensor, Default::default());
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
