//! Representative derived types for the decode targets: every wire form a game schema
//! uses (floats, quantized floats, quaternions, enums, options, nested bounded
//! collections, strings, maps, sets, arrays), plus one that only the numeric forms fill.

use std::collections::{HashMap, HashSet};

use netser::NetSerialize;

/// An enum of fieldless, tuple and struct variants.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub enum Event {
    /// No fields.
    Ping,
    /// A bounded integer and a bool.
    Hit(#[net(range = 0..=100)] u8, bool),
    /// A nested bounded list of strings.
    Chat {
        /// Recipients.
        #[net(max_len = 4)]
        to: Vec<u16>,
        /// Text.
        #[net(max_len = 32)]
        text: String,
    },
}

/// An entity: raw floats, an optional nested value, a small array.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub struct Entity {
    /// Its id.
    #[net(range = 0..=4095)]
    pub id: u16,
    /// Raw position.
    pub position: [f32; 3],
    /// Raw speed.
    pub speed: f64,
    /// An optional name.
    #[net(max_len = 16)]
    pub name: Option<String>,
    /// Flags in 5 bits.
    #[net(bits = 5)]
    pub flags: u8,
}

/// A snapshot: nested bounded collections of the above, a map and a set.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
#[net(max_bytes = 4096)]
pub struct Snapshot {
    /// The frame.
    pub frame: u32,
    /// Entities.
    #[net(max_len = 8)]
    pub entities: Vec<Entity>,
    /// Events per player, nested lists.
    #[net(max_len = 4)]
    pub events: Vec<Vec<Event>>,
    /// Scores by player: a hash map, sent in increasing key order as a `BTreeMap` is.
    #[net(max_len = 4, range = -1000..=1000)]
    pub scores: HashMap<u8, i32>,
    /// Players seen: a hash set, sent in increasing order.
    #[net(max_len = 6)]
    pub seen: HashSet<u16>,
    /// An optional event.
    pub last: Option<Event>,
}

/// The numeric forms: quantized floats (including one over `[-1, 0.1]`, whose span is not a whole number of steps) and
/// smallest-three quaternions at a small and a large bit count.
#[derive(NetSerialize, Debug, Clone, PartialEq)]
pub struct Numeric {
    /// A range whose span is not a whole number of steps.
    #[net(quantize(min = -1.0, max = 0.1, res = 0.001))]
    pub level: f32,
    /// A wide one.
    #[net(quantize(min = -180.0, max = 0.1, res = 0.01))]
    pub angle: f32,
    /// Another.
    #[net(quantize(min = -10.0, max = 3.3, res = 0.001))]
    pub x: f32,
    /// A coarse quaternion.
    #[net(quat(bits = 9))]
    pub coarse: [f32; 4],
    /// A fine quaternion.
    #[net(quat(bits = 15))]
    pub fine: [f32; 4],
}
