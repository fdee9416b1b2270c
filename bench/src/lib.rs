//! netser measured side by side with the serializers a game programmer would pick instead,
//! on one workload a game sends: a snapshot of N entities (id, position in a bounded world,
//! orientation, velocity gated by an at-rest bit, bounded health, three flags).
//!
//! * [`model`]: the struct as a user writes it, with netser's attributes and bitcode's and
//!   bincode's derives on the same type; [`data`]: fixed-seed snapshots.
//! * one module per serializer, each a [`Contender`] holding its input, its reused buffer
//!   and its last decoded value: [`netser_codec`] (derived, and a hand-written control),
//!   [`bitcode_codec`] (on the `f32` struct and pre-quantized), [`bincode_codec`],
//!   [`naia_codec`], [`memcpy_codec`] (the floor); [`lean_codec`] is an experiment (the
//!   same bytes through netser's bit layer with coalesced writes).
//!
//! `benches/peers.rs` (criterion) and the `report` program time them; see BENCHMARKS.md.
//!
//! ```
//! use netser_bench::{contenders, Workload};
//!
//! for mut c in contenders(&[Workload::new(64, true).snapshot()]) {
//!     let bytes = c.encode();
//!     c.decode();
//!     println!("{}: {bytes} bytes", c.name());
//! }
//! ```

pub mod bincode_codec;
pub mod bitcode_codec;
pub mod column_codec;
pub mod data;
pub mod lean_codec;
pub mod memcpy_codec;
pub mod model;
pub mod naia_codec;
pub mod netser_codec;
mod rotation;
pub mod scene;

pub use data::{Rest, Workload, RANDOM_VARIANTS};
pub use model::{Entity, Position, Snapshot};
pub use rotation::Rotation;

/// One serializer set up on one snapshot: encode it, decode what was encoded.
pub trait Contender {
    /// Short name used in tables and charts.
    fn name(&self) -> &'static str;
    /// Encodes the input into the contender's reused buffer; returns the length in bytes.
    ///
    /// # Panics
    /// If the serializer fails on the workload (it never does: tests check it).
    fn encode(&mut self) -> usize;
    /// Decodes the bytes of the next snapshot (its only one, or the next of those it takes
    /// in turn, see [`Rotation`]) into a new value, kept until the next call (so dropping
    /// the previous one is part of the cost, for every contender).
    ///
    /// # Panics
    /// If the bytes do not decode.
    fn decode(&mut self);
    /// The bytes of the last encode.
    fn bytes(&self) -> &[u8];
    /// The last decoded value as the shared snapshot, for contenders whose value converts
    /// back to it (all but the pre-quantized and naia ones, which check themselves).
    fn decoded(&self) -> Option<Snapshot>;
}

/// A contender made of an encode and a decode function on the snapshot (the netser
/// experiments), with a reused buffer of the snapshot's `MAX_BYTES`.
pub struct FnCodec {
    name: &'static str,
    rotation: Rotation<Snapshot>,
    buf: Vec<u8>,
    output: Option<Snapshot>,
    encode: fn(&Snapshot, &mut [u8]) -> netser::Result<usize>,
    decode: fn(&[u8]) -> netser::Result<Snapshot>,
}

impl FnCodec {
    /// A contender named `name` that encodes `snapshots` in turn with `encode` and reads
    /// them with `decode`.
    ///
    /// # Panics
    /// If `encode` fails on one of them.
    pub fn new(
        name: &'static str,
        snapshots: &[Snapshot],
        encode: fn(&Snapshot, &mut [u8]) -> netser::Result<usize>,
        decode: fn(&[u8]) -> netser::Result<Snapshot>,
    ) -> Self {
        use netser::NetSerialize;
        let mut buf = vec![0; Snapshot::MAX_BYTES as usize];
        let rotation = Rotation::new(snapshots.to_vec(), |s| {
            let len = encode(s, &mut buf).expect("the workload is within bounds");
            buf[..len].to_vec()
        });
        FnCodec {
            name,
            rotation,
            buf,
            output: None,
            encode,
            decode,
        }
    }
}

impl Contender for FnCodec {
    fn name(&self) -> &'static str {
        self.name
    }

    fn encode(&mut self) -> usize {
        let encode = self.encode;
        encode(self.rotation.next_input(), &mut self.buf).expect("the workload is within bounds")
    }

    fn decode(&mut self) {
        let decode = self.decode;
        self.output = Some(decode(self.rotation.next_frame()).expect("reads what it wrote"));
    }

    fn bytes(&self) -> &[u8] {
        self.rotation.encoded()
    }

    fn decoded(&self) -> Option<Snapshot> {
        self.output.clone()
    }
}

/// Every contender on `snapshots` (taken in turn), netser first, in the order of the
/// report.
///
/// # Panics
/// If `snapshots` is empty.
pub fn contenders(snapshots: &[Snapshot]) -> Vec<Box<dyn Contender>> {
    vec![
        Box::new(netser_codec::derived(snapshots)),
        Box::new(netser_codec::derived_baseline(snapshots)),
        Box::new(netser_codec::hand(snapshots)),
        Box::new(FnCodec::new(
            "netser-lean",
            snapshots,
            lean_codec::encode,
            lean_codec::decode,
        )),
        Box::new(FnCodec::new(
            "netser-columns",
            snapshots,
            column_codec::encode,
            column_codec::decode,
        )),
        Box::new(bitcode_codec::on_f32(snapshots)),
        Box::new(bitcode_codec::on_quantized(snapshots)),
        Box::new(bincode_codec::BincodeCodec::new(snapshots)),
        Box::new(naia_codec::NaiaCodec::new(snapshots)),
        Box::new(memcpy_codec::MemcpyCodec::new(snapshots)),
    ]
}

/// Every contender on the workload's snapshots ([`Workload::snapshots`]), each taking
/// them in turn when there are several.
///
/// ```
/// use netser_bench::{contenders_for, Workload};
/// for mut c in contenders_for(&Workload::random_rest(256)) {
///     let first = c.encode();
///     let second = c.encode(); // the next snapshot: other coins, another size
///     c.decode();
///     assert!(first > 0 && second > 0, "{}", c.name());
/// }
/// ```
pub fn contenders_for(w: &Workload) -> Vec<Box<dyn Contender>> {
    contenders(&w.snapshots())
}

/// Encoded sizes of every contender on every workload: `(workload label, [(name, bytes)])`.
pub fn size_report() -> Vec<(String, Vec<(&'static str, usize)>)> {
    Workload::ALL
        .iter()
        .map(|w| {
            let sizes = contenders(&[w.snapshot()])
                .iter_mut()
                .map(|c| (c.name(), c.encode()))
                .collect();
            (w.label(), sizes)
        })
        .collect()
}

/// Whether `decoded` is `original` as netser's quantization gives it back: exact for
/// integers and flags, within half a step for quantized floats, the same rotation for the
/// orientation. Returns the first difference.
///
/// # Errors
/// A description of the first entity field that differs beyond its tolerance.
pub fn check_quantized(original: &Snapshot, decoded: &Snapshot) -> Result<(), String> {
    if original.tick != decoded.tick || original.entities.len() != decoded.entities.len() {
        return Err("tick or entity count differs".into());
    }
    for (i, (a, b)) in original.entities.iter().zip(&decoded.entities).enumerate() {
        // Half a step, plus float32 rounding of the offset from the range minimum (a
        // 4096 m span has a 0.24 mm ulp; the quantization rounds a few times).
        let close = |x: f32, y: f32, res: f32| (x - y).abs() <= res / 2.0 + 1e-3;
        let exact = a.id == b.id
            && a.at_rest == b.at_rest
            && a.health == b.health
            && (a.on_ground, a.crouching, a.firing) == (b.on_ground, b.crouching, b.firing);
        let position = close(a.position.x, b.position.x, model::POSITION_RES)
            && close(a.position.y, b.position.y, model::POSITION_RES)
            && close(a.position.z, b.position.z, model::POSITION_RES);
        let velocity = (0..3).all(|k| close(a.velocity[k], b.velocity[k], model::VELOCITY_RES));
        // q and -q are the same rotation; 10 bits per component keep |dot| near 1.
        let dot: f32 = (0..4).map(|k| a.orientation[k] * b.orientation[k]).sum();
        if !(exact && position && velocity && dot.abs() > 0.9999) {
            return Err(format!("entity {i}: {a:?} came back as {b:?}"));
        }
    }
    Ok(())
}

/// The checks every netser experiment passes (netser-lean, netser-columns), given its
/// encode and decode functions.
#[cfg(test)]
pub(crate) mod experiment_checks {
    use super::*;
    use netser::NetSerialize;

    /// Same bytes as the derive on every workload, and the same values decoded.
    pub fn same_bytes_and_values_as_the_derive(
        encode: fn(&Snapshot, &mut [u8]) -> netser::Result<usize>,
        decode: fn(&[u8]) -> netser::Result<Snapshot>,
    ) {
        for w in Workload::ALL {
            let s = w.snapshot();
            let derived = s.to_vec().unwrap();
            let mut buf = vec![0; Snapshot::MAX_BYTES as usize];
            let len = encode(&s, &mut buf).unwrap();
            assert_eq!(&buf[..len], &derived[..], "{}", w.label());
            assert_eq!(
                decode(&derived).unwrap(),
                Snapshot::decode_from_slice(&derived).unwrap()
            );
        }
    }

    /// Truncated input, out-of-bounds and NaN values, and an integer above its maximum
    /// are refused, as the derive refuses them.
    pub fn bad_input_is_refused_like_the_derive(
        encode: fn(&Snapshot, &mut [u8]) -> netser::Result<usize>,
        decode: fn(&[u8]) -> netser::Result<Snapshot>,
    ) {
        let s = Workload::new(64, false).snapshot();
        let bytes = s.to_vec().unwrap();
        assert!(decode(&bytes[..bytes.len() - 2]).is_err());
        let mut bad = s.clone();
        bad.entities[3].velocity[1] = 65.0;
        let mut buf = vec![0; Snapshot::MAX_BYTES as usize];
        assert!(encode(&bad, &mut buf).is_err());
        bad.entities[3].velocity[1] = f32::NAN;
        assert!(encode(&bad, &mut buf).is_err());
        // A position integer above its maximum (all ones in x's 19 bits).
        let mut raw = bytes.clone();
        raw[7] |= 0xFF;
        raw[8] |= 0xFF;
        assert!(decode(&raw).is_err());
        assert!(Snapshot::decode_from_slice(&raw).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_contender_round_trips_every_workload() {
        for w in Workload::ALL {
            let s = w.snapshot();
            for mut c in contenders(std::slice::from_ref(&s)) {
                let len = c.encode();
                assert!(len > 0);
                assert_eq!(c.bytes().len(), len);
                c.decode();
                match c.name() {
                    "netser" | "netser-sse2" | "netser-hand" | "netser-lean" | "netser-columns" => {
                        check_quantized(&s, &c.decoded().unwrap())
                            .unwrap_or_else(|e| panic!("{} {}: {e}", c.name(), w.label()))
                    }
                    "bitcode" | "bincode" | "memcpy" => {
                        assert_eq!(c.decoded().as_ref(), Some(&s), "{}", c.name())
                    }
                    // Integer-only values: their own modules check them exactly.
                    "bitcode-quant" | "naia-serde" => assert!(c.decoded().is_none()),
                    other => panic!("unexpected contender {other}"),
                }
            }
        }
    }

    #[test]
    fn random_rest_contenders_take_every_snapshot_in_turn() {
        let w = Workload::random_rest(256);
        let snapshots = w.snapshots();
        assert_eq!(snapshots.len(), RANDOM_VARIANTS);
        // The variants differ in their coins only: other gates, other sizes.
        assert!(snapshots.windows(2).all(|p| p[0] != p[1]));
        assert!(snapshots
            .iter()
            .all(|s| s.entities.len() == 256 && s.entities.iter().any(|e| e.at_rest)));
        for mut c in contenders_for(&w) {
            let mut sizes = Vec::new();
            for (k, s) in snapshots.iter().enumerate().chain([(0, &snapshots[0])]) {
                sizes.push(c.encode());
                assert_eq!(c.bytes().len(), *sizes.last().unwrap());
                c.decode();
                let name = c.name();
                if let Some(got) = c.decoded() {
                    match name {
                        "bitcode" | "bincode" | "memcpy" => assert_eq!(&got, s, "{name} {k}"),
                        _ => check_quantized(s, &got)
                            .unwrap_or_else(|e| panic!("{name} snapshot {k}: {e}")),
                    }
                }
            }
            // Round the cycle and back to the first snapshot.
            assert_eq!(sizes[0], sizes[RANDOM_VARIANTS], "{}", c.name());
            if c.name().starts_with("netser") {
                // Gated velocities: the coins change the size.
                assert!(sizes.windows(2).any(|p| p[0] != p[1]), "{}", c.name());
            }
        }
    }

    #[test]
    fn netser_re_encodes_its_own_output_to_the_same_bytes() {
        // Quantization is a fixed point: a decoded snapshot encodes to the same bytes.
        let s = Workload::new(256, true).snapshot();
        let mut c = netser_codec::derived(std::slice::from_ref(&s));
        c.encode();
        c.decode();
        let first = c.bytes().to_vec();
        let mut again = netser_codec::derived(&[c.decoded().unwrap()]);
        again.encode();
        assert_eq!(again.bytes(), &first[..]);
    }

    #[test]
    fn check_quantized_catches_a_moved_entity() {
        let s = Workload::new(64, false).snapshot();
        let mut moved = s.clone();
        moved.entities[5].position.x += 0.02;
        assert!(check_quantized(&s, &s).is_ok());
        assert!(check_quantized(&s, &moved)
            .unwrap_err()
            .contains("entity 5"));
    }

    #[test]
    fn size_report_covers_every_workload_and_contender() {
        let report = size_report();
        assert_eq!(report.len(), Workload::ALL.len());
        for (_, sizes) in &report {
            assert_eq!(sizes.len(), 10);
            let netser = sizes[0].1;
            let memcpy = sizes.iter().find(|(n, _)| *n == "memcpy").unwrap().1;
            assert!(netser < memcpy);
        }
    }
}
