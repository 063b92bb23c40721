//! What the frame-decoder fuzz target checks (also run by proto's fuzz-smoke test):
//! any bytes, pushed whole or in two pieces, decode without a panic; a message that
//! decodes encodes and decodes again to itself.

use proto::codec::{encode, Decoder};
use proto::msg::{FromAgent, ToAgent};

fn all<T>(data: &[u8], split: usize)
where
    T: serde::de::DeserializeOwned + serde::Serialize + PartialEq + std::fmt::Debug,
{
    let mut d = Decoder::new();
    let (a, b) = data.split_at(split.min(data.len()));
    d.push(a);
    let mut pushed_b = false;
    loop {
        match d.next_frame::<T>() {
            Ok(Some(m)) => {
                let again = encode(&m).expect("a decoded message encodes");
                let mut d2 = Decoder::new();
                d2.push(&again);
                assert_eq!(d2.next_frame::<T>().unwrap().as_ref(), Some(&m));
                assert!(d2.finish().is_ok());
            }
            Ok(None) if !pushed_b => {
                d.push(b);
                pushed_b = true;
            }
            Ok(None) | Err(_) => break,
        }
    }
    let _ = d.finish();
}

pub fn check(data: &[u8]) {
    let split = data.first().map_or(0, |b| *b as usize);
    all::<ToAgent>(data, split);
    all::<FromAgent>(data, split);
    all::<FromAgent>(data, data.len());
}
