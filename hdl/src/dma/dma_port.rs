//! The core's two DMA port shapes, declared once: tagged reads
//! ([`DmaReadPort`]) and posted write bursts ([`DmaWritePort`]), each with
//! its host side ([`DmaReadHost`], [`DmaWriteHost`]) for the blocks that
//! serve or arbitrate them. A composite that contains a DMA client declares
//! the same port and `link`s it to the inner one, so the Verilog ports are
//! `dma$req_valid` .. at every level; an arbiter's client ports are host
//! sides, `join`ed to the clients' ports.

use rust_hdl::prelude::*;

/// A DMA read port, as seen from the block that reads: requests
/// (valid/ready) of `req_len` bytes at host address `req_addr` under an
/// 8-bit `req_tag`, and the read data (valid/ready) coming back as beats
/// of one tag in order (`rd_last` on a request's last beat), tags in any
/// order, byte 0 of a request in lane 0 of its first beat. A composite
/// that contains the reading block declares the same port and `link`s it
/// to the inner one, so the Verilog ports are `dma$req_valid` .. at every
/// level.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "DmaReadHost"]
pub struct DmaReadPort {
    pub req_valid: Signal<Out, Bit>,
    pub req_ready: Signal<In, Bit>,
    pub req_tag: Signal<Out, Bits<8>>,
    pub req_addr: Signal<Out, Bits<64>>,
    pub req_len: Signal<Out, Bits<32>>,

    pub rd_valid: Signal<In, Bit>,
    pub rd_ready: Signal<Out, Bit>,
    pub rd_tag: Signal<In, Bits<8>>,
    pub rd_data: Signal<In, Bits<512>>,
    pub rd_last: Signal<In, Bit>,
}

/// The host side of a [`DmaReadPort`] (what a DMA engine or an arbiter
/// offers a reading block), joined to it.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "DmaReadPort"]
pub struct DmaReadHost {
    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_tag: Signal<In, Bits<8>>,
    pub req_addr: Signal<In, Bits<64>>,
    pub req_len: Signal<In, Bits<32>>,

    pub rd_valid: Signal<Out, Bit>,
    pub rd_ready: Signal<In, Bit>,
    pub rd_tag: Signal<Out, Bits<8>>,
    pub rd_data: Signal<Out, Bits<512>>,
    pub rd_last: Signal<Out, Bit>,
}

/// A posted DMA write port, as seen from the block that writes: a write
/// request is a burst of beats (valid/ready) framed by `first` / `last`;
/// every beat carries the request's host address `req_addr` and length
/// `req_len` (1..=4096 bytes, never crossing a page), `addr` is the
/// 64-byte-aligned host address of the beat's lane 0 and `keep` marks the
/// request's bytes in `data`.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "DmaWriteHost"]
pub struct DmaWritePort {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub addr: Signal<Out, Bits<64>>,
    pub data: Signal<Out, Bits<512>>,
    pub keep: Signal<Out, Bits<64>>,
    pub first: Signal<Out, Bit>,
    pub last: Signal<Out, Bit>,
    pub req_addr: Signal<Out, Bits<64>>,
    pub req_len: Signal<Out, Bits<13>>,
}

/// The host side of a [`DmaWritePort`], joined to it.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "DmaWritePort"]
pub struct DmaWriteHost {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub addr: Signal<In, Bits<64>>,
    pub data: Signal<In, Bits<512>>,
    pub keep: Signal<In, Bits<64>>,
    pub first: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    pub req_addr: Signal<In, Bits<64>>,
    pub req_len: Signal<In, Bits<13>>,
}
