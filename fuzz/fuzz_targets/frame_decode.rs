//! Frame decoding under limits: never panics, refuses what breaks a limit, and whatever it
//! accepts encodes to a frame that decodes to the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpl_protocol::frame::{self, Limits};

fuzz_target!(|data: &[u8]| {
    for limits in [
        Limits::default(),
        Limits {
            max_frame_bytes: 512,
            max_depth: 6,
        },
    ] {
        match frame::decode(data, &limits) {
            Ok(message) => {
                assert!(
                    data.len() <= limits.max_frame_bytes,
                    "a frame over the cap passed"
                );
                let bytes = frame::encode(&message);
                let again =
                    frame::decode(&bytes, &Limits::default()).expect("an encoded message decodes");
                assert_eq!(again, message, "a decoded message changed in a round trip");
            }
            Err(error) => {
                // Every refusal has a message and maps to a JSON-RPC error.
                assert!(!error.to_string().is_empty());
                let _ = error.error_object();
                let _ = error.reply();
            }
        }
    }
});
