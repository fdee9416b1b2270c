//! Allocations counted on the test's thread while a closure runs ([`counted`]), by a
//! `tracking_allocator` tracker installed on first use; the including test file installs
//! `tracking_allocator::Allocator` as its global allocator.

use std::cell::Cell;

use tracking_allocator::{AllocationGroupId, AllocationRegistry, AllocationTracker};

thread_local! {
    /// Allocations on this thread while counting.
    static COUNT: Cell<Option<u64>> = const { Cell::new(None) };
}

struct Counter;

impl AllocationTracker for Counter {
    fn allocated(&self, _addr: usize, _size: usize, _wrapped: usize, _group: AllocationGroupId) {
        let _ = COUNT.try_with(|count| {
            if let Some(n) = count.get() {
                count.set(Some(n + 1));
            }
        });
    }

    fn deallocated(
        &self,
        _addr: usize,
        _size: usize,
        _wrapped: usize,
        _source: AllocationGroupId,
        _current: AllocationGroupId,
    ) {
    }
}

/// Runs `f` and returns what it returned and how many allocations it made on this thread.
pub fn counted<R>(f: impl FnOnce() -> R) -> (R, u64) {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        AllocationRegistry::set_global_tracker(Counter).expect("one tracker");
        AllocationRegistry::enable_tracking();
    });
    COUNT.with(|count| count.set(Some(0)));
    let result = f();
    let n = COUNT.with(|count| count.replace(None)).unwrap_or(0);
    (result, n)
}
