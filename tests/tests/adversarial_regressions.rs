//! Defects the fuzz targets and proptest scripts found, each with the input that found
//! it.

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
    let in_order = Pairs {
        entries: vec![(1, 10), (2, 20), (9, 90)],
    }
    .to_vec()
    .unwrap();
    let scores = Scores::decode_from_slice(&in_order).unwrap();
    assert_eq!(scores.to_vec().unwrap(), in_order);

    let swapped = Pairs {
        entries: vec![(2, 20), (1, 10)],
    }
    .to_vec()
    .unwrap();
    let e = Scores::decode_from_slice(&swapped).unwrap_err();
    assert!(
        e.to_string().contains("map keys not in increasing order"),
        "{e}"
    );
    assert_eq!(e.path(), "Scores.by_player[1].key");

    let duplicate = Pairs {
        entries: vec![(3, 1), (3, 2)],
    }
    .to_vec()
    .unwrap();
    assert!(Scores::decode_from_slice(&duplicate).is_err());

    assert!(Seen::decode_from_slice(
        &Ids {
            ids: vec![1, 5, 900]
        }
        .to_vec()
        .unwrap()
    )
    .is_ok());
    let e = Seen::decode_from_slice(&Ids { ids: vec![5, 1] }.to_vec().unwrap()).unwrap_err();
    assert!(
        e.to_string()
            .contains("set elements not in increasing order"),
        "{e}"
    );
    assert!(Seen::decode_from_slice(&Ids { ids: vec![7, 7] }.to_vec().unwrap()).is_err());
}

/// Found by the `decode_derived` fuzz target in 23 s: a framed packet whose last byte's
/// padding bits (after the end-of-packet check) were not zero was accepted, and written
/// back with zeros, other bytes. The input is checked in as
/// `fuzz/regressions/decode_derived/framing_nonzero_padding`.
#[test]
fn framed_packets_refuse_non_zero_padding() {
    use netser::framing::{read_packet, write_packet};
    use netser_tests::adversarial::decode::PROTOCOL_ID;
    use netser_tests::adversarial::types::Snapshot;
    let found = [221, 120, 255, 94, 0, 122, 0, 0, 0, 128, 91, 178, 106, 85];
    let e = read_packet::<Snapshot>(PROTOCOL_ID, &found).unwrap_err();
    assert_eq!(e.kind(), &netser::ErrorKind::NonZeroPadding { found: 1 });
    let value = Snapshot {
        frame: 31232,
        entities: vec![],
        events: vec![],
        scores: std::collections::HashMap::new(),
        seen: std::collections::HashSet::new(),
        last: None,
    };
    let mut buf = [0u8; 64];
    let len = write_packet(PROTOCOL_ID, &mut buf, &value).unwrap();
    assert_eq!(&buf[4..len], &[0, 122, 0, 0, 0, 128, 91, 178, 106, 21]);
    assert_eq!(
        read_packet::<Snapshot>(PROTOCOL_ID, &buf[..len]).unwrap(),
        value
    );
}
