//! Defects the fuzz targets and proptest scripts found, each with the input that found
//! it (issue 13).

use std::collections::{BTreeMap, BTreeSet};

use netser::NetSerialize;

#[derive(NetSerialize, Debug, PartialEq)]
struct Scores {
    #[net(max_len = 4)]
    by_player: BTreeMap<u8, u8>,
}

#[derive(NetSerialize, Debug, PartialEq)]
struct Seen {
    #[net(max_len = 4)]
    players: BTreeSet<u16>,
}

/// The same bits as `Scores` and `Seen`, in whatever order the list has.
#[derive(NetSerialize, Debug, PartialEq)]
struct Pairs {
    #[net(max_len = 4)]
    entries: Vec<(u8, u8)>,
}

#[derive(NetSerialize, Debug, PartialEq)]
struct Ids {
    #[net(max_len = 4)]
    ids: Vec<u16>,
}

/// Found by `decode_derived_from_mutated_encodings`: a map's keys (or a set's elements)
/// out of order decoded, and the value encoded back in order, to other bits.
#[test]
fn ordered_maps_and_sets_refuse_entries_out_of_order() {
    let in_order = Pairs { entries: vec![(1, 10), (2, 20), (9, 90)] }.to_vec().unwrap();
    let scores = Scores::decode_from_slice(&in_order).unwrap();
    assert_eq!(scores.to_vec().unwrap(), in_order);

    let swapped = Pairs { entries: vec![(2, 20), (1, 10)] }.to_vec().unwrap();
    let e = Scores::decode_from_slice(&swapped).unwrap_err();
    assert!(e.to_string().contains("map keys not in increasing order"), "{e}");
    assert_eq!(e.path(), "Scores.by_player[1].key");

    let duplicate = Pairs { entries: vec![(3, 1), (3, 2)] }.to_vec().unwrap();
    assert!(Scores::decode_from_slice(&duplicate).is_err());

    assert!(Seen::decode_from_slice(&Ids { ids: vec![1, 5, 900] }.to_vec().unwrap()).is_ok());
    let e = Seen::decode_from_slice(&Ids { ids: vec![5, 1] }.to_vec().unwrap()).unwrap_err();
    assert!(e.to_string().contains("set elements not in increasing order"), "{e}");
    assert!(Seen::decode_from_slice(&Ids { ids: vec![7, 7] }.to_vec().unwrap()).is_err());
}
