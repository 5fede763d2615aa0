//! GF(2) linear algebra behind the 64-byte-per-cycle CRC-32 blocks, run at
//! elaboration time in plain Rust.
//!
//! The reflected CRC-32 of zlib (polynomial 0xEDB88320) is linear over GF(2)
//! once its initial value and final complement are taken out: the raw
//! register after a byte is `A·s ⊕ T·b`. A 64-byte beat is therefore
//! `s' = A⁶⁴·s ⊕ M·d`, with `M` a 32×512 matrix, and appending zero bytes is
//! `Aⁿ`, which is invertible (the polynomial has a constant term), so zero
//! bytes added to fill a partial beat can be taken back out with `A⁻ⁿ`.
//! The hardware blocks take their XOR masks from the maps built here; the
//! tests check the maps against `crc32fast`.

/// Bytes per datapath beat (512 bits).
pub const BEAT_BYTES: usize = 64;
/// Bits per datapath beat.
pub const BEAT_BITS: usize = BEAT_BYTES * 8;
/// Reflected CRC-32 polynomial (zlib, IEEE 802.3).
pub const POLY_REFLECTED: u32 = 0xEDB8_8320;
/// zlib's initial register value.
pub const INIT: u32 = 0xFFFF_FFFF;
/// zlib's CRC of any message followed by its own CRC (least significant
/// byte first): the "residue" after the final complement.
pub const RESIDUE: u32 = 0x2144_DF1C;
/// The same residue as the raw register holds it, before the complement.
pub const RESIDUE_REGISTER: u32 = !RESIDUE;

/// One byte through the raw CRC register (no initial value, no complement).
pub fn byte_step(state: u32, byte: u8) -> u32 {
    let mut s = state ^ u32::from(byte);
    for _ in 0..8 {
        s = if s & 1 != 0 {
            (s >> 1) ^ POLY_REFLECTED
        } else {
            s >> 1
        };
    }
    s
}

/// The raw register after `bytes`, starting from `state`.
pub fn register_after(state: u32, bytes: &[u8]) -> u32 {
    bytes.iter().fold(state, |s, &b| byte_step(s, b))
}

/// A linear map over GF(2) from `inputs` bits to `outputs` (at most 64)
/// bits, stored as one input mask per output bit: output bit `o` is the
/// parity of `input & rows[o]`. That is exactly the shape of the XOR trees
/// the hardware builds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinearMap {
    inputs: usize,
    outputs: usize,
    rows: Vec<Vec<u64>>,
}

/// Words needed for `bits` bits, 64 to a word, bit `i` in word `i / 64`.
pub fn words_for(bits: usize) -> usize {
    bits.div_ceil(64)
}

impl LinearMap {
    /// Builds the map from the image of each input basis vector.
    pub fn from_columns(inputs: usize, outputs: usize, column: impl Fn(usize) -> u64) -> Self {
        assert!(outputs <= 64, "at most 64 output bits");
        let mut rows = vec![vec![0u64; words_for(inputs)]; outputs];
        for i in 0..inputs {
            let image = column(i);
            for (o, row) in rows.iter_mut().enumerate() {
                if image >> o & 1 != 0 {
                    row[i / 64] |= 1 << (i % 64);
                }
            }
        }
        LinearMap {
            inputs,
            outputs,
            rows,
        }
    }

    pub fn identity(bits: usize) -> Self {
        Self::from_columns(bits, bits, |i| 1 << i)
    }

    pub fn inputs(&self) -> usize {
        self.inputs
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// The input mask of output bit `o`, as little-endian 64-bit words.
    pub fn row(&self, o: usize) -> &[u64] {
        &self.rows[o]
    }

    /// Applies the map to an input given as little-endian 64-bit words.
    pub fn apply(&self, input: &[u64]) -> u64 {
        let mut out = 0u64;
        for (o, row) in self.rows.iter().enumerate() {
            let parity = row
                .iter()
                .zip(input)
                .fold(0u32, |acc, (m, x)| acc ^ (m & x).count_ones())
                & 1;
            out |= u64::from(parity) << o;
        }
        out
    }

    /// Applies the map to an input of at most 64 bits.
    pub fn apply_u64(&self, input: u64) -> u64 {
        self.apply(&[input])
    }

    /// `self ∘ inner`: first `inner`, then `self`.
    pub fn compose(&self, inner: &LinearMap) -> LinearMap {
        assert_eq!(self.inputs, inner.outputs);
        let mut column = vec![0u64; words_for(inner.inputs)];
        let images: Vec<u64> = (0..inner.inputs)
            .map(|i| {
                column.iter_mut().for_each(|w| *w = 0);
                column[i / 64] = 1 << (i % 64);
                self.apply_u64(inner.apply(&column))
            })
            .collect();
        LinearMap::from_columns(inner.inputs, self.outputs, |i| images[i])
    }

    /// The inverse of a square map, if it is invertible (Gauss-Jordan).
    pub fn inverse(&self) -> Option<LinearMap> {
        let n = self.inputs;
        if n != self.outputs || n > 64 {
            return None;
        }
        // Each row: the map's row in the low word, the identity beside it.
        let mut rows: Vec<(u64, u64)> = (0..n).map(|o| (self.rows[o][0], 1u64 << o)).collect();
        for col in 0..n {
            let pivot = (col..n).find(|&r| rows[r].0 >> col & 1 != 0)?;
            rows.swap(col, pivot);
            let (pa, pb) = rows[col];
            for (r, row) in rows.iter_mut().enumerate() {
                if r != col && row.0 >> col & 1 != 0 {
                    row.0 ^= pa;
                    row.1 ^= pb;
                }
            }
        }
        let mut inv = LinearMap::identity(n);
        for (o, row) in rows.iter().enumerate() {
            inv.rows[o] = vec![row.1];
        }
        Some(inv)
    }

    /// Ones in the matrix: the two-input XOR count of a naive tree is this
    /// minus the number of outputs.
    pub fn ones(&self) -> usize {
        self.rows
            .iter()
            .flatten()
            .map(|w| w.count_ones() as usize)
            .sum()
    }

    /// The largest number of inputs any output bit depends on.
    pub fn widest_row(&self) -> usize {
        self.rows
            .iter()
            .map(|r| r.iter().map(|w| w.count_ones() as usize).sum())
            .max()
            .unwrap_or(0)
    }
}

/// `Aⁿ`: the raw register after `n` zero bytes, as a map of the register.
pub fn zero_bytes_map(n: usize) -> LinearMap {
    LinearMap::from_columns(32, 32, |i| u64::from(register_after(1 << i, &vec![0u8; n])))
}

/// `A⁻ⁿ`: takes `n` trailing zero bytes back out of the register.
pub fn undo_zero_bytes_map(n: usize) -> LinearMap {
    zero_bytes_map(n)
        .inverse()
        .expect("the CRC-32 shift matrix is invertible")
}

/// `M`: the register contribution of one 64-byte beat starting from a zero
/// register. Input bit `8·k + j` is bit `j` of byte `k` (byte 0 of the beat
/// in bits 7:0, as the datapath carries it).
pub fn beat_data_map() -> LinearMap {
    LinearMap::from_columns(BEAT_BITS, 32, |i| {
        let mut beat = [0u8; BEAT_BYTES];
        beat[i / 8] = 1 << (i % 8);
        u64::from(register_after(0, &beat))
    })
}

/// Packs a beat of up to 64 bytes (byte 0 lowest) into little-endian words,
/// zero-filling missing bytes.
pub fn beat_words(bytes: &[u8]) -> [u64; 8] {
    let mut beat = [0u8; BEAT_BYTES];
    beat[..bytes.len()].copy_from_slice(bytes);
    let mut words = [0u64; 8];
    for (w, chunk) in words.iter_mut().zip(beat.chunks_exact(8)) {
        *w = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
    }
    words
}

/// The maps one beat-wide CRC engine needs, computed once.
#[derive(Clone, Debug)]
pub struct BeatCrc {
    /// `A⁶⁴`.
    pub state: LinearMap,
    /// `M`.
    pub data: LinearMap,
}

impl Default for BeatCrc {
    fn default() -> Self {
        BeatCrc {
            state: zero_bytes_map(BEAT_BYTES),
            data: beat_data_map(),
        }
    }
}

impl BeatCrc {
    /// One beat, exactly as the hardware computes it.
    pub fn step(&self, state: u32, beat: &[u64; 8]) -> u32 {
        (self.state.apply_u64(u64::from(state)) ^ self.data.apply(beat)) as u32
    }

    /// The raw register after `bytes`, computed a beat at a time with the
    /// last partial beat zero-filled and the fill taken out again by the
    /// binary undo stages (32, 16, 8, 4, 2, 1 bytes) the engine uses.
    pub fn register_after(&self, undo: &UndoStages, state: u32, bytes: &[u8]) -> u32 {
        let mut s = state;
        let mut fill = 0;
        for chunk in bytes.chunks(BEAT_BYTES) {
            s = self.step(s, &beat_words(chunk));
            fill = BEAT_BYTES - chunk.len();
        }
        undo.apply(s, fill)
    }
}

/// `A⁻³²`, `A⁻¹⁶`, … `A⁻¹`: stage `k` is applied when bit `5 - k` of the
/// zero-fill count is set.
#[derive(Clone, Debug)]
pub struct UndoStages {
    pub stages: Vec<LinearMap>,
}

/// Zero-fill sizes of the undo stages, largest first.
pub const UNDO_STAGE_BYTES: [usize; 6] = [32, 16, 8, 4, 2, 1];

impl Default for UndoStages {
    fn default() -> Self {
        UndoStages {
            stages: UNDO_STAGE_BYTES
                .iter()
                .map(|&n| undo_zero_bytes_map(n))
                .collect(),
        }
    }
}

impl UndoStages {
    /// Takes `fill` (0..=63) trailing zero bytes out of the register.
    pub fn apply(&self, state: u32, fill: usize) -> u32 {
        assert!(fill < BEAT_BYTES);
        let mut s = u64::from(state);
        for (stage, &n) in self.stages.iter().zip(&UNDO_STAGE_BYTES) {
            if fill & n != 0 {
                s = stage.apply_u64(s);
            }
        }
        s as u32
    }
}

/// What the register of a message that ends with its own correct CRC looks
/// like after `fill` zero bytes were appended to complete the last beat:
/// `A^fill · RESIDUE_REGISTER`. Comparing against this table checks a CRC
/// without undoing the fill.
pub fn padded_residues() -> [u32; BEAT_BYTES] {
    let mut table = [0u32; BEAT_BYTES];
    for (fill, r) in table.iter_mut().enumerate() {
        *r = register_after(RESIDUE_REGISTER, &vec![0u8; fill]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_bytes(rng: &mut ChaCha8Rng, n: usize) -> Vec<u8> {
        (0..n).map(|_| rng.gen()).collect()
    }

    #[test]
    fn byte_step_is_zlib_crc32() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for n in [0, 1, 7, 64, 1000] {
            let data = random_bytes(&mut rng, n);
            assert_eq!(!register_after(INIT, &data), crc32fast::hash(&data));
        }
    }

    #[test]
    fn residue_constant_holds() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for n in 0..100 {
            let mut data = random_bytes(&mut rng, n);
            let crc = crc32fast::hash(&data);
            data.extend_from_slice(&crc.to_le_bytes());
            assert_eq!(crc32fast::hash(&data), RESIDUE);
            assert_eq!(register_after(INIT, &data), RESIDUE_REGISTER);
        }
        // The raw residue register is also the register after 8 bytes of
        // 0xFF from zlib's initial value, the ICRC's masked-LRH start.
        assert_eq!(register_after(INIT, &[0xFF; 8]), RESIDUE_REGISTER);
    }

    #[test]
    fn maps_compose_and_invert() {
        let a1 = zero_bytes_map(1);
        let a2 = zero_bytes_map(2);
        assert_eq!(a1.compose(&a1), a2);
        let inv = undo_zero_bytes_map(5);
        assert_eq!(inv.compose(&zero_bytes_map(5)), LinearMap::identity(32));
        assert_eq!(zero_bytes_map(5).compose(&inv), LinearMap::identity(32));
        // A map with a zero row is singular.
        let singular = LinearMap::from_columns(32, 32, |i| if i == 3 { 0 } else { 1 << i });
        assert!(singular.inverse().is_none());
    }

    #[test]
    fn beat_maps_match_crc32fast_for_every_length_up_to_256() {
        let crc = BeatCrc::default();
        let undo = UndoStages::default();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for n in 0..=256 {
            for _ in 0..4 {
                let data = random_bytes(&mut rng, n);
                let reg = crc.register_after(&undo, INIT, &data);
                assert_eq!(!reg, crc32fast::hash(&data), "length {n}");
            }
        }
    }

    #[test]
    fn padded_residue_table_checks_without_undoing() {
        let crc = BeatCrc::default();
        let table = padded_residues();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for n in 0..=200 {
            let mut data = random_bytes(&mut rng, n);
            let c = crc32fast::hash(&data);
            data.extend_from_slice(&c.to_le_bytes());
            let mut s = INIT;
            let mut fill = 0;
            for chunk in data.chunks(BEAT_BYTES) {
                s = crc.step(s, &beat_words(chunk));
                fill = BEAT_BYTES - chunk.len();
            }
            assert_eq!(s, table[fill], "length {n}");
            // A corrupted CRC byte no longer meets the table.
            let last = data.len() - 1;
            data[last] ^= 0x10;
            let mut s = INIT;
            for chunk in data.chunks(BEAT_BYTES) {
                s = crc.step(s, &beat_words(chunk));
            }
            assert_ne!(s, table[fill], "length {n}");
        }
    }

    #[test]
    fn matrix_sizes_are_as_expected() {
        let crc = BeatCrc::default();
        // Each output bit of the data term depends on about half the beat.
        assert!(crc.data.widest_row() <= BEAT_BITS);
        assert!(crc.data.ones() > 32 * BEAT_BITS / 3);
        assert!(crc.state.widest_row() <= 32);
    }
}
