//! The batch decode's runtime: integer columns, the [`Peek`] that reads a block's bits
//! from a window of the input before the block is consumed, and [`push_block`], the
//! build of a block's elements.

use alloc::vec::Vec;

use super::{BLOCK, MAX_ELEMENT_BITS};
use crate::error::Result;
use crate::int::RangedInt;
use crate::stream::run::mask;
use crate::stream::{decode_element, Decoder};
use crate::NetSerialize;

/// Decodes `count` elements one by one into `out`, element `k` with index `base + k`.
///
/// # Errors
/// The first element's error, with its index.
#[inline]
pub fn decode_each<T: NetSerialize, D: Decoder>(
    d: &mut D,
    base: usize,
    count: usize,
    out: &mut Vec<T>,
) -> Result<()> {
    for k in 0..count {
        out.push(decode_element(d, base + k, T::decode)?);
    }
    Ok(())
}

/// Appends a block's elements `f(0), .., f(n - 1)` to `out`: the derive's build.
///
/// The elements are written into the `Vec`'s spare capacity and its length is set once
/// for the block. `push` would store the length after every element, and reload the
/// buffer's address and capacity before the next: the compiler cannot tell that the
/// element's stores leave the `Vec` itself alone. On the benchmark's entities that is
/// one store in 14 of the build, a saving that shows in decode time at the AVX-512 and
/// AVX2 levels (BENCHMARKS.md, "The build writes into the spare capacity").
///
/// If `f` panics, the elements of this block written so far are leaked (never dropped)
/// and `out` keeps its length and contents from before the call.
///
/// ```
/// let mut v = vec![10u32];
/// netser::batch::push_block(&mut v, 3, |k| k as u32);
/// assert_eq!(v, [10, 0, 1, 2]);
/// ```
#[inline(always)]
pub fn push_block<T, F: FnMut(usize) -> T>(out: &mut Vec<T>, n: usize, mut f: F) {
    out.reserve(n);
    let len = out.len();
    let mut written = 0;
    for (k, slot) in out.spare_capacity_mut().iter_mut().take(n).enumerate() {
        slot.write(f(k));
        written += 1;
    }
    debug_assert_eq!(written, n, "`reserve` leaves room for the block");
    #[allow(unsafe_code)]
    // SAFETY: the `written` slots after the first `len` elements were written just
    // above (`MaybeUninit::write`), and they are within the capacity (they are slots of
    // the spare capacity), so the first `len + written` elements are initialized.
    unsafe {
        out.set_len(len + written);
    }
}

/// A column of offsets read for `min..=max` (`read_int`), each below `2^64` (a `u32`
/// column when the type is at most 32 bits wide): the values, and whether every active
/// lane is within the range (and the range is valid).
#[inline(always)]
pub fn int_from_column<I: RangedInt, R: Copy + Into<u64>, const N: usize>(
    raw: &[R; N],
    min: I,
    max: I,
    active: &[bool; N],
    out: &mut [I; N],
) -> bool {
    let top = max.offset_from(min) as u64;
    let mut ok = min <= max;
    for i in 0..N {
        let r: u64 = raw[i].into();
        out[i] = I::from_offset(min, r as u128);
        ok &= (r <= top) | !active[i];
    }
    ok
}

/// The values of a column of `bits`-bit unsigned integers (`read_uint_bits`), and
/// whether the bit count is valid for the type.
#[inline(always)]
pub fn bits_from_column<I: RangedInt, R: Copy + Into<u64>, const N: usize>(
    raw: &[R; N],
    bits: u32,
    out: &mut [I; N],
) -> bool {
    let signed = I::MIN < I::ZERO;
    for i in 0..N {
        let r: u64 = raw[i].into();
        out[i] = I::from_offset(I::ZERO, r as u128);
    }
    bits <= I::WIDTH - signed as u32
}

/// Bytes a [`Peek`] window holds for a block of elements of at most `element_bits` bits
/// each: the block's bits from a bit position anywhere in its first byte rounded up to a
/// power of two, and the bytes the last stretch's loads reach past that. Elements above [`MAX_ELEMENT_BITS`] go element by
/// element, so the window never needs more.
pub const fn window_bytes(element_bits: u64) -> usize {
    let bits = if element_bits > MAX_ELEMENT_BITS {
        MAX_ELEMENT_BITS
    } else {
        element_bits
    };
    // A stretch starts before byte `ceil(BLOCK * bits / 8) + 1` (after a phase of up to
    // 7 bits before the block), a power of two `P` at most; its loads reach at most
    // `bits / 8 + 15` bytes further. `P` then fits below every load's room, so
    // [`Peek::loads`] keeps its base in bounds with a mask (see `keep`).
    let p = ((BLOCK as u64 * bits).div_ceil(8) + 1).next_power_of_two();
    (p + bits / 8 + 16) as usize
}

/// The mask a [`Peek`] of `W` bytes puts on a base whose loads reach `last + 8` bytes
/// past it: all ones below the largest power of two that fits `W - 8 - last`, so a
/// masked base is in bounds, and every base of a block the window was sized for (below
/// the power of two [`window_bytes`] sized it from) is left as it is.
const fn keep(w: usize, last: usize) -> usize {
    match w.checked_sub(8 + last) {
        Some(room) if room > 0 => (1usize << (usize::BITS - 1 - room.leading_zeros())) - 1,
        _ => 0,
    }
}

/// The `W` bytes of `input` from the byte holding bit `start`, when the input has them
/// (every block but the last ones of a packet).
#[inline(always)]
pub fn window<const W: usize>(input: &[u8], start: u64) -> Option<&[u8; W]> {
    input.get((start >> 3) as usize..)?.first_chunk::<W>()
}

/// The bytes of `input` from the byte holding bit `start`, zero-padded to `W` (a block
/// near the end of the input: the caller compares its bits with the input's length).
#[cold]
#[inline(never)]
pub fn window_copy<const W: usize>(input: &[u8], start: u64) -> [u8; W] {
    let mut out = [0u8; W];
    if let Some(rest) = input.get((start >> 3) as usize..) {
        let n = rest.len().min(W);
        out[..n].copy_from_slice(&rest[..n]);
    }
    out
}

/// Where the fields of a *segment* (fields a [`Peek`] reads together: the derive's
/// stretch of ungated fields and the gated field closing it) lie in the 8-byte loads it
/// makes. Load `c` is the window
/// at byte `c` of the segment shifted by the segment's bit phase, so it holds the
/// segment's bits `8c..8c + 57` whatever the phase; each field takes its bits from one
/// window (a field wider than the window holds at its place: its low bits from window
/// `c` and the rest from window `c + 7`). Fields share a window while they fit, so a
/// segment of `b` bits makes about `b / 57` loads. Built in a `const`, so every offset,
/// shift and mask is a constant in the generated code.
#[derive(Clone, Copy, Debug)]
pub struct Split<const M: usize> {
    /// The window (byte offset in the segment) holding each field's low bits.
    window: [usize; M],
    /// The field's first bit in that window.
    shift: [u32; M],
    /// Bits taken from that window.
    low: [u32; M],
    /// Bits taken from the window 7 bytes further (0: none).
    high: [u32; M],
    /// The segment's bits.
    bits: u32,
    /// The furthest window.
    last: usize,
    /// Each field's low window as an index into the distinct windows (see
    /// [`Split::load_offsets`]).
    lo_load: [usize; M],
    /// The index of the window its high bits come from (its low one when it has none).
    hi_load: [usize; M],
    /// How many distinct windows the fields use.
    loads: usize,
}

/// Bits every window holds, whatever the segment's bit phase (0..=7).
const WINDOW_BITS: u32 = 57;

impl<const M: usize> Split<M> {
    /// The split of fields of `widths` (each `<= 64`) laid one after another.
    ///
    /// # Panics
    /// At compile time (it runs in a `const`), on a width above 64.
    pub const fn new(widths: [u32; M]) -> Self {
        let mut s = Split {
            window: [0; M],
            shift: [0; M],
            low: [0; M],
            high: [0; M],
            bits: 0,
            last: 0,
            lo_load: [0; M],
            hi_load: [0; M],
            loads: 1,
        };
        let mut window = 0usize;
        let mut at = 0u32;
        let mut j = 0;
        while j < M {
            let w = widths[j];
            assert!(w <= 64, "a field of a batch is at most 64 bits wide");
            // The field's first bit in the current window (`None`: before it).
            let from = (at as usize).checked_sub(8 * window);
            let fits = matches!(from, Some(f) if f + w as usize <= WINDOW_BITS as usize);
            // A field that does not fit spills into the window 7 bytes on (its bits from
            // 56 on), which the segment's next fields read anyway; unless its high part
            // would not fit there either: then it opens a window at its own byte.
            let spills =
                matches!(from, Some(f) if f < 56 && w as usize <= 56 - f + WINDOW_BITS as usize);
            if !fits && !spills {
                // Windows only move forward, so a new one is the next distinct load.
                if at as usize / 8 != window {
                    s.loads += 1;
                }
                window = at as usize / 8;
            }
            let shift = at - 8 * window as u32;
            s.window[j] = window;
            s.shift[j] = shift;
            s.lo_load[j] = s.loads - 1;
            s.hi_load[j] = s.loads - 1;
            if shift + w <= WINDOW_BITS {
                s.low[j] = w;
            } else {
                // `shift < 56`, and the high part fits the next window (checked above, or
                // `shift <= 7` in a window just placed at the field's byte).
                s.low[j] = 56 - shift;
                s.high[j] = w - s.low[j];
                window += 7;
                s.loads += 1;
                s.hi_load[j] = s.loads - 1;
            }
            if window > s.last {
                s.last = window;
            }
            at += w;
            j += 1;
        }
        s.bits = at;
        s
    }

    /// The segment's bits.
    #[inline(always)]
    pub const fn bits(&self) -> u32 {
        self.bits
    }

    /// How many distinct windows (loads) the fields use.
    pub const fn loads(&self) -> usize {
        self.loads
    }

    /// The byte offsets of the distinct windows, in order (`L` is [`Split::loads`]; a
    /// larger `L` repeats the last one).
    ///
    /// # Panics
    /// At compile time (it runs in a `const`), when `L` is below [`Split::loads`].
    pub const fn load_offsets<const L: usize>(&self) -> [usize; L] {
        assert!(L >= self.loads, "one offset per distinct window");
        let mut out = [0usize; L];
        let mut j = 0;
        while j < M {
            out[self.lo_load[j]] = self.window[j];
            out[self.hi_load[j]] = self.window[j] + if self.high[j] > 0 { 7 } else { 0 };
            j += 1;
        }
        let mut l = self.loads;
        while l < L {
            out[l] = out[self.loads - 1];
            l += 1;
        }
        out
    }

    /// Field `j`'s low window, as an index into [`Split::load_offsets`].
    pub const fn lo_load(&self, j: usize) -> usize {
        self.lo_load[j]
    }

    /// The window field `j`'s high bits come from (its low one when it has none).
    pub const fn hi_load(&self, j: usize) -> usize {
        self.hi_load[j]
    }

    /// Field `j`'s bits from its windows as [`Peek::loads`] read them: `lo` the window
    /// [`Split::lo_load`] names, `hi` the one [`Split::hi_load`] names.
    #[inline(always)]
    pub fn pick(&self, j: usize, lo: u64, hi: u64) -> u64 {
        let mut v = (lo >> self.shift[j]) & mask(self.low[j]);
        if self.high[j] > 0 {
            v |= (hi & mask(self.high[j])) << self.low[j];
        }
        v
    }
}

/// How many distinct offsets two ascending load lists ([`Split::load_offsets`]) hold
/// together: the loads of a stretch read in both of its layouts (a trailing stretch
/// after a gated field, read at the gate's two outcomes by the stretch before it).
pub const fn union_len<const A: usize, const B: usize>(a: &[usize; A], b: &[usize; B]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < A || j < B {
        (_, i, j) = next_offset(a, b, i, j);
        n += 1;
    }
    n
}

/// The distinct offsets of two ascending load lists, ascending (`U` is
/// [`union_len`]).
///
/// # Panics
/// At compile time (it runs in a `const`), when `U` is not [`union_len`].
pub const fn union_offsets<const A: usize, const B: usize, const U: usize>(
    a: &[usize; A],
    b: &[usize; B],
) -> [usize; U] {
    assert!(U == union_len(a, b), "one slot per distinct offset");
    let mut out = [0usize; U];
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < A || j < B {
        (out[n], i, j) = next_offset(a, b, i, j);
        n += 1;
    }
    out
}

/// The smallest offset of `a[i..]` and `b[j..]` (one is not empty), and the positions
/// past every copy of it in each.
const fn next_offset<const A: usize, const B: usize>(
    a: &[usize; A],
    b: &[usize; B],
    mut i: usize,
    mut j: usize,
) -> (usize, usize, usize) {
    let next = match (i < A, j < B) {
        (true, true) if a[i] <= b[j] => a[i],
        (true, false) => a[i],
        _ => b[j],
    };
    while i < A && a[i] == next {
        i += 1;
    }
    while j < B && b[j] == next {
        j += 1;
    }
    (next, i, j)
}

/// For each offset of `of`, its index in `all` (which holds every one of them).
///
/// # Panics
/// At compile time (it runs in a `const`), when `all` lacks one.
pub const fn load_indices<const L: usize, const U: usize>(
    of: &[usize; L],
    all: &[usize; U],
) -> [usize; L] {
    let mut out = [0usize; L];
    let mut l = 0;
    while l < L {
        let mut u = 0;
        while all[u] != of[l] {
            u += 1;
        }
        out[l] = u;
        l += 1;
    }
    out
}

/// Reads a block's bits from a window of the input (`W` bytes from the byte holding the
/// block's first bit, see [`window_bytes`]) without consuming them from the stream: the
/// block is then checked as a whole, and consumed ([`Decoder::skip_bits`]) only when
/// every element is good. Every load is inside the window by construction, so no read
/// has a bounds check to make.
pub struct Peek<'a, const W: usize> {
    bytes: &'a [u8; W],
    /// Bit position in `bytes`.
    pos: usize,
}

impl<'a, const W: usize> Peek<'a, W> {
    /// A peek over `bytes` from bit `phase` (`< 8`) of its first byte.
    #[inline(always)]
    pub fn new(bytes: &'a [u8; W], phase: u64) -> Self {
        Peek {
            bytes,
            pos: (phase & 7) as usize,
        }
    }

    /// The bit position reached, from the start of the window.
    #[inline(always)]
    pub fn position(&self) -> u64 {
        self.pos as u64
    }

    /// The little-endian word at byte `i` (`i + 8 <= W` for every read of a block the
    /// window was sized for).
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        match self.bytes[..].get(i..).and_then(|b| b.first_chunk::<8>()) {
            Some(w) => u64::from_le_bytes(*w),
            None => 0,
        }
    }

    /// A segment's fields (see [`Split`]). The one-pass reads (`take`, `take_if`,
    /// `look`) are the tests' oracle for the two-pass parse ([`Peek::loads`] and
    /// [`Split::pick`]), which the derive uses.
    #[cfg(test)]
    pub fn take<const M: usize>(&mut self, split: &Split<M>) -> [u64; M] {
        let out = self.look(split);
        self.pos += split.bits as usize;
        out
    }

    /// A gated segment's fields: read whatever `on` (an element whose gate is off gives
    /// values that no check looks at), consumed only when `on`, without a branch.
    #[cfg(test)]
    pub fn take_if<const M: usize>(&mut self, split: &Split<M>, on: bool) -> [u64; M] {
        let out = self.look(split);
        self.pos += core::hint::select_unpredictable(on, split.bits as usize, 0);
        out
    }

    /// Consumes a *stretch* read by [`Peek::loads`]: all of `split`'s bits when `on`, else
    /// its first `head` (the fields before a gated tail whose gate is off), without a
    /// branch.
    #[inline(always)]
    pub fn skip_if<const M: usize>(&mut self, split: &Split<M>, head: u32, on: bool) {
        self.pos += core::hint::select_unpredictable(on, split.bits, head) as usize;
    }

    /// Moves the position to bit `pos` of the window (past elements whose starts were
    /// found ahead).
    #[inline(always)]
    pub fn seek(&mut self, pos: usize) {
        self.pos = pos;
    }

    /// Consumes a segment read by [`Peek::loads`] (all its bits).
    #[inline(always)]
    pub fn skip<const M: usize>(&mut self, split: &Split<M>) {
        self.pos += split.bits as usize;
    }

    /// The windows of a segment or stretch at the position, without consuming them: load
    /// `l` is the word at byte `offsets[l]` from the position's byte, shifted by its bit
    /// phase (`offsets` from [`Split::load_offsets`]), so [`Split::pick`] takes every field
    /// from them at constant shifts. A block's loads can thus be stored by columns and
    /// split afterwards by vector instructions.
    #[inline(always)]
    pub fn loads<const L: usize>(&self, offsets: &[usize; L]) -> [u64; L] {
        self.loads_at(self.pos, offsets)
    }

    /// [`Peek::loads`] at bit `pos` of the window instead of the position (a position
    /// found ahead of the parse: the elements of a block whose starts are known).
    #[inline(always)]
    pub fn loads_at<const L: usize>(&self, pos: usize, offsets: &[usize; L]) -> [u64; L] {
        let phase = (pos & 7) as u32;
        let base = (pos >> 3) & keep(W, offsets[L - 1]);
        // A loop, not `array::from_fn`: that is not always inlined (the baseline build).
        let mut out = [0u64; L];
        for (slot, &at) in out.iter_mut().zip(offsets) {
            *slot = self.word(base + at) >> phase;
        }
        out
    }

    /// The fields of a segment, or of a *stretch* (fields at constant offsets from the
    /// position: a run of ungated fields followed by one gated field, read whatever its
    /// gate), without consuming them ([`Peek::skip_if`] does). One base and phase for
    /// the whole stretch, so a gated field costs no second base.
    #[cfg(test)]
    pub fn look<const M: usize>(&self, split: &Split<M>) -> [u64; M] {
        let phase = (self.pos & 7) as u32;
        // The mask never changes a position inside the window's block; it lets the
        // compiler see every load in bounds at the cost of one `and`.
        let base = (self.pos >> 3) & keep(W, split.last);
        let mut out = [0u64; M];
        for (j, slot) in out.iter_mut().enumerate() {
            let c = base + split.window[j];
            let mut v = (self.word(c) >> phase >> split.shift[j]) & mask(split.low[j]);
            if split.high[j] > 0 {
                v |= ((self.word(c + 7) >> phase) & mask(split.high[j])) << split.low[j];
            }
            *slot = v;
        }
        out
    }
}

/// `push_block`'s contract, its `unsafe` `set_len` included. These tests also pass under
/// Miri, which checks every access the `Vec` makes: `MIRIFLAGS=-Zmiri-ignore-leaks cargo
/// +nightly miri test -p netser --lib push_block` (the leaks it would report otherwise
/// are the ones the panic test expects).
#[cfg(all(test, feature = "std"))]
mod push_block_tests {
    use super::push_block;
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::vec::Vec;

    /// An element that records its drop.
    struct Noted(u32, Rc<RefCell<Vec<u32>>>);

    impl Drop for Noted {
        fn drop(&mut self) {
            self.1.borrow_mut().push(self.0);
        }
    }

    #[test]
    fn appends_in_order_and_grows() {
        let mut v: Vec<u64> = Vec::new();
        push_block(&mut v, 0, |_| unreachable!("no element"));
        assert!(v.is_empty());
        for block in 0..40u64 {
            push_block(&mut v, 16, |k| block * 16 + k as u64);
        }
        push_block(&mut v, 5, |k| 1000 + k as u64);
        assert_eq!(v.len(), 40 * 16 + 5);
        assert!(v[..640].iter().enumerate().all(|(i, &x)| x == i as u64));
        assert_eq!(v[640..], [1000, 1001, 1002, 1003, 1004]);
    }

    #[test]
    fn every_element_is_dropped_once() {
        let dropped = Rc::new(RefCell::new(Vec::new()));
        let mut v = vec![Noted(100, dropped.clone())];
        push_block(&mut v, 3, |k| Noted(k as u32, dropped.clone()));
        assert!(dropped.borrow().is_empty());
        drop(v);
        let mut d = dropped.borrow().clone();
        d.sort_unstable();
        assert_eq!(d, [0, 1, 2, 100]);
    }

    #[test]
    fn zero_sized_elements() {
        // A zero-sized type's `Vec` has `usize::MAX` slots of spare capacity from the
        // start and never allocates: the block takes `n` of them.
        std::thread_local!(static DROPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
        struct Tick;
        impl Drop for Tick {
            fn drop(&mut self) {
                DROPS.with(|d| d.set(d.get() + 1));
            }
        }
        let mut units: Vec<()> = Vec::new();
        push_block(&mut units, 5, |_| ());
        push_block(&mut units, 0, |_| unreachable!("no element"));
        assert_eq!(units.len(), 5);
        let mut ticks = vec![Tick];
        let mut seen = Vec::new();
        push_block(&mut ticks, 1000, |k| {
            seen.push(k);
            Tick
        });
        assert_eq!(ticks.len(), 1001);
        assert!(
            seen.iter().copied().eq(0..1000),
            "f runs once per slot, in order"
        );
        assert_eq!(DROPS.with(|d| d.get()), 0);
        drop(ticks);
        assert_eq!(DROPS.with(|d| d.get()), 1001);
    }

    #[test]
    fn a_panic_leaves_the_vec_as_it_was() {
        let dropped = Rc::new(RefCell::new(Vec::new()));
        let mut v = vec![Noted(100, dropped.clone()), Noted(101, dropped.clone())];
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            push_block(&mut v, 4, |k| {
                assert!(k < 2, "element {k}");
                Noted(k as u32, dropped.clone())
            })
        }));
        assert!(caught.is_err());
        // The two elements written before the panic are leaked, not dropped and not
        // in the `Vec`; the `Vec` keeps its elements.
        assert_eq!(v.iter().map(|n| n.0).collect::<Vec<_>>(), [100, 101]);
        assert!(dropped.borrow().is_empty());
        push_block(&mut v, 1, |_| Noted(7, dropped.clone()));
        drop(v);
        let mut d = dropped.borrow().clone();
        d.sort_unstable();
        assert_eq!(d, [7, 100, 101]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Decoder, Encoder, ReadStream, WriteStream};

    /// A deterministic stream of test words from `seed`.
    fn words(seed: u64, rotate: u32, multiply: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x = x.rotate_left(rotate).wrapping_mul(multiply);
            x
        }
    }

    /// The block's window at bit `lead` of `input`: borrowed, or copied at its end.
    fn peek_at<'a, const W: usize>(
        input: &'a [u8],
        lead: u32,
        copy: &'a mut [u8; W],
    ) -> Peek<'a, W> {
        let bytes: &[u8; W] = match window::<W>(input, lead as u64) {
            Some(b) => b,
            None => {
                *copy = window_copy::<W>(input, lead as u64);
                copy
            }
        };
        Peek::new(bytes, lead as u64)
    }

    /// The union of two load lists is their distinct offsets in order, and every offset
    /// of either finds its index in it.
    #[test]
    fn load_unions_hold_both_lists() {
        const A: [usize; 4] = [0, 7, 14, 14];
        const B: [usize; 3] = [0, 5, 21];
        const N: usize = union_len(&A, &B);
        const U: [usize; N] = union_offsets(&A, &B);
        assert_eq!(U, [0, 5, 7, 14, 21]);
        assert_eq!(load_indices(&A, &U), [0, 2, 3, 3]);
        assert_eq!(load_indices(&B, &U), [0, 1, 4]);
        assert_eq!(union_len(&A, &A), 3);
        assert_eq!(union_len(&[3usize], &[] as &[usize; 0]), 1);
        // The layouts a trailing stretch is read in: the gated field present or not.
        let on = Split::new([12, 19, 19, 16, 32, 1, 14, 14, 14, 7, 1, 1, 1]);
        let off = Split::new([12, 19, 19, 16, 32, 1, 7, 1, 1, 1]);
        let (a, b) = (on.load_offsets::<3>(), off.load_offsets::<2>());
        assert_eq!((on.loads(), off.loads()), (3, 2));
        assert_eq!(
            union_len(&a, &b),
            3,
            "the absent layout's loads are the present one's"
        );
    }

    /// Every split of 8 fields of widths 0..=64 (spilling ones included), at every bit
    /// phase, gated or not, reads what a stream wrote; the window is sized from the widths
    /// and borrowed, or copied at the end of the input.
    #[test]
    fn peek_reads_what_the_stream_wrote() {
        let mut next = words(0x9E37_79B9_7F4A_7C15, 17, 0x2545_F491_4F6C_DD1D);
        for round in 0..400 {
            let lead = (round % 64) as u32;
            let widths: [u32; 8] = core::array::from_fn(|_| {
                let r = next();
                if r.is_multiple_of(5) {
                    (r >> 8) as u32 % 65
                } else {
                    [0, 1, 7, 50, 54, 57, 58, 63, 64][(r >> 8) as usize % 9]
                }
            });
            let split = Split::new(widths);
            assert_eq!(split.bits(), widths.iter().sum::<u32>());
            let element = split.bits() as u64;
            let mut buf = [0u8; 4096];
            let mut w = WriteStream::new(&mut buf);
            w.put_bits(next() & mask(lead), lead).unwrap();
            // Elements one after another, the odd ones "gated off" (not written).
            let mut values = Vec::new();
            for k in 0..BLOCK {
                let vals: [u64; 8] = core::array::from_fn(|j| next() & mask(widths[j]));
                if k % 2 == 0 {
                    for (v, wd) in vals.iter().zip(widths) {
                        w.put_bits(*v, wd).unwrap();
                    }
                }
                values.push(vals);
            }
            let tail = next() & 0xff;
            w.put_bits(tail, 8).unwrap();
            let n = w.finish();
            // Long enough for the borrowed window, or cut to the last byte written.
            let input = if round % 2 == 0 { &buf[..] } else { &buf[..n] };
            const W: usize = window_bytes(8 * 64);
            assert!(window_bytes(element) <= W);
            let mut copy = [0u8; W];
            let mut p = peek_at::<W>(input, lead, &mut copy);
            for (k, vals) in values.iter().enumerate() {
                let got = p.take_if(&split, k % 2 == 0);
                if k % 2 == 0 {
                    assert_eq!(&got, vals, "round {round} element {k} widths {widths:?}");
                }
            }
            let got = p.take(&Split::new([8]));
            assert_eq!(got, [tail]);
            let bits = p.position() - (lead as u64 & 7);
            let mut r = ReadStream::new(input);
            r.get_bits(lead).unwrap();
            r.skip_bits(bits).unwrap();
            assert_eq!(r.bit_position(), lead as u64 + bits);
            assert_eq!(
                r.bit_position(),
                8 * n as u64 - (8 - (r.bit_position() % 8)) % 8
            );
        }
    }

    /// A stretch (ungated fields, then a gated tail of the last `tail` fields) read by
    /// `look` and consumed by `skip_if` reads what a stream wrote, gate on or off, at
    /// every bit phase, from a borrowed window or a copy at the end of the input.
    #[test]
    fn stretches_read_what_the_stream_wrote() {
        let mut next = words(0x2545_F491_4F6C_DD1D, 23, 0x9E37_79B9_7F4A_7C15);
        for round in 0..400 {
            let lead = (round % 64) as u32;
            let widths: [u32; 6] = core::array::from_fn(|_| {
                let r = next();
                [0, 1, 3, 14, 32, 54, 57, 58, 64][(r >> 8) as usize % 9]
            });
            let tail = 1 + (next() % 3) as usize;
            let head: u32 = widths[..6 - tail].iter().sum();
            let split = Split::new(widths);
            let mut buf = [0u8; 4096];
            let mut w = WriteStream::new(&mut buf);
            w.put_bits(next() & mask(lead), lead).unwrap();
            let mut values = Vec::new();
            for _ in 0..BLOCK {
                let vals: [u64; 6] = core::array::from_fn(|j| next() & mask(widths[j]));
                let on = !next().is_multiple_of(3);
                for (j, (v, wd)) in vals.iter().zip(widths).enumerate() {
                    if on || j < 6 - tail {
                        w.put_bits(*v, wd).unwrap();
                    }
                }
                values.push((vals, on));
            }
            let end = next() & 0x1f;
            w.put_bits(end, 5).unwrap();
            let n = w.finish();
            let input = if round % 2 == 0 { &buf[..] } else { &buf[..n] };
            const W: usize = window_bytes(6 * 64);
            let mut copy = [0u8; W];
            let mut p = peek_at::<W>(input, lead, &mut copy);
            // The same fields through the windows' loads (the two-pass parse).
            assert!(split.loads() <= 12, "{widths:?}");
            let offsets = split.load_offsets::<12>();
            for (k, (vals, on)) in values.iter().enumerate() {
                let got = p.look(&split);
                let seen = if *on { 6 } else { 6 - tail };
                assert_eq!(
                    got[..seen],
                    vals[..seen],
                    "round {round} element {k} {widths:?}"
                );
                let l = p.loads(&offsets);
                let picked: [u64; 6] = core::array::from_fn(|j| {
                    split.pick(j, l[split.lo_load(j)], l[split.hi_load(j)])
                });
                assert_eq!(picked, got, "round {round} element {k} {widths:?}");
                p.skip_if(&split, head, *on);
            }
            assert_eq!(p.take(&Split::new([5])), [end]);
            let bits = p.position() - (lead as u64 & 7);
            let mut r = ReadStream::new(input);
            r.get_bits(lead).unwrap();
            r.skip_bits(bits).unwrap();
            assert_eq!(
                r.bit_position(),
                8 * n as u64 - (8 - (r.bit_position() % 8)) % 8
            );
        }
    }

    #[test]
    fn skipping_past_the_end_is_refused_and_consumes_nothing() {
        let mut r = ReadStream::new(&[0xff; 3]);
        r.get_bits(5).unwrap();
        let e = r.skip_bits(20).unwrap_err();
        assert_eq!(
            e.kind(),
            &crate::ErrorKind::EndOfBuffer {
                wanted: 20,
                remaining: 19
            }
        );
        assert_eq!(r.bit_position(), 5);
        r.skip_bits(19).unwrap();
        assert_eq!(r.bits_remaining(), 0);
    }

    /// The mask keeps every stretch start of a block in place and every load in the
    /// window, for every element width.
    #[test]
    fn window_masks_keep_bases_and_bound_loads() {
        for bits in 0..=MAX_ELEMENT_BITS + 3 {
            let w = window_bytes(bits);
            let bits = bits.min(MAX_ELEMENT_BITS);
            // A stretch of at most `bits` bits: its furthest load, spilling or not.
            let last = (bits / 8 + 7) as usize;
            let k = keep(w, last);
            assert!((k + 1).is_power_of_two(), "{bits}");
            assert!(k + last + 8 <= w, "{bits}: loads past the window");
            let furthest_start = (BLOCK as u64 * bits).div_ceil(8) as usize;
            assert_eq!(furthest_start & k, furthest_start, "{bits}: base moved");
        }
        assert_eq!(keep(10, 3), 0);
        assert_eq!(keep(20, 3), 7);
    }

    #[test]
    fn splits_share_windows_and_spill_wide_fields() {
        // The benchmark's entity head: id 12, position 54, quaternion 32, at_rest 1.
        // The position spills from window 0 into window 7, which holds the next two.
        let s = Split::new([12, 54, 32, 1]);
        assert_eq!(s.window, [0, 0, 7, 7]);
        assert_eq!(s.shift, [0, 12, 10, 42]);
        assert_eq!(s.low, [12, 44, 32, 1]);
        assert_eq!(s.high, [0, 10, 0, 0]);
        assert_eq!((s.bits(), s.last), (99, 7));
        assert_eq!(s.loads(), 2);
        assert_eq!(s.load_offsets::<2>(), [0, 7]);
        assert_eq!((s.lo_load, s.hi_load), ([0, 0, 1, 1], [0, 1, 1, 1]));
        assert_eq!(s.load_offsets::<4>(), [0, 7, 7, 7]);
        // 64 bits at bit 50 of a window: its high part (58 bits) fits no window at 56, so
        // the field opens one at its byte (6) and spills into 13.
        let s = Split::new([50, 64]);
        assert_eq!(
            (s.window, s.shift, s.low, s.high),
            ([0, 6], [0, 2], [50, 54], [0, 10])
        );
        assert_eq!(s.load_offsets::<3>(), [0, 6, 13]);
        let s = Split::new([14, 14, 14]);
        assert_eq!((s.window, s.shift, s.last), ([0; 3], [0, 14, 28], 0));
    }
}
