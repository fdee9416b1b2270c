//! Heap bytes live on the test's thread while a measurement is active, counted by a
//! `tracking_allocator` tracker; the including test file installs
//! `tracking_allocator::Allocator` as its global allocator and `Counter` as the tracker.

use std::cell::RefCell;
use std::collections::HashMap;

use tracking_allocator::{AllocationGroupId, AllocationTracker};

#[derive(Default)]
pub struct State {
    pub active: bool,
    pub blocks: HashMap<usize, usize>,
    pub live: usize,
    pub peak: usize,
}

thread_local! {
    pub static STATE: RefCell<State> = RefCell::new(State::default());
}

pub struct Counter;

impl AllocationTracker for Counter {
    fn allocated(&self, addr: usize, size: usize, _wrapped: usize, _group: AllocationGroupId) {
        let _ = STATE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.active {
                    s.blocks.insert(addr, size);
                    s.live += size;
                    s.peak = s.peak.max(s.live);
                }
            }
        });
    }

    fn deallocated(
        &self,
        addr: usize,
        _size: usize,
        _wrapped: usize,
        _source: AllocationGroupId,
        _current: AllocationGroupId,
    ) {
        let _ = STATE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if let Some(size) = s.blocks.remove(&addr) {
                    s.live -= size;
                }
            }
        });
    }
}
