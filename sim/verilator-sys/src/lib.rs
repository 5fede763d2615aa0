//! Verilator bridge: cycle-accurate models of the rocenic-hdl RTL blocks,
//! driven from Rust.
//!
//! The build script Verilates every block that `rocenic_hdl::export::blocks()`
//! lists, and its own self-test block `bridge_check`, and generates, per block, a type implementing [`Block`] (in
//! [`blocks`], re-exported here; `bridge_check` becomes [`BridgeCheck`]) with
//! one typed constant per port (`BridgeCheck::A`, `BridgeCheck::COUNTER_COUNT`).
//! [`Sim`] wraps a block and drives its `clock`.
//!
//! # Values
//!
//! Port values are slices of `u64` words, least significant word first:
//! bits 63:0 are word 0, bits 127:64 word 1, and so on, so a 512-bit port
//! takes 8 words. Writes are truncated to the port's width (missing words
//! read as zero), reads return exactly `ceil(width / 64)` words with the bits
//! above the width clear.
//!
//! # Clocking convention
//!
//! [`Sim::tick`] is one clock cycle: clock high, eval, clock low, eval.
//! The falling edge's eval is deferred to the next [`Sim::eval`] or
//! `tick` (rust-hdl's logic is all on the rising edge, so nothing changes
//! at the falling edge but the clock): a harness that sets inputs and
//! evals once per cycle then pays two evals a cycle, not three (each
//! eval settles the whole input-driven logic, the largest part of a
//! cycle's time on `nic_core`). While tracing, the falling edge is
//! evaluated in `tick` so the waveform shows it.
//! Inputs set before `tick` are what the rising edge samples (set them
//! while the clock is low, i.e. between ticks); once `tick` returns,
//! registers hold what they clocked in at that edge and combinational outputs
//! reflect the current inputs and new register state. After changing inputs,
//! call [`Sim::eval`] to see their combinational effect before the next edge.
//!
//! # Waveforms
//!
//! [`Sim::trace`] starts a VCD (or, when built with lz4 and zlib headers,
//! FST) dump chosen by file extension. Only a block built with waveform
//! support can: the crate's `waves` feature builds every block so, at about
//! twice the C++ compile time and a fifth less speed (`docs/status.md`);
//! without it only [`BridgeCheck`] has it and the others answer
//! [`SimError::WavesNotBuilt`]. The trace time unit is 1 ns and each
//! cycle spans 10 units: cycle `n` has its inputs (and the falling edge of
//! the previous cycle) at `10n` and its rising edge at `10n + 5`.
//!
//! # Adding a block
//!
//! List it in `rocenic_hdl::export::blocks()` (it needs a 1-bit `clock`
//! input). The build script Verilates it with `-Wall` (the few waivers for
//! rust-hdl's output are listed, with reasons, in `build.rs`), and a type
//! named after it appears here. Verilator is the one `make setup` installs
//! in `.venv`, or `VERILATOR_ROOT` / `ROCENIC_VERILATOR`.
//!
//! Each model owns its own Verilator context, so any number can coexist
//! (one per test thread, say); a model stays on the thread that made it.

use std::ffi::CString;
use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

/// The generated block types, one per exported rocenic-hdl block.
pub mod blocks {
    include!(concat!(env!("OUT_DIR"), "/blocks.rs"));
}
pub use blocks::*;

/// Raw C ABI of the bridge's runtime (`csrc/vsys.h`).
#[doc(hidden)]
pub mod ffi {
    /// Opaque `VsysHandle`: one Verilated model, its context and waveform.
    #[repr(C)]
    pub struct Handle {
        _opaque: [u8; 0],
    }

    unsafe extern "C" {
        pub fn vsys_trace_open(h: *mut Handle, path: *const core::ffi::c_char, fst: i32) -> i32;
        pub fn vsys_trace_dump(h: *mut Handle, time: u64);
        pub fn vsys_trace_flush(h: *mut Handle);
        pub fn vsys_trace_close(h: *mut Handle);
    }
}

/// Port direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    In,
    Out,
    InOut,
}

/// How Verilator stores a port: `CData`/`SData`/`IData`/`QData` for ports of
/// up to 8/16/32/64 bits, else an array of 32-bit words, least significant
/// first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    U8,
    U16,
    U32,
    U64,
    Wide { words32: u32 },
}

/// One port of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// Rust-friendly name: rust-hdl's `iface$field` becomes `iface_field`.
    pub name: &'static str,
    /// Name in the Verilog (`iface$field`).
    pub hdl_name: &'static str,
    pub width: u32,
    pub dir: Dir,
    pub storage: Storage,
}

impl PortInfo {
    /// Number of `u64` words a value of this port takes.
    pub fn words(&self) -> usize {
        self.width.div_ceil(64) as usize
    }
}

/// Errors of the bridge's fallible operations.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("block `{block}` has no port named `{name}`")]
    NoSuchPort { block: &'static str, name: String },
    #[error("port `{name}` of block `{block}` is not an input")]
    NotAnInput { block: &'static str, name: String },
    #[error("port `{name}` of block `{block}` is not an output")]
    NotAnOutput { block: &'static str, name: String },
    #[error("clock port `{name}` of block `{block}` must be a 1-bit input")]
    BadClock { block: &'static str, name: String },
    #[error("a waveform is already being written; stop it first")]
    TraceActive,
    #[error("waveform `{0}`: the file name must end in .vcd or .fst")]
    TraceFormat(PathBuf),
    #[error("waveform `{0}`: FST support was not built (lz4.h and zlib.h were missing); use .vcd")]
    FstUnavailable(PathBuf),
    #[error("waveform `{path}`: {reason}")]
    TraceOpen { path: PathBuf, reason: String },
    #[error(
        "block `{0}` was built without waveform support; build with the `waves` feature \
         (`cargo build --features verilator-sys/waves`)"
    )]
    WavesNotBuilt(&'static str),
}

/// A port of block `B`, readable. Obtain one from the block's constants or
/// [`Block::port`].
pub struct Port<B> {
    index: u16,
    _block: PhantomData<fn() -> B>,
}

/// An input port of block `B`: the only kind [`Block::set`] accepts.
pub struct Input<B>(Port<B>);

/// An output port of block `B`.
pub struct Output<B>(Port<B>);

// Manual impls: derives would needlessly require `B: Clone` etc.
impl<B> Clone for Port<B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B> Copy for Port<B> {}
impl<B> PartialEq for Port<B> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<B> Eq for Port<B> {}
impl<B> fmt::Debug for Port<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Port({})", self.index)
    }
}
impl<B> Clone for Input<B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B> Copy for Input<B> {}
impl<B> fmt::Debug for Input<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Input({})", self.0.index)
    }
}
impl<B> Clone for Output<B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B> Copy for Output<B> {}
impl<B> fmt::Debug for Output<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Output({})", self.0.index)
    }
}

impl<B> Port<B> {
    const fn from_index(index: u16) -> Self {
        Port {
            index,
            _block: PhantomData,
        }
    }

    /// Position of the port in [`Block::ports`].
    pub fn index(self) -> usize {
        self.index as usize
    }
}

impl<B: Block> Port<B> {
    pub fn info(self) -> &'static PortInfo {
        &B::ports()[self.index()]
    }
}

impl<B> Input<B> {
    #[doc(hidden)]
    pub const fn from_index(index: u16) -> Self {
        Input(Port::from_index(index))
    }
    pub fn port(self) -> Port<B> {
        self.0
    }
}

impl<B> Output<B> {
    #[doc(hidden)]
    pub const fn from_index(index: u16) -> Self {
        Output(Port::from_index(index))
    }
    pub fn port(self) -> Port<B> {
        self.0
    }
}

impl<B> From<Input<B>> for Port<B> {
    fn from(p: Input<B>) -> Self {
        p.0
    }
}

impl<B> From<Output<B>> for Port<B> {
    fn from(p: Output<B>) -> Self {
        p.0
    }
}

/// A Verilated RTL block. Implemented by the generated types in [`blocks`];
/// everything but the required items is shared.
pub trait Block: Sized {
    /// The block's name in `rocenic_hdl::export::blocks()`.
    const NAME: &'static str;

    /// True when the block was Verilated with waveform support: always for
    /// [`BridgeCheck`], for every block with the crate's `waves` feature.
    const WAVES: bool;

    /// All ports in Verilog declaration order.
    fn ports() -> &'static [PortInfo];

    /// A fresh model in its power-up state (Verilog `initial` values; bits
    /// without one start at zero). Nothing is evaluated yet: call
    /// [`Block::eval`] (or use [`Sim`], which does) before reading outputs.
    fn new() -> Self;

    /// Settles the model after input changes (one Verilator `eval`).
    fn eval(&mut self);

    #[doc(hidden)]
    fn raw(&self) -> &RawModel;
    #[doc(hidden)]
    fn raw_mut(&mut self) -> &mut RawModel;

    /// Looks a port up by its Rust-friendly name (`iface_field`) or its
    /// Verilog name (`iface$field`).
    fn port(name: &str) -> Result<Port<Self>, SimError> {
        Self::ports()
            .iter()
            .position(|p| p.name == name || p.hdl_name == name)
            .map(|i| Port::from_index(i as u16))
            .ok_or_else(|| SimError::NoSuchPort {
                block: Self::NAME,
                name: name.to_string(),
            })
    }

    /// Like [`Block::port`], for an input (or inout) port.
    fn input(name: &str) -> Result<Input<Self>, SimError> {
        let port = Self::port(name)?;
        match port.info().dir {
            Dir::In | Dir::InOut => Ok(Input(port)),
            Dir::Out => Err(SimError::NotAnInput {
                block: Self::NAME,
                name: name.to_string(),
            }),
        }
    }

    /// Like [`Block::port`], for an output port.
    fn output(name: &str) -> Result<Output<Self>, SimError> {
        let port = Self::port(name)?;
        match port.info().dir {
            Dir::Out => Ok(Output(port)),
            Dir::In | Dir::InOut => Err(SimError::NotAnOutput {
                block: Self::NAME,
                name: name.to_string(),
            }),
        }
    }

    /// Sets an input from little-endian `u64` words, truncated to its width;
    /// missing words are zero. Takes effect at the next [`Block::eval`].
    fn set(&mut self, port: Input<Self>, value: &[u64]) {
        self.raw_mut().write(port.0.index(), value);
    }

    /// Sets an input to `value` (truncated to its width; wider ports get
    /// zero above bit 63).
    fn set_u64(&mut self, port: Input<Self>, value: u64) {
        self.raw_mut().write(port.0.index(), &[value]);
    }

    fn set_bit(&mut self, port: Input<Self>, value: bool) {
        self.set_u64(port, value as u64);
    }

    /// The port's value as `ceil(width / 64)` little-endian words.
    fn get(&self, port: impl Into<Port<Self>>) -> Vec<u64> {
        let port = port.into();
        let mut out = vec![0; port.info().words()];
        self.raw().read(port.index(), &mut out);
        out
    }

    /// Reads the port into `out` without allocating: the first
    /// `min(out.len(), words)` words are the value, any further words zero.
    fn get_into(&self, port: impl Into<Port<Self>>, out: &mut [u64]) {
        self.raw().read(port.into().index(), out);
    }

    /// Bits 63:0 of the port.
    fn get_u64(&self, port: impl Into<Port<Self>>) -> u64 {
        let mut word = [0];
        self.raw().read(port.into().index(), &mut word);
        word[0]
    }

    /// Bit 0 of the port.
    fn get_bit(&self, port: impl Into<Port<Self>>) -> bool {
        self.get_u64(port) & 1 == 1
    }
}

type NewFn = unsafe extern "C" fn() -> *mut ffi::Handle;
type PortFn = unsafe extern "C" fn(*mut ffi::Handle, u32) -> *mut core::ffi::c_void;
type DeleteFn = unsafe extern "C" fn(*mut ffi::Handle);

/// One live Verilated model: its handle and the address of every port.
///
/// Ports are read and written in place through those addresses, so a port
/// access costs no foreign call; only `eval` crosses into C++.
#[doc(hidden)]
pub struct RawModel {
    handle: NonNull<ffi::Handle>,
    delete: DeleteFn,
    ports: &'static [PortInfo],
    ptrs: Box<[NonNull<u8>]>,
    tracing: bool,
}

impl RawModel {
    /// # Safety
    /// `new`, `port` and `delete` must be one block's shim functions and
    /// `ports` that block's port table (same order as the shim's indices).
    pub unsafe fn new(
        new: NewFn,
        port: PortFn,
        delete: DeleteFn,
        ports: &'static [PortInfo],
    ) -> Self {
        // SAFETY: per the caller's contract.
        let handle = NonNull::new(unsafe { new() })
            .expect("verilator-sys: out of memory creating a Verilated model");
        let ptrs = (0..ports.len())
            .map(|i| {
                // SAFETY: `i` indexes the shim's own port table.
                let p = unsafe { port(handle.as_ptr(), i as u32) };
                NonNull::new(p.cast::<u8>()).expect("verilator-sys: shim and port table disagree")
            })
            .collect();
        RawModel {
            handle,
            delete,
            ports,
            ptrs,
            tracing: false,
        }
    }

    pub fn handle(&self) -> *mut ffi::Handle {
        self.handle.as_ptr()
    }

    #[inline]
    fn write(&mut self, index: usize, value: &[u64]) {
        let info = &self.ports[index];
        let p = self.ptrs[index].as_ptr();
        // SAFETY: `p` points at this port's storage of the type `info.storage`
        // names, inside the live model; wide ports hold `words32` words.
        unsafe {
            match info.storage {
                Storage::U8 => p.write(low_word(value, info.width) as u8),
                Storage::U16 => p.cast::<u16>().write(low_word(value, info.width) as u16),
                Storage::U32 => p.cast::<u32>().write(low_word(value, info.width) as u32),
                Storage::U64 => p.cast::<u64>().write(low_word(value, info.width)),
                Storage::Wide { words32 } => {
                    write_wide(p.cast(), words32 as usize, info.width, value)
                }
            }
        }
    }

    #[inline]
    fn read(&self, index: usize, out: &mut [u64]) {
        let info = &self.ports[index];
        let p = self.ptrs[index].as_ptr();
        let Some(first) = out.first_mut() else { return };
        // SAFETY: as in `write`; reads only.
        unsafe {
            match info.storage {
                Storage::U8 => *first = p.read() as u64,
                Storage::U16 => *first = p.cast::<u16>().read() as u64,
                Storage::U32 => *first = p.cast::<u32>().read() as u64,
                Storage::U64 => *first = p.cast::<u64>().read(),
                Storage::Wide { words32 } => {
                    read_wide(p.cast(), words32 as usize, info.width, out);
                    return;
                }
            }
        }
        // Verilator keeps bits above the width clear in what it computes and
        // in what `write` stores; masking makes a read exact regardless.
        *first &= low_mask(info.width);
        out[1..].fill(0);
    }

    fn trace_open(&mut self, path: &Path) -> Result<(), SimError> {
        if self.tracing {
            return Err(SimError::TraceActive);
        }
        let fst = match path.extension().and_then(|e| e.to_str()) {
            Some("vcd") => false,
            Some("fst") => true,
            _ => return Err(SimError::TraceFormat(path.to_path_buf())),
        };
        if fst && !FST_SUPPORTED {
            return Err(SimError::FstUnavailable(path.to_path_buf()));
        }
        let open_err = |reason: String| SimError::TraceOpen {
            path: path.to_path_buf(),
            reason,
        };
        // Verilator treats an unwritable path as fatal in some writers;
        // creating the file first turns that into an error here.
        std::fs::File::create(path).map_err(|e| open_err(e.to_string()))?;
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| open_err("path contains a NUL byte".into()))?;
        // SAFETY: live handle, NUL-terminated path.
        match unsafe { ffi::vsys_trace_open(self.handle(), c_path.as_ptr(), fst as i32) } {
            0 => {
                self.tracing = true;
                Ok(())
            }
            1 => Err(SimError::TraceActive),
            2 => Err(SimError::FstUnavailable(path.to_path_buf())),
            _ => Err(open_err("the waveform writer could not open it".into())),
        }
    }

    fn trace_dump(&mut self, time: u64) {
        if self.tracing {
            // SAFETY: live handle.
            unsafe { ffi::vsys_trace_dump(self.handle(), time) }
        }
    }

    fn trace_close(&mut self) {
        if self.tracing {
            // SAFETY: live handle; closing flushes.
            unsafe {
                ffi::vsys_trace_flush(self.handle());
                ffi::vsys_trace_close(self.handle());
            }
            self.tracing = false;
        }
    }
}

impl Drop for RawModel {
    fn drop(&mut self) {
        // SAFETY: the handle came from this block's `new` and is freed once.
        unsafe { (self.delete)(self.handle()) }
    }
}

fn low_word(value: &[u64], width: u32) -> u64 {
    value.first().copied().unwrap_or(0) & low_mask(width)
}

/// Stores `value` (u64 words, least significant first) into a `VlWide` of
/// `words32` 32-bit words holding `width` bits: missing words become zero and
/// bits above the width are cleared, as Verilator requires.
///
/// # Safety
/// `dst` must be valid for writing `words32` `u32`s.
#[inline]
unsafe fn write_wide(dst: *mut u32, words32: usize, width: u32, value: &[u64]) {
    let avail = (value.len() * 2).min(words32);
    if cfg!(target_endian = "little") {
        // A little-endian `[u64]` is the same bytes as the `[u32]` of twice
        // the length, least significant half first: copy straight across.
        // SAFETY: `avail` u32s fit in both `value` and `dst`.
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr().cast::<u32>(), dst, avail) };
    } else {
        for i in 0..avail {
            // SAFETY: i < words32.
            unsafe { dst.add(i).write((value[i / 2] >> (32 * (i % 2))) as u32) };
        }
    }
    for i in avail..words32 {
        // SAFETY: i < words32.
        unsafe { dst.add(i).write(0) };
    }
    let top_bits = width as usize - 32 * (words32 - 1);
    if top_bits < 32 {
        // SAFETY: words32 >= 1 for any wide port.
        unsafe { *dst.add(words32 - 1) &= (1u32 << top_bits) - 1 };
    }
}

/// Loads a `VlWide` into `out` (see [`write_wide`]); words of `out` beyond
/// the port are zeroed.
///
/// # Safety
/// `src` must be valid for reading `words32` `u32`s.
#[inline]
unsafe fn read_wide(src: *const u32, words32: usize, width: u32, out: &mut [u64]) {
    let avail = words32.min(out.len() * 2);
    if avail % 2 == 1 {
        // The copy below would leave the high half of the last word as it
        // was; clear it first.
        out[avail / 2] = 0;
    }
    if cfg!(target_endian = "little") {
        // SAFETY: `avail` u32s fit in both `src` and `out`.
        unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr().cast::<u32>(), avail) };
    } else {
        for i in 0..avail {
            // SAFETY: i < words32.
            let half = unsafe { src.add(i).read() } as u64;
            if i % 2 == 0 {
                out[i / 2] = half;
            } else {
                out[i / 2] |= half << 32;
            }
        }
    }
    out[avail.div_ceil(2)..].fill(0);
    let words = (width as usize).div_ceil(64);
    if let Some(last) = out.get_mut(words - 1) {
        let rem = width % 64;
        if rem != 0 {
            *last &= (1u64 << rem) - 1;
        }
    }
}

fn low_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Trace time units per clock cycle (the trace unit is 1 ns).
pub const TRACE_TIME_PER_CYCLE: u64 = 10;

/// A block with its clock driven by [`Sim::tick`]; see the crate docs for
/// the clocking convention.
pub struct Sim<B: Block> {
    dut: B,
    clock: NonNull<u8>,
    cycle: u64,
    tracing: bool,
    /// The clock went low after the last rising edge and the model has not
    /// evaluated it yet.
    falling_edge_pending: bool,
}

impl<B: Block> Sim<B> {
    /// A fresh block, evaluated once with the clock low, driven through its
    /// `clock` port.
    pub fn new() -> Result<Self, SimError> {
        Self::with_clock("clock")
    }

    /// Like [`Sim::new`] with another 1-bit input as the clock.
    pub fn with_clock(clock: &str) -> Result<Self, SimError> {
        let port = B::input(clock)?;
        let info = port.0.info();
        if info.width != 1 || info.storage != Storage::U8 {
            return Err(SimError::BadClock {
                block: B::NAME,
                name: clock.to_string(),
            });
        }
        let mut dut = B::new();
        let clock = dut.raw().ptrs[port.0.index()];
        // SAFETY: the clock's storage is a `CData` inside the live model.
        unsafe { clock.as_ptr().write(0) };
        dut.eval();
        Ok(Sim {
            dut,
            clock,
            cycle: 0,
            tracing: false,
            falling_edge_pending: false,
        })
    }

    pub fn dut(&self) -> &B {
        &self.dut
    }

    pub fn dut_mut(&mut self) -> &mut B {
        &mut self.dut
    }

    /// Completed clock cycles.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    pub fn set(&mut self, port: Input<B>, value: &[u64]) {
        self.dut.set(port, value);
    }

    pub fn set_u64(&mut self, port: Input<B>, value: u64) {
        self.dut.set_u64(port, value);
    }

    pub fn set_bit(&mut self, port: Input<B>, value: bool) {
        self.dut.set_bit(port, value);
    }

    pub fn get(&self, port: impl Into<Port<B>>) -> Vec<u64> {
        self.dut.get(port)
    }

    pub fn get_into(&self, port: impl Into<Port<B>>, out: &mut [u64]) {
        self.dut.get_into(port, out);
    }

    pub fn get_u64(&self, port: impl Into<Port<B>>) -> u64 {
        self.dut.get_u64(port)
    }

    pub fn get_bit(&self, port: impl Into<Port<B>>) -> bool {
        self.dut.get_bit(port)
    }

    /// Settles combinational logic after input changes, without a clock edge.
    pub fn eval(&mut self) {
        self.dut.eval();
        self.falling_edge_pending = false;
    }

    /// One clock cycle: rising edge (sampling the inputs as set now), then
    /// falling edge. See the crate docs.
    #[inline]
    pub fn tick(&mut self) {
        if self.falling_edge_pending {
            self.eval();
        }
        if self.tracing {
            // Show this cycle's inputs settled before the edge samples them.
            self.dut.eval();
            let t = self.cycle * TRACE_TIME_PER_CYCLE;
            self.dut.raw_mut().trace_dump(t);
        }
        // SAFETY: `clock` points at the live model's clock storage.
        unsafe { self.clock.as_ptr().write(1) };
        self.dut.eval();
        if self.tracing {
            let t = self.cycle * TRACE_TIME_PER_CYCLE + TRACE_TIME_PER_CYCLE / 2;
            self.dut.raw_mut().trace_dump(t);
        }
        // SAFETY: as above.
        unsafe { self.clock.as_ptr().write(0) };
        if self.tracing {
            self.dut.eval();
        } else {
            self.falling_edge_pending = true;
        }
        self.cycle += 1;
    }

    /// `n` cycles with unchanged inputs.
    pub fn ticks(&mut self, n: u64) {
        for _ in 0..n {
            self.tick();
        }
    }

    /// Starts writing a waveform of every signal to `path`: VCD for `.vcd`,
    /// FST for `.fst` (when [`FST_SUPPORTED`]). It covers cycles from now
    /// until [`Sim::stop_trace`] or the end of the `Sim`.
    pub fn trace(&mut self, path: impl AsRef<Path>) -> Result<(), SimError> {
        if !B::WAVES {
            return Err(SimError::WavesNotBuilt(B::NAME));
        }
        self.dut.raw_mut().trace_open(path.as_ref())?;
        self.tracing = true;
        Ok(())
    }

    pub fn tracing(&self) -> bool {
        self.tracing
    }

    /// Records the final state, then flushes and closes the waveform (if
    /// one is open).
    pub fn stop_trace(&mut self) {
        if self.tracing {
            self.eval();
            let t = self.cycle * TRACE_TIME_PER_CYCLE;
            self.dut.raw_mut().trace_dump(t);
            self.dut.raw_mut().trace_close();
            self.tracing = false;
        }
    }
}

impl<B: Block> Drop for Sim<B> {
    fn drop(&mut self) {
        self.stop_trace();
    }
}
