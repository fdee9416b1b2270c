//! Hash maps and sets go on the wire in increasing key order, as `BTreeMap` and
//! `BTreeSet` do, and decoders refuse any other order: a map encodes to the same bits
//! whatever its type, hash seed, capacity or insertion history, and what decodes
//! encodes again to the same bits.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use netser::trace::layout;
use netser::{Decoder, Encoder, ErrorKind, NetSerialize, ReadStream, Result, WriteStream};
use proptest::prelude::*;

// ---- types: each hash type beside its BTree twin -----------------------------------

#[derive(NetSerialize, Debug, PartialEq)]
struct HashScores {
    #[net(max_len = 40, range = 0..=999)]
    by_player: HashMap<u16, u16>,
}

#[derive(NetSerialize, Debug, PartialEq)]
struct TreeScores {
    #[net(max_len = 40, range = 0..=999)]
    by_player: BTreeMap<u16, u16>,
}

#[derive(NetSerialize, Debug, PartialEq)]
struct HashSeen {
    #[net(max_len = 40)]
    players: HashSet<u16>,
}

#[derive(NetSerialize, Debug, PartialEq)]
struct TreeSeen {
    #[net(max_len = 40)]
    players: BTreeSet<u16>,
}

/// Maps and sets inside a `Vec` and an `Option`, with string keys.
#[derive(NetSerialize, Debug, PartialEq)]
struct HashNested {
    #[net(max_len = 4)]
    rounds: Vec<HashMap<String, u8>>,
    #[net(max_len = 4)]
    teams: Option<HashSet<String>>,
}

#[derive(NetSerialize, Debug, PartialEq)]
struct TreeNested {
    #[net(max_len = 4)]
    rounds: Vec<BTreeMap<String, u8>>,
    #[net(max_len = 4)]
    teams: Option<BTreeSet<String>>,
}

/// A hasher of our own (FNV-1a): a map type with another hasher parameter.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

#[derive(NetSerialize, Debug, PartialEq)]
struct FnvScores {
    #[net(max_len = 40, range = 0..=999)]
    by_player: HashMap<u16, u16, BuildHasherDefault<Fnv>>,
}

/// Small types, for random input that often decodes: 3 entries at most, one-byte keys.
#[derive(NetSerialize, Debug, PartialEq)]
struct Small {
    #[net(max_len = 3)]
    map: HashMap<u8, bool>,
    #[net(max_len = 3)]
    set: HashSet<u8>,
    #[net(max_len = 2)]
    nested: Vec<HashSet<bool>>,
    #[net(max_len = 2, range = 0..=3)]
    maybe: Option<HashMap<bool, u8>>,
}

// ---- helpers -----------------------------------------------------------------------

/// A small deterministic generator (xorshift64*), for shuffles.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

fn forge(f: impl FnOnce(&mut WriteStream<'_>) -> Result<()>) -> Vec<u8> {
    let mut buf = [0u8; 256];
    let mut w = WriteStream::new(&mut buf);
    f(&mut w).unwrap();
    let len = w.finish();
    buf[..len].to_vec()
}

/// The first `n` bits of `bytes`, one `bool` each, as the reader sees them.
fn bits(bytes: &[u8], n: u64) -> Vec<bool> {
    let mut r = ReadStream::new(bytes);
    (0..n).map(|_| r.read_bool().unwrap()).collect()
}

/// Decodes `bytes` as `T`; when it decodes, its encoding must be the bits it was read
/// from. Returns whether it decoded.
fn decodes_to_the_same_bits<T: NetSerialize>(bytes: &[u8]) -> bool {
    let mut r = ReadStream::new(bytes);
    let Ok(value) = T::decode(&mut r) else {
        return false;
    };
    let read = r.bit_position();
    let encoded = value.to_vec().unwrap();
    assert_eq!(value.measure_bits().unwrap(), read);
    assert_eq!(bits(&encoded, read), bits(bytes, read));
    true
}

/// The path after the type's name (`by_player[1].key` of `HashScores.by_player[1].key`).
fn path_in_type(err: &netser::Error) -> String {
    let path = err.path();
    path.split_once('.')
        .map_or(path.clone(), |(_, p)| p.to_string())
}

/// `HashScores` bytes: `len`, then the given entries (values as raw 10-bit offsets, so
/// one can be out of range).
fn scores_bytes(len: usize, entries: &[(u16, u16)]) -> Vec<u8> {
    forge(|w| {
        w.write_int(len, 0, 40)?;
        for &(k, v) in entries {
            w.write_value(&k)?;
            w.write_bits(u64::from(v), 10)?;
        }
        Ok(())
    })
}

fn string(w: &mut WriteStream<'_>, s: &str) -> Result<()> {
    w.write_string(s, 4)
}

const SCORES: [(u16, u16); 12] = [
    (900, 1),
    (3, 999),
    (65535, 0),
    (0, 17),
    (42, 42),
    (7, 7),
    (1000, 500),
    (256, 2),
    (255, 3),
    (12345, 4),
    (1, 998),
    (31, 31),
];

// ---- encode: one order for every map -----------------------------------------------

#[test]
fn hash_and_btree_maps_with_the_same_entries_encode_identically() {
    let hash = HashScores {
        by_player: SCORES.into_iter().collect(),
    };
    let tree = TreeScores {
        by_player: SCORES.into_iter().collect(),
    };
    let bytes = hash.to_vec().unwrap();
    assert_eq!(bytes, tree.to_vec().unwrap());
    // Keys in increasing order on the wire: 0, 1, 3, 7, ... as the BTreeMap iterates.
    let mut r = ReadStream::new(&bytes);
    assert_eq!(r.read_int(0usize, 40).unwrap(), SCORES.len());
    let mut keys = Vec::new();
    for _ in 0..SCORES.len() {
        keys.push(r.read_value::<u16>().unwrap());
        r.read_int(0u16, 999).unwrap();
    }
    let mut sorted: Vec<u16> = SCORES.iter().map(|e| e.0).collect();
    sorted.sort_unstable();
    assert_eq!(keys, sorted);
    // Each decodes the other's bytes; the traces are the same, entry by entry.
    assert_eq!(TreeScores::decode_from_slice(&bytes).unwrap(), tree);
    assert_eq!(HashScores::decode_from_slice(&bytes).unwrap(), hash);
    assert_eq!(layout(&hash).unwrap(), layout(&tree).unwrap());

    let fnv = FnvScores {
        by_player: SCORES.into_iter().collect(),
    };
    assert_eq!(fnv.to_vec().unwrap(), bytes);
    assert_eq!(FnvScores::decode_from_slice(&bytes).unwrap(), fnv);
}

#[test]
fn hash_and_btree_sets_with_the_same_elements_encode_identically() {
    let keys = SCORES.map(|e| e.0);
    let hash = HashSeen {
        players: keys.into_iter().collect(),
    };
    let tree = TreeSeen {
        players: keys.into_iter().collect(),
    };
    let bytes = hash.to_vec().unwrap();
    assert_eq!(bytes, tree.to_vec().unwrap());
    assert_eq!(TreeSeen::decode_from_slice(&bytes).unwrap(), tree);
    assert_eq!(HashSeen::decode_from_slice(&bytes).unwrap(), hash);
    assert_eq!(layout(&hash).unwrap(), layout(&tree).unwrap());
}

#[test]
fn encode_ignores_insertion_order_capacity_and_hash_seed() {
    let expected = TreeScores {
        by_player: SCORES.into_iter().collect(),
    }
    .to_vec()
    .unwrap();
    let expected_set = TreeSeen {
        players: SCORES.iter().map(|e| e.0).collect(),
    }
    .to_vec()
    .unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut orders = HashSet::new();
    for round in 0..200 {
        let mut entries = SCORES;
        rng.shuffle(&mut entries);
        let capacity = [0, 1, 12, 13, 64, 1000][round % 6];
        // A fresh `RandomState` each time: another seed, another iteration order.
        let mut map = HashMap::with_capacity_and_hasher(capacity, RandomState::new());
        let mut set = HashSet::with_capacity_and_hasher(capacity, RandomState::new());
        for (k, v) in entries {
            map.insert(k, v);
            set.insert(k);
        }
        orders.insert(map.keys().copied().collect::<Vec<_>>());
        orders.insert(set.iter().copied().collect::<Vec<_>>());
        assert_eq!(HashScores { by_player: map }.to_vec().unwrap(), expected);
        assert_eq!(HashSeen { players: set }.to_vec().unwrap(), expected_set);
    }
    // The maps did iterate in many orders: the test can tell them apart.
    assert!(orders.len() > 100, "{} iteration orders", orders.len());

    // Removing and re-inserting changes a table's history, not its encoding.
    let mut map: HashMap<u16, u16> = (0..40).map(|k| (k * 1000, k)).collect();
    for k in 10..40 {
        map.remove(&(k * 1000));
    }
    map.extend(SCORES);
    for k in 0..10 {
        map.remove(&(k * 1000));
    }
    map.extend(SCORES);
    assert_eq!(HashScores { by_player: map }.to_vec().unwrap(), expected);
}

#[test]
fn nested_maps_and_sets_encode_as_their_btree_twins() {
    let round = |i: u8| -> Vec<(String, u8)> {
        ["dd", "a", "ccc", "b"]
            .iter()
            .take(usize::from(i))
            .map(|s| (s.to_string(), i))
            .collect()
    };
    let teams = ["red", "blue", "gold"].map(String::from);
    let hash = HashNested {
        rounds: (0..4).map(|i| round(i).into_iter().collect()).collect(),
        teams: Some(teams.iter().cloned().collect()),
    };
    let tree = TreeNested {
        rounds: (0..4).map(|i| round(i).into_iter().collect()).collect(),
        teams: Some(teams.iter().cloned().collect()),
    };
    let bytes = hash.to_vec().unwrap();
    assert_eq!(bytes, tree.to_vec().unwrap());
    assert_eq!(HashNested::decode_from_slice(&bytes).unwrap(), hash);
    assert_eq!(layout(&hash).unwrap(), layout(&tree).unwrap());
    assert!(decodes_to_the_same_bits::<HashNested>(&bytes));
}

#[test]
fn an_over_long_map_is_refused_before_it_is_sorted() {
    let map: HashMap<u16, u16> = (0..41).map(|k| (k, 1)).collect();
    let err = HashScores { by_player: map }.to_vec().unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::LengthTooLong { len: 41, max: 40 });
    assert_eq!(err.path(), "HashScores.by_player");
    assert_eq!(err.bit(), 0);
    let set: HashSet<u16> = (0..41).collect();
    let err = HashSeen { players: set }.to_vec().unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::LengthTooLong { len: 41, max: 40 });
    assert_eq!(err.path(), "HashSeen.players");
}

/// A key whose `Ord` sees only its first member while `Eq` and `Hash` see both: two keys
/// a hash map holds apart sort as one. The encoder refuses them (a decoder would call
/// them duplicates) instead of writing bits no decoder accepts.
#[derive(NetSerialize, Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Loose(u8, u8);

impl PartialOrd for Loose {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Loose {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

#[derive(NetSerialize, Debug, PartialEq)]
struct LooseMap {
    #[net(max_len = 4)]
    map: HashMap<Loose, u8>,
    #[net(max_len = 4)]
    set: HashSet<Loose>,
}

#[test]
fn keys_equal_under_ord_but_not_eq_are_an_encode_error() {
    let fine = LooseMap {
        map: HashMap::from([(Loose(2, 0), 1), (Loose(1, 9), 2)]),
        set: HashSet::from([Loose(5, 5), Loose(4, 4)]),
    };
    let bytes = fine.to_vec().unwrap();
    assert!(decodes_to_the_same_bits::<LooseMap>(&bytes));

    let map = LooseMap {
        map: HashMap::from([(Loose(1, 0), 1), (Loose(1, 9), 2), (Loose(0, 0), 3)]),
        set: HashSet::new(),
    };
    let err = map.to_vec().unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Custom("map keys equal under `Ord` but distinct under `Eq`")
    );
    // The second of the two in sorted order, before any entry is written (3 bits of
    // length).
    assert_eq!(err.path(), "LooseMap.map[2].key");
    assert_eq!(err.bit(), 3);

    let set = LooseMap {
        map: HashMap::new(),
        set: HashSet::from([Loose(3, 1), Loose(3, 2)]),
    };
    let err = set.to_vec().unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Custom("set elements equal under `Ord` but distinct under `Eq`")
    );
    assert_eq!(err.path(), "LooseMap.set[1]");
    assert_eq!(err.bit(), 6);
}

// ---- decode: increasing order only -------------------------------------------------

/// `HashScores` and `TreeScores` refuse `bytes` with the same error at the same bit.
fn refused_alike(bytes: &[u8]) -> netser::Error {
    let hash = HashScores::decode_from_slice(bytes).unwrap_err();
    let tree = TreeScores::decode_from_slice(bytes).unwrap_err();
    assert_eq!(hash.kind(), tree.kind());
    assert_eq!(hash.bit(), tree.bit());
    assert_eq!(path_in_type(&hash), path_in_type(&tree));
    hash
}

#[test]
fn out_of_order_map_keys_are_refused_at_the_key() {
    // 6 bits of length, then 26 bits per entry (16 of key, 10 of value).
    let err = refused_alike(&scores_bytes(3, &[(1, 0), (5, 0), (4, 0)]));
    assert_eq!(
        err.kind(),
        &ErrorKind::Custom("map keys not in increasing order")
    );
    assert_eq!(err.path(), "HashScores.by_player[2].key");
    assert_eq!(err.bit(), 6 + 2 * 26);

    let err = refused_alike(&scores_bytes(2, &[(65535, 0), (0, 0)]));
    assert_eq!(
        err.kind(),
        &ErrorKind::Custom("map keys not in increasing order")
    );
    assert_eq!(err.path(), "HashScores.by_player[1].key");
    assert_eq!(err.bit(), 6 + 26);
}

#[test]
fn duplicate_map_keys_are_refused_at_the_second() {
    let err = refused_alike(&scores_bytes(3, &[(1, 0), (7, 1), (7, 2)]));
    assert_eq!(err.kind(), &ErrorKind::Custom("duplicate key in a map"));
    assert_eq!(err.path(), "HashScores.by_player[2].key");
    assert_eq!(err.bit(), 6 + 2 * 26);
}

#[test]
fn a_bad_value_is_reported_before_the_order_of_its_key() {
    // The entry is read whole before its key is compared, on both paths: a value out of
    // range behind an out-of-order key is the value's error.
    let err = refused_alike(&scores_bytes(2, &[(5, 0), (4, 1000)]));
    assert!(matches!(err.kind(), ErrorKind::OutOfRange { .. }), "{err}");
    assert_eq!(err.path(), "HashScores.by_player[1].value");
}

#[test]
fn set_elements_out_of_order_or_repeated_are_refused() {
    let set_bytes = |elements: &[u16]| {
        forge(|w| {
            w.write_int(elements.len(), 0, 40)?;
            for e in elements {
                w.write_value(e)?;
            }
            Ok(())
        })
    };
    for (elements, kind, index) in [
        (&[3, 2][..], "set elements not in increasing order", 1),
        (&[1, 2, 9, 9], "duplicate element in a set", 3),
        (&[1, 2, 9, 8], "set elements not in increasing order", 3),
    ] {
        let bytes = set_bytes(elements);
        let hash = HashSeen::decode_from_slice(&bytes).unwrap_err();
        let tree = TreeSeen::decode_from_slice(&bytes).unwrap_err();
        assert_eq!(hash.kind(), &ErrorKind::Custom(kind));
        assert_eq!(hash.kind(), tree.kind());
        assert_eq!(hash.path(), format!("HashSeen.players[{index}]"));
        assert_eq!(path_in_type(&hash), path_in_type(&tree));
        assert_eq!(hash.bit(), 6 + 16 * index as u64);
        assert_eq!(hash.bit(), tree.bit());
    }
    // In increasing order it decodes, to what it was encoded from.
    let bytes = set_bytes(&[2, 3, 500]);
    let set = HashSeen::decode_from_slice(&bytes).unwrap();
    assert_eq!(set.players, HashSet::from([2, 3, 500]));
    assert_eq!(set.to_vec().unwrap(), bytes);
}

#[test]
fn nested_out_of_order_keys_name_their_place() {
    // rounds: [{}, {"b": 1, "a": 2}]; teams: None.
    let mut at = 0;
    let bytes = forge(|w| {
        w.write_int(2usize, 0, 4)?;
        w.write_int(0usize, 0, 4)?;
        w.write_int(2usize, 0, 4)?;
        string(w, "b")?;
        w.write_value(&1u8)?;
        at = w.bit_position();
        string(w, "a")?;
        w.write_value(&2u8)?;
        w.write_bool(false)
    });
    let hash = HashNested::decode_from_slice(&bytes).unwrap_err();
    let tree = TreeNested::decode_from_slice(&bytes).unwrap_err();
    assert_eq!(
        hash.kind(),
        &ErrorKind::Custom("map keys not in increasing order")
    );
    assert_eq!(hash.path(), "HashNested.rounds[1][1].key");
    assert_eq!(hash.bit(), at);
    assert_eq!((hash.kind(), hash.bit()), (tree.kind(), tree.bit()));
    assert_eq!(path_in_type(&hash), path_in_type(&tree));

    // teams: Some({"b", "b"}).
    let bytes = forge(|w| {
        w.write_int(0usize, 0, 4)?;
        w.write_bool(true)?;
        w.write_int(2usize, 0, 4)?;
        string(w, "b")?;
        string(w, "b")
    });
    let hash = HashNested::decode_from_slice(&bytes).unwrap_err();
    let tree = TreeNested::decode_from_slice(&bytes).unwrap_err();
    assert_eq!(
        hash.kind(),
        &ErrorKind::Custom("duplicate element in a set")
    );
    assert_eq!(hash.path(), "HashNested.teams[1]");
    assert_eq!((hash.kind(), hash.bit()), (tree.kind(), tree.bit()));
}

// ---- what decodes encodes again to the same bits -----------------------------------

fn small_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..24)
}

/// Valid `Small` values, encoded, then one bit flipped: inputs near the valid ones.
fn mutated_small() -> impl Strategy<Value = Vec<u8>> {
    let small = (
        prop::collection::hash_map(any::<u8>(), any::<bool>(), 0..=3),
        prop::collection::hash_set(any::<u8>(), 0..=3),
        prop::collection::vec(prop::collection::hash_set(any::<bool>(), 0..=2), 0..=2),
        prop::option::of(prop::collection::hash_map(any::<bool>(), 0u8..=3, 0..=2)),
    )
        .prop_map(|(map, set, nested, maybe)| Small {
            map,
            set,
            nested,
            maybe,
        });
    (small, any::<prop::sample::Index>()).prop_map(|(v, flip)| {
        let mut bytes = v.to_vec().unwrap();
        assert!(decodes_to_the_same_bits::<Small>(&bytes));
        let bit = flip.index(bytes.len() * 8);
        bytes[bit / 8] ^= 1 << (bit % 8);
        bytes
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_that_decode_encode_to_the_same_bits(bytes in small_bytes()) {
        decodes_to_the_same_bits::<Small>(&bytes);
        decodes_to_the_same_bits::<HashSeen>(&bytes);
        decodes_to_the_same_bits::<HashScores>(&bytes);
        decodes_to_the_same_bits::<HashNested>(&bytes);
    }

    #[test]
    fn mutated_encodings_that_decode_encode_to_the_same_bits(bytes in mutated_small()) {
        decodes_to_the_same_bits::<Small>(&bytes);
    }

    #[test]
    fn hash_and_btree_maps_agree(
        entries in prop::collection::vec((any::<u16>(), 0u16..=999), 0..=40),
        seed in any::<u64>(),
    ) {
        let tree = TreeScores { by_player: entries.iter().copied().collect() };
        let mut shuffled: Vec<_> = tree.by_player.iter().map(|(k, v)| (*k, *v)).collect();
        Rng(seed | 1).shuffle(&mut shuffled);
        let hash = HashScores { by_player: shuffled.into_iter().collect() };
        let bytes = tree.to_vec().unwrap();
        prop_assert_eq!(hash.to_vec().unwrap(), bytes.clone());
        prop_assert_eq!(HashScores::decode_from_slice(&bytes).unwrap(), hash);
    }
}

/// Random input does reach both outcomes: the property above is not vacuous.
#[test]
fn random_input_decodes_often_enough() {
    let mut rng = Rng(7);
    let mut decoded = 0;
    let mut sorted_non_empty = 0;
    for _ in 0..2000 {
        let bytes: Vec<u8> = (0..12).map(|_| rng.next() as u8).collect();
        if decodes_to_the_same_bits::<Small>(&bytes) {
            decoded += 1;
            let v = Small::decode_from_slice(&bytes).unwrap();
            if v.map.len() > 1 || v.set.len() > 1 {
                sorted_non_empty += 1;
            }
        }
    }
    assert!(decoded > 100, "{decoded} of 2000 decoded");
    assert!(
        sorted_non_empty > 20,
        "{sorted_non_empty} with two entries or more"
    );
}
