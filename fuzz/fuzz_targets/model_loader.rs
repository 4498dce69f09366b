//! Arbitrary bytes as a Swing model file: loading never panics, and a model
//! that passes its checks serialises back to itself and gives every side
//! its network tuples.
#![no_main]

use libfuzzer_sys::fuzz_target;
use swing::{Model, Side};

fuzz_target!(|data: &[u8]| {
    let Ok(m) = serde_json::from_slice::<Model>(data) else { return };
    if m.check().is_err() {
        return;
    }
    let text = serde_json::to_string(&m).expect("a model serialises");
    let back: Model = serde_json::from_str(&text).expect("a serialised model parses");
    back.check().expect("a serialised model passes its checks");
    for side in [Side::A, Side::B] {
        for t in m.net_tuples(side, (0.05, 1e7, 0.0)) {
            assert!(t.rtt_s.is_finite() && t.capacity_bps > 0.0 && (0.0..=1.0).contains(&t.loss), "{t:?}");
        }
    }
    let _ = swing::compare(&m, &back);
});
