// tx_builder_top: the exported tx_builder (module `top` in
// build/verilog/tx_builder.v; release delay 0) with AXI-Stream port names,
// so cocotbext-axi sources and sinks attach by prefix:
//   s_header_*        the TX header record as a valid/ready bus, one port
//                     per field, named as the block's TxHeader fields;
//   s_axis_payload_*  the frames' payloads in (512-bit data, 64 keep bits);
//   m_axis_frame_*    whole frames out, byte 0 in lane 0;
// and the two counters under their own names.
// The record is packed through a packed struct whose width must equal the
// block's record port: a field list out of step with the exported Verilog
// fails the Verilator build with a width error (warnings are fatal).
// rust-hdl packs the record's fields from bit 0 in declaration order, so the
// struct lists them last field first (a packed struct's first member is its
// most significant).
module tx_builder_top (
    input  wire          clk,
    input  wire          rst,

    input  wire          s_header_valid,
    output wire          s_header_ready,
    input  wire [47:0]       s_header_eth_dst,
    input  wire [47:0]       s_header_eth_src,
    input  wire              s_header_ipv6,
    input  wire [127:0]      s_header_ip_src,
    input  wire [127:0]      s_header_ip_dst,
    input  wire [5:0]        s_header_dscp,
    input  wire [1:0]        s_header_ecn,
    input  wire [15:0]       s_header_ipv4_identification,
    input  wire              s_header_ipv4_dont_fragment,
    input  wire [7:0]        s_header_ttl,
    input  wire [19:0]       s_header_ipv6_flow_label,
    input  wire [15:0]       s_header_udp_src_port,
    input  wire              s_header_udp_checksum,
    input  wire [7:0]        s_header_opcode,
    input  wire              s_header_solicited,
    input  wire              s_header_mig_req,
    input  wire [3:0]        s_header_tver,
    input  wire [15:0]       s_header_pkey,
    input  wire              s_header_fecn,
    input  wire              s_header_becn,
    input  wire [23:0]       s_header_dest_qp,
    input  wire              s_header_ack_req,
    input  wire [23:0]       s_header_psn,
    input  wire [31:0]       s_header_deth_qkey,
    input  wire [23:0]       s_header_deth_src_qp,
    input  wire [63:0]       s_header_reth_va,
    input  wire [31:0]       s_header_reth_rkey,
    input  wire [31:0]       s_header_reth_dma_len,
    input  wire [63:0]       s_header_atomic_va,
    input  wire [31:0]       s_header_atomic_rkey,
    input  wire [63:0]       s_header_atomic_swap_add,
    input  wire [63:0]       s_header_atomic_compare,
    input  wire [7:0]        s_header_aeth_syndrome,
    input  wire [23:0]       s_header_aeth_msn,
    input  wire [63:0]       s_header_atomic_ack_orig,
    input  wire [31:0]       s_header_imm,
    input  wire [31:0]       s_header_ieth_rkey,
    input  wire [12:0]       s_header_payload_len,

    input  wire [511:0]  s_axis_payload_tdata,
    input  wire [63:0]   s_axis_payload_tkeep,
    input  wire          s_axis_payload_tvalid,
    output wire          s_axis_payload_tready,
    input  wire          s_axis_payload_tlast,

    output wire [511:0]  m_axis_frame_tdata,
    output wire [63:0]   m_axis_frame_tkeep,
    output wire          m_axis_frame_tvalid,
    input  wire          m_axis_frame_tready,
    output wire          m_axis_frame_tlast,

    output wire [15:0]   dropped_frames,
    output wire [15:0]   payload_last_errors
);

    typedef struct packed {
        logic [12:0]      payload_len;
        logic [31:0]      ieth_rkey;
        logic [31:0]      imm;
        logic [63:0]      atomic_ack_orig;
        logic [23:0]      aeth_msn;
        logic [7:0]       aeth_syndrome;
        logic [63:0]      atomic_compare;
        logic [63:0]      atomic_swap_add;
        logic [31:0]      atomic_rkey;
        logic [63:0]      atomic_va;
        logic [31:0]      reth_dma_len;
        logic [31:0]      reth_rkey;
        logic [63:0]      reth_va;
        logic [23:0]      deth_src_qp;
        logic [31:0]      deth_qkey;
        logic [23:0]      psn;
        logic             ack_req;
        logic [23:0]      dest_qp;
        logic             becn;
        logic             fecn;
        logic [15:0]      pkey;
        logic [3:0]       tver;
        logic             mig_req;
        logic             solicited;
        logic [7:0]       opcode;
        logic             udp_checksum;
        logic [15:0]      udp_src_port;
        logic [19:0]      ipv6_flow_label;
        logic [7:0]       ttl;
        logic             ipv4_dont_fragment;
        logic [15:0]      ipv4_identification;
        logic [1:0]       ecn;
        logic [5:0]       dscp;
        logic [127:0]     ip_dst;
        logic [127:0]     ip_src;
        logic             ipv6;
        logic [47:0]      eth_src;
        logic [47:0]      eth_dst;
    } tx_header_t;

    tx_header_t record;

    assign record.eth_dst = s_header_eth_dst;
    assign record.eth_src = s_header_eth_src;
    assign record.ipv6 = s_header_ipv6;
    assign record.ip_src = s_header_ip_src;
    assign record.ip_dst = s_header_ip_dst;
    assign record.dscp = s_header_dscp;
    assign record.ecn = s_header_ecn;
    assign record.ipv4_identification = s_header_ipv4_identification;
    assign record.ipv4_dont_fragment = s_header_ipv4_dont_fragment;
    assign record.ttl = s_header_ttl;
    assign record.ipv6_flow_label = s_header_ipv6_flow_label;
    assign record.udp_src_port = s_header_udp_src_port;
    assign record.udp_checksum = s_header_udp_checksum;
    assign record.opcode = s_header_opcode;
    assign record.solicited = s_header_solicited;
    assign record.mig_req = s_header_mig_req;
    assign record.tver = s_header_tver;
    assign record.pkey = s_header_pkey;
    assign record.fecn = s_header_fecn;
    assign record.becn = s_header_becn;
    assign record.dest_qp = s_header_dest_qp;
    assign record.ack_req = s_header_ack_req;
    assign record.psn = s_header_psn;
    assign record.deth_qkey = s_header_deth_qkey;
    assign record.deth_src_qp = s_header_deth_src_qp;
    assign record.reth_va = s_header_reth_va;
    assign record.reth_rkey = s_header_reth_rkey;
    assign record.reth_dma_len = s_header_reth_dma_len;
    assign record.atomic_va = s_header_atomic_va;
    assign record.atomic_rkey = s_header_atomic_rkey;
    assign record.atomic_swap_add = s_header_atomic_swap_add;
    assign record.atomic_compare = s_header_atomic_compare;
    assign record.aeth_syndrome = s_header_aeth_syndrome;
    assign record.aeth_msn = s_header_aeth_msn;
    assign record.atomic_ack_orig = s_header_atomic_ack_orig;
    assign record.imm = s_header_imm;
    assign record.ieth_rkey = s_header_ieth_rkey;
    assign record.payload_len = s_header_payload_len;

    top dut (
        .clock(clk),
        .reset(rst),
        .header$record(record),
        .header$valid(s_header_valid),
        .header$ready(s_header_ready),
        .payload$tdata(s_axis_payload_tdata),
        .payload$tkeep(s_axis_payload_tkeep),
        .payload$tlast(s_axis_payload_tlast),
        .payload$tvalid(s_axis_payload_tvalid),
        .payload$tready(s_axis_payload_tready),
        .frame$tdata(m_axis_frame_tdata),
        .frame$tkeep(m_axis_frame_tkeep),
        .frame$tlast(m_axis_frame_tlast),
        .frame$tvalid(m_axis_frame_tvalid),
        .frame$tready(m_axis_frame_tready),
        .dropped_frames(dropped_frames),
        .payload_last_errors(payload_last_errors)
    );

endmodule
