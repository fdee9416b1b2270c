//! The receivers against straightforward models: random arrivals (duplicates, gaps,
//! blocks whose bytes arrive, fail or wait) and random polls, the receivers' answers
//! (the "nothing ready" ones included, which skip the slots) equal the models'.

use std::collections::{HashMap, HashSet, VecDeque};

use proptest::prelude::*;

use super::{BlockState, Item, ReliableReceiver};
use crate::chunk::ChunkId;

/// What happens next to the receiver.
#[derive(Debug, Clone)]
enum Step {
    /// Message `base + offset` arrives (a duplicate below the base when negative); a
    /// block reference when `block`.
    Arrive { offset: i32, block: bool },
    /// The bytes of a block arrive (by chunk id).
    BlockBytes(ChunkId),
    /// The game polls until nothing comes, at most `polls` times.
    Poll { polls: u8 },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (-4i32..20, proptest::bool::weighted(0.15))
            .prop_map(|(offset, block)| Step::Arrive { offset, block }),
        1 => (0u16..64).prop_map(Step::BlockBytes),
        3 => (0u8..4).prop_map(|polls| Step::Poll { polls }),
    ]
}

/// A block's bytes: chunks `3k + 1` never decode; the others decode once arrived.
fn block_state(arrived: &HashSet<ChunkId>, chunk: ChunkId) -> BlockState<u32> {
    if chunk % 3 == 1 && arrived.contains(&chunk) {
        BlockState::Failed
    } else if arrived.contains(&chunk) {
        BlockState::Ready(100_000 + u32::from(chunk))
    } else {
        BlockState::Pending
    }
}

/// Delivery in id order from `base`, as the articles' receive queue: a map of ids.
#[derive(Default)]
struct OrderedModel {
    base: u16,
    waiting: HashMap<u16, Item<u32>>,
    seen: HashSet<u16>,
}

impl OrderedModel {
    fn accept(&mut self, id: u16, item: Item<u32>) -> bool {
        if id < self.base || !self.seen.insert(id) {
            return false;
        }
        self.waiting.insert(id, item);
        true
    }

    fn next(&mut self, arrived: &HashSet<ChunkId>) -> Option<u32> {
        loop {
            match self.waiting.remove(&self.base)? {
                Item::Message(m) => {
                    self.base += 1;
                    return Some(m);
                }
                Item::Block(chunk) => match block_state(arrived, chunk) {
                    BlockState::Ready(m) => {
                        self.base += 1;
                        return Some(m);
                    }
                    BlockState::Failed => self.base += 1,
                    BlockState::Pending => {
                        self.waiting.insert(self.base, Item::Block(chunk));
                        return None;
                    }
                },
            }
        }
    }
}

/// Delivery as messages arrive; blocks once their bytes are here.
#[derive(Default)]
struct UnorderedModel {
    seen: HashSet<u16>,
    ready: VecDeque<Item<u32>>,
}

impl UnorderedModel {
    fn accept(&mut self, id: u16, item: Item<u32>) -> bool {
        if !self.seen.insert(id) {
            return false;
        }
        self.ready.push_back(item);
        true
    }

    fn next(&mut self, arrived: &HashSet<ChunkId>) -> Option<u32> {
        if let Some(i) = self
            .ready
            .iter()
            .position(|item| matches!(item, Item::Message(_)))
        {
            let Some(Item::Message(m)) = self.ready.remove(i) else {
                unreachable!("found a message there")
            };
            return Some(m);
        }
        let mut i = 0;
        while i < self.ready.len() {
            let Item::Block(chunk) = self.ready[i] else {
                i += 1;
                continue;
            };
            match block_state(arrived, chunk) {
                BlockState::Ready(m) => {
                    self.ready.remove(i);
                    return Some(m);
                }
                BlockState::Failed => {
                    self.ready.remove(i);
                }
                BlockState::Pending => i += 1,
            }
        }
        None
    }
}

/// Runs `steps` through a receiver of `capacity` and its model; ids stay far from the
/// wrap, so the models need no sequence arithmetic.
fn run(ordered: bool, capacity: usize, steps: &[Step]) -> Result<(), TestCaseError> {
    let mut receiver: ReliableReceiver<u32> = ReliableReceiver::new(capacity, ordered);
    let mut ordered_model = OrderedModel::default();
    let mut unordered_model = UnorderedModel::default();
    let mut arrived = HashSet::new();
    // The newest id offered, from which offsets count (the sender's window moves on).
    let mut front: i32 = 0;
    for step in steps {
        match *step {
            Step::Arrive { offset, block } => {
                let Ok(id) = u16::try_from((front + offset).max(0)) else {
                    continue;
                };
                if !receiver.can_accept(id, 1) {
                    continue; // the sender never sends past the window
                }
                front = front.max(i32::from(id) - 4);
                let value = u32::from(id);
                let (item, model_item) = if block {
                    (Item::Block(id % 64), Item::Block(id % 64))
                } else {
                    (Item::Message(value), Item::Message(value))
                };
                let accepted = receiver.accept(id, item).is_ok();
                let expected = if ordered {
                    ordered_model.accept(id, model_item)
                } else {
                    unordered_model.accept(id, model_item)
                };
                prop_assert_eq!(accepted, expected, "accept {}", id);
            }
            Step::BlockBytes(chunk) => {
                arrived.insert(chunk);
            }
            Step::Poll { polls } => {
                for _ in 0..=polls {
                    let got = receiver.next(|chunk| block_state(&arrived, chunk));
                    let expected = if ordered {
                        ordered_model.next(&arrived)
                    } else {
                        unordered_model.next(&arrived)
                    };
                    prop_assert_eq!(got, expected);
                    let waiting = if ordered {
                        ordered_model.waiting.len()
                    } else {
                        unordered_model.ready.len()
                    };
                    prop_assert_eq!(receiver.len(), waiting);
                    if got.is_none() {
                        break;
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn the_ordered_receiver_answers_as_a_map_of_ids_would(
        capacity in prop_oneof![Just(4usize), Just(16), Just(2048)],
        steps in proptest::collection::vec(step(), 0..200),
    ) {
        run(true, capacity, &steps)?;
    }

    #[test]
    fn the_unordered_receiver_answers_as_a_list_of_arrivals_would(
        capacity in prop_oneof![Just(4usize), Just(16), Just(2048)],
        steps in proptest::collection::vec(step(), 0..200),
    ) {
        run(false, capacity, &steps)?;
    }
}
