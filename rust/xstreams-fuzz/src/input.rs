//! A cursor over fuzzer bytes: every decision consumes input, and an exhausted input
//! answers zeros, so every byte string is a valid (if short) program.

pub(crate) struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Input { data, pos: 0 }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub(crate) fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// One of `items`, chosen by the next byte.
    pub(crate) fn pick<'b, T>(&mut self, items: &'b [T]) -> &'b T {
        &items[usize::from(self.byte()) % items.len()]
    }

    /// Up to `max` raw bytes (length from the next byte).
    pub(crate) fn bytes(&mut self, max: usize) -> &'a [u8] {
        let n = usize::from(self.byte()) % (max + 1);
        let start = self.pos.min(self.data.len());
        let end = (start + n).min(self.data.len());
        self.pos = end;
        &self.data[start..end]
    }
}
