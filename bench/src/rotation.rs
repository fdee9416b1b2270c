//! What a contender encodes and decodes: one input, or several taken in turn, so that a
//! branch predictor cannot learn one snapshot's gates over the iterations (see
//! [`crate::Rest::Random`]). The contender keeps one encoder and one decoder, as a game
//! does, while its inputs change.

/// A contender's inputs, taken in turn by its encodes, and the bytes each one encodes to,
/// taken in turn by its decodes.
#[derive(Debug)]
pub struct Rotation<T> {
    inputs: Vec<T>,
    frames: Vec<Vec<u8>>,
    next_encode: usize,
    next_decode: usize,
    /// The input the last encode took.
    last_encode: usize,
}

impl<T> Rotation<T> {
    /// The rotation of `inputs` (at least one), each encoded once by `encode` for the
    /// decodes.
    ///
    /// # Panics
    /// If `inputs` is empty.
    ///
    /// ```
    /// use netser_bench::Rotation;
    /// let mut r = Rotation::new(vec![1u8, 2], |x| vec![*x; 3]);
    /// assert_eq!(*r.next_input(), 1);
    /// assert_eq!(*r.next_input(), 2);
    /// assert_eq!(*r.next_input(), 1);
    /// assert_eq!(r.encoded(), &[1, 1, 1]);
    /// assert_eq!(r.next_frame(), &[1, 1, 1]);
    /// assert_eq!(r.next_frame(), &[2, 2, 2]);
    /// ```
    pub fn new(inputs: Vec<T>, encode: impl FnMut(&T) -> Vec<u8>) -> Self {
        assert!(!inputs.is_empty(), "a contender needs an input");
        let frames = inputs.iter().map(encode).collect();
        Rotation {
            inputs,
            frames,
            next_encode: 0,
            next_decode: 0,
            last_encode: 0,
        }
    }

    /// The input the next encode takes.
    pub fn next_input(&mut self) -> &T {
        let i = self.next_encode;
        self.next_encode = (i + 1) % self.inputs.len();
        self.last_encode = i;
        &self.inputs[i]
    }

    /// The bytes the next decode reads.
    pub fn next_frame(&mut self) -> &[u8] {
        let i = self.next_decode;
        self.next_decode = (i + 1) % self.frames.len();
        &self.frames[i]
    }

    /// The bytes of the input the last encode took (encoding is deterministic: the
    /// bytes that encode wrote).
    pub fn encoded(&self) -> &[u8] {
        &self.frames[self.last_encode]
    }

    /// The first input (for checks).
    pub fn first(&self) -> &T {
        &self.inputs[0]
    }
}
