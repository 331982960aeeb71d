//! The `.npy` reader: any bytes are read or refused; what is read writes back and reads again
//! to the same array.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovir::io::npy;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = npy::read_bytes(data, 1 << 24) {
        let bytes = npy::to_bytes(&t);
        let again = npy::read_bytes(&bytes, 1 << 24).expect("ovir reads what it wrote");
        assert_eq!(again.element_type(), t.element_type());
        assert_eq!(again.shape(), t.shape());
        assert_eq!(npy::to_bytes(&again), bytes);
    }
});
