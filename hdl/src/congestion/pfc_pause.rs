//! `PfcPause`: priority flow control (IEEE 802.1Qbb) on receive. It
//! watches the receive stream for PFC frames, keeps a pause timer per
//! priority counted down in quanta of 512 bit times, and tells transmit
//! which priorities must not start a frame; a watchdog stops honouring a
//! pause that lasts too long (a PFC storm) until the peer's pause ends.
//! The behaviour, cycle by cycle, is `rocenic_model::pfc_pause` (the
//! block's oracle, bit for bit); the frame format is
//! `rocenic_wire::pfc`.
//!
//! # Ports
//!
//! - `clock`; `reset` (synchronous, high): every priority unpaused, the
//!   watchdog cleared.
//! - `rx_valid`, `rx_data` (512 bits, byte 0 in lane 0), `rx_keep`,
//!   `rx_last`: the beats taken on the receive stream (a tap: the block
//!   never holds the stream). A frame is PFC when its first beat holds the
//!   MAC Control address, EtherType 0x8808 and opcode 0x0101 and at least
//!   60 bytes (`rx_keep` bit 59); everything it needs is in that beat.
//! - `cfg` ([`PfcParamsPort`]): `honoured` (a bit per priority),
//!   `bits_per_cycle` (link bit times per cycle, 1..=512: 400 for 100 Gb/s
//!   at 250 MHz), `watchdog_quanta` (0: no watchdog).
//! - `paused` (8 bits): transmit must not start a frame of a priority
//!   whose bit is set; `tripped` (8 bits): priorities whose pause the
//!   watchdog ignores; `pause_frame`: a pulse per PFC frame with a
//!   non-zero time for an honoured priority (`rx_pause_frames`); `trips`
//!   (8 bits): a pulse per priority that trips (`pause_watchdog_trips`).
//!
//! # Latency and throughput
//!
//! A PFC frame whose first beat is taken in cycle `c` shows on `paused`
//! and `pause_frame` in `c + 1`, so with transmit checking `paused` when
//! it starts a frame the pause is honoured within the frame in flight.
//! One beat per cycle, every cycle; back-to-back PFC frames (one beat
//! each) are each applied.
//!
//! # State
//!
//! Flip-flops only: a 10-bit quantum fraction, and per priority a 16-bit
//! timer and a 32-bit (saturating) count of quanta paused.

use rust_hdl::prelude::*;

/// The PFC block's parameters, the fields of the model's `PfcParams`
/// (Verilog `cfg$honoured` ..).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "PfcParamsSource"]
pub struct PfcParamsPort {
    pub honoured: Signal<In, Bits<8>>,
    pub bits_per_cycle: Signal<In, Bits<10>>,
    pub watchdog_quanta: Signal<In, Bits<32>>,
}

/// The driving side of [`PfcParamsPort`] (the congestion registers').
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "PfcParamsPort"]
pub struct PfcParamsSource {
    pub honoured: Signal<Out, Bits<8>>,
    pub bits_per_cycle: Signal<Out, Bits<10>>,
    pub watchdog_quanta: Signal<Out, Bits<32>>,
}

impl PfcParamsPort {
    /// Drives the signals from the model's parameters (a test bench's, in
    /// rust-hdl's simulator).
    pub fn drive(&mut self, p: &rocenic_model::pfc_pause::PfcParams) {
        self.honoured.next = bits(p.honoured.into());
        self.bits_per_cycle.next = bits(u64::from(p.bits_per_cycle) & 0x3FF);
        self.watchdog_quanta.next = bits(p.watchdog_quanta.into());
    }
}

/// `rx_data` bits 0..48: 01-80-C2-00-00-01, byte 0 first.
const PFC_DEST: u64 = 0x0100_00C2_8001;
/// `rx_data` bits 96..128: EtherType 0x8808 and opcode 0x0101 as bytes
/// 12..16 arrive.
const PFC_TYPE_OPCODE: u64 = 0x0101_0888;

/// The block (see the module doc).
#[derive(LogicBlock)]
pub struct PfcPause {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub rx_valid: Signal<In, Bit>,
    pub rx_data: Signal<In, Bits<512>>,
    pub rx_keep: Signal<In, Bits<64>>,
    pub rx_last: Signal<In, Bit>,
    pub cfg: PfcParamsPort,

    pub paused: Signal<Out, Bits<8>>,
    pub tripped: Signal<Out, Bits<8>>,
    pub pause_frame: Signal<Out, Bit>,
    pub trips: Signal<Out, Bits<8>>,

    /// Inside a frame: the next beat is not a first beat.
    in_frame: DFF<Bit>,
    fraction: DFF<Bits<10>>,
    timer: [DFF<Bits<16>>; 8],
    stalled: [DFF<Bits<32>>; 8],
    tripped_state: DFF<Bits<8>>,
    pause_frame_pulse: DFF<Bit>,
    trips_pulse: DFF<Bits<8>>,

    is_pfc: Signal<Local, Bit>,
    loads: Signal<Local, Bits<8>>,
    quanta: [Signal<Local, Bits<16>>; 8],
    sum: Signal<Local, Bits<11>>,
    quantum: Signal<Local, Bit>,
    running: Signal<Local, Bits<8>>,
    nonzero_loads: Signal<Local, Bits<8>>,
    tripped_next: Signal<Local, Bits<8>>,
    trips_next: Signal<Local, Bits<8>>,
    pfc_dest: Constant<Bits<48>>,
    pfc_type_opcode: Constant<Bits<32>>,
    stall_most: Constant<Bits<32>>,
}

impl Default for PfcPause {
    fn default() -> Self {
        PfcPause {
            clock: Default::default(),
            reset: Default::default(),
            rx_valid: Default::default(),
            rx_data: Default::default(),
            rx_keep: Default::default(),
            rx_last: Default::default(),
            cfg: Default::default(),
            paused: Default::default(),
            tripped: Default::default(),
            pause_frame: Default::default(),
            trips: Default::default(),
            in_frame: Default::default(),
            fraction: Default::default(),
            timer: Default::default(),
            stalled: Default::default(),
            tripped_state: Default::default(),
            pause_frame_pulse: Default::default(),
            trips_pulse: Default::default(),
            is_pfc: Default::default(),
            loads: Default::default(),
            quanta: Default::default(),
            sum: Default::default(),
            quantum: Default::default(),
            running: Default::default(),
            nonzero_loads: Default::default(),
            tripped_next: Default::default(),
            trips_next: Default::default(),
            pfc_dest: Constant::new(bits(PFC_DEST)),
            pfc_type_opcode: Constant::new(bits(PFC_TYPE_OPCODE)),
            stall_most: Constant::new(bits(u64::from(u32::MAX))),
        }
    }
}

impl Logic for PfcPause {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            in_frame,
            fraction,
            tripped_state,
            pause_frame_pulse,
            trips_pulse
        );
        for p in 0..8 {
            self.timer[p].clock.next = self.clock.val();
            self.stalled[p].clock.next = self.clock.val();
            self.timer[p].d.next = self.timer[p].q.val();
            self.stalled[p].d.next = self.stalled[p].q.val();
        }

        // A PFC frame's first beat.
        if self.rx_valid.val() {
            self.in_frame.d.next = !self.rx_last.val();
        }
        self.is_pfc.next = self.rx_valid.val()
            & !self.in_frame.q.val()
            & self.rx_keep.val().get_bit(59)
            & (self.rx_data.val().get_bits::<48>(0) == self.pfc_dest.val())
            & (self.rx_data.val().get_bits::<32>(96) == self.pfc_type_opcode.val());
        self.loads.next = bits::<8>(0);
        if self.is_pfc.val() {
            self.loads.next = self.rx_data.val().get_bits::<8>(136) & self.cfg.honoured.val();
        }
        // time[p]: bytes 18 + 2p (high) and 19 + 2p, big-endian.
        self.quanta[0].next = (bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(144)) << 8)
            | bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(152));
        self.quanta[1].next = (bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(160)) << 8)
            | bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(168));
        self.quanta[2].next = (bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(176)) << 8)
            | bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(184));
        self.quanta[3].next = (bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(192)) << 8)
            | bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(200));
        self.quanta[4].next = (bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(208)) << 8)
            | bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(216));
        self.quanta[5].next = (bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(224)) << 8)
            | bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(232));
        self.quanta[6].next = (bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(240)) << 8)
            | bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(248));
        self.quanta[7].next = (bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(256)) << 8)
            | bit_cast::<16, 8>(self.rx_data.val().get_bits::<8>(264));

        // One quantum passes when the fraction reaches 512 bit times.
        self.sum.next = bit_cast::<11, 10>(self.fraction.q.val())
            + bit_cast::<11, 10>(self.cfg.bits_per_cycle.val());
        self.quantum.next = self.sum.val().get_bit(9) | self.sum.val().get_bit(10);
        self.fraction.d.next = self.sum.val().get_bits::<10>(0);
        if self.quantum.val() {
            self.fraction.d.next = self.sum.val().get_bits::<10>(0) - 512;
        }

        self.running.next = bits::<8>(0);
        self.nonzero_loads.next = bits::<8>(0);
        self.tripped_next.next = self.tripped_state.q.val();
        self.trips_next.next = bits::<8>(0);
        for p in 0..8 {
            self.running.next = self
                .running
                .val()
                .replace_bit(p, self.timer[p].q.val().any());
            self.nonzero_loads.next = self
                .nonzero_loads
                .val()
                .replace_bit(p, self.loads.val().get_bit(p) & self.quanta[p].val().any());
            if !self.timer[p].q.val().any() {
                self.stalled[p].d.next = bits::<32>(0);
                self.tripped_next.next = self.tripped_next.val().replace_bit(p, false);
            } else {
                if self.cfg.watchdog_quanta.val().any()
                    & !self.tripped_state.q.val().get_bit(p)
                    & (self.stalled[p].q.val() >= self.cfg.watchdog_quanta.val())
                {
                    self.tripped_next.next = self.tripped_next.val().replace_bit(p, true);
                    self.trips_next.next = self.trips_next.val().replace_bit(p, true);
                }
                if self.quantum.val() & (self.stalled[p].q.val() != self.stall_most.val()) {
                    self.stalled[p].d.next = self.stalled[p].q.val() + 1;
                }
                if self.quantum.val() {
                    self.timer[p].d.next = self.timer[p].q.val() - 1;
                }
            }
            if self.loads.val().get_bit(p) {
                self.timer[p].d.next = self.quanta[p].val();
            }
        }
        self.pause_frame_pulse.d.next = self.nonzero_loads.val().any();
        self.tripped_state.d.next = self.tripped_next.val();
        self.trips_pulse.d.next = self.trips_next.val();

        if self.reset.val() {
            self.in_frame.d.next = false;
            self.fraction.d.next = bits::<10>(0);
            self.tripped_state.d.next = bits::<8>(0);
            self.pause_frame_pulse.d.next = false;
            self.trips_pulse.d.next = bits::<8>(0);
        }
        for p in 0..8 {
            if self.reset.val() {
                self.timer[p].d.next = bits::<16>(0);
                self.stalled[p].d.next = bits::<32>(0);
            }
        }

        self.paused.next = self.running.val() & !self.tripped_state.q.val();
        self.tripped.next = self.tripped_state.q.val();
        self.pause_frame.next = self.pause_frame_pulse.q.val();
        self.trips.next = self.trips_pulse.q.val();
    }
}
