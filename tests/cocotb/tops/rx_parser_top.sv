// rx_parser_top: the exported rx_parser (module `top` in
// build/verilog/rx_parser.v) with AXI-Stream port names, so cocotbext-axi
// sources, sinks and monitors attach by prefix:
//   s_axis_*          frames in (512-bit data, 64 keep bits), no FCS;
//   m_axis_payload_*  payload segments out; tuser is the segment's drop flag
//                     (the block's payload_drop, valid with tlast);
//   m_record_*        the header record as a valid/ready bus, one port per
//                     field, named as the block's HeaderRecord fields.
// The record is unpacked through a packed struct whose width must equal the
// block's record port: a field list out of step with the exported Verilog
// fails the Verilator build with a width error (warnings are fatal).
// rust-hdl packs the record's fields from bit 0 in declaration order, so the
// struct lists them last field first (a packed struct's first member is its
// most significant).
module rx_parser_top (
    input  wire          clk,
    input  wire          rst,

    input  wire [511:0]  s_axis_tdata,
    input  wire [63:0]   s_axis_tkeep,
    input  wire          s_axis_tvalid,
    output wire          s_axis_tready,
    input  wire          s_axis_tlast,

    output wire [511:0]  m_axis_payload_tdata,
    output wire [63:0]   m_axis_payload_tkeep,
    output wire          m_axis_payload_tvalid,
    input  wire          m_axis_payload_tready,
    output wire          m_axis_payload_tlast,
    output wire          m_axis_payload_tuser,

    output wire          m_record_valid,
    input  wire          m_record_ready,
    output wire           m_record_drop,
    output wire [4:0]     m_record_reason,
    output wire           m_record_has_payload,
    output wire [47:0]    m_record_eth_dst,
    output wire [47:0]    m_record_eth_src,
    output wire           m_record_ipv6,
    output wire [127:0]   m_record_ip_src,
    output wire [127:0]   m_record_ip_dst,
    output wire [5:0]     m_record_dscp,
    output wire [1:0]     m_record_ecn,
    output wire [15:0]    m_record_ipv4_identification,
    output wire           m_record_ipv4_dont_fragment,
    output wire [7:0]     m_record_ttl,
    output wire [19:0]    m_record_ipv6_flow_label,
    output wire [15:0]    m_record_udp_src_port,
    output wire           m_record_udp_checksum,
    output wire [7:0]     m_record_opcode,
    output wire           m_record_solicited,
    output wire           m_record_mig_req,
    output wire [1:0]     m_record_pad_count,
    output wire [3:0]     m_record_tver,
    output wire [15:0]    m_record_pkey,
    output wire           m_record_fecn,
    output wire           m_record_becn,
    output wire [23:0]    m_record_dest_qp,
    output wire           m_record_ack_req,
    output wire [23:0]    m_record_psn,
    output wire           m_record_has_deth,
    output wire           m_record_has_reth,
    output wire           m_record_has_atomic_eth,
    output wire           m_record_has_aeth,
    output wire           m_record_has_atomic_ack_eth,
    output wire           m_record_has_imm,
    output wire           m_record_has_ieth,
    output wire [31:0]    m_record_deth_qkey,
    output wire [23:0]    m_record_deth_src_qp,
    output wire [63:0]    m_record_reth_va,
    output wire [31:0]    m_record_reth_rkey,
    output wire [31:0]    m_record_reth_dma_len,
    output wire [63:0]    m_record_atomic_va,
    output wire [31:0]    m_record_atomic_rkey,
    output wire [63:0]    m_record_atomic_swap_add,
    output wire [63:0]    m_record_atomic_compare,
    output wire [7:0]     m_record_aeth_syndrome,
    output wire [23:0]    m_record_aeth_msn,
    output wire [63:0]    m_record_atomic_ack_orig,
    output wire [31:0]    m_record_imm,
    output wire [31:0]    m_record_ieth_rkey,
    output wire [12:0]    m_record_payload_len,

    input  wire [4:0]    stat_select,
    output wire [31:0]   stat_count
);

    typedef struct packed {
        logic [12:0]    payload_len;
        logic [31:0]    ieth_rkey;
        logic [31:0]    imm;
        logic [63:0]    atomic_ack_orig;
        logic [23:0]    aeth_msn;
        logic [7:0]     aeth_syndrome;
        logic [63:0]    atomic_compare;
        logic [63:0]    atomic_swap_add;
        logic [31:0]    atomic_rkey;
        logic [63:0]    atomic_va;
        logic [31:0]    reth_dma_len;
        logic [31:0]    reth_rkey;
        logic [63:0]    reth_va;
        logic [23:0]    deth_src_qp;
        logic [31:0]    deth_qkey;
        logic           has_ieth;
        logic           has_imm;
        logic           has_atomic_ack_eth;
        logic           has_aeth;
        logic           has_atomic_eth;
        logic           has_reth;
        logic           has_deth;
        logic [23:0]    psn;
        logic           ack_req;
        logic [23:0]    dest_qp;
        logic           becn;
        logic           fecn;
        logic [15:0]    pkey;
        logic [3:0]     tver;
        logic [1:0]     pad_count;
        logic           mig_req;
        logic           solicited;
        logic [7:0]     opcode;
        logic           udp_checksum;
        logic [15:0]    udp_src_port;
        logic [19:0]    ipv6_flow_label;
        logic [7:0]     ttl;
        logic           ipv4_dont_fragment;
        logic [15:0]    ipv4_identification;
        logic [1:0]     ecn;
        logic [5:0]     dscp;
        logic [127:0]   ip_dst;
        logic [127:0]   ip_src;
        logic           ipv6;
        logic [47:0]    eth_src;
        logic [47:0]    eth_dst;
        logic           has_payload;
        logic [4:0]     reason;
        logic           drop;
    } header_record_t;

    header_record_t record;

    assign m_record_drop = record.drop;
    assign m_record_reason = record.reason;
    assign m_record_has_payload = record.has_payload;
    assign m_record_eth_dst = record.eth_dst;
    assign m_record_eth_src = record.eth_src;
    assign m_record_ipv6 = record.ipv6;
    assign m_record_ip_src = record.ip_src;
    assign m_record_ip_dst = record.ip_dst;
    assign m_record_dscp = record.dscp;
    assign m_record_ecn = record.ecn;
    assign m_record_ipv4_identification = record.ipv4_identification;
    assign m_record_ipv4_dont_fragment = record.ipv4_dont_fragment;
    assign m_record_ttl = record.ttl;
    assign m_record_ipv6_flow_label = record.ipv6_flow_label;
    assign m_record_udp_src_port = record.udp_src_port;
    assign m_record_udp_checksum = record.udp_checksum;
    assign m_record_opcode = record.opcode;
    assign m_record_solicited = record.solicited;
    assign m_record_mig_req = record.mig_req;
    assign m_record_pad_count = record.pad_count;
    assign m_record_tver = record.tver;
    assign m_record_pkey = record.pkey;
    assign m_record_fecn = record.fecn;
    assign m_record_becn = record.becn;
    assign m_record_dest_qp = record.dest_qp;
    assign m_record_ack_req = record.ack_req;
    assign m_record_psn = record.psn;
    assign m_record_has_deth = record.has_deth;
    assign m_record_has_reth = record.has_reth;
    assign m_record_has_atomic_eth = record.has_atomic_eth;
    assign m_record_has_aeth = record.has_aeth;
    assign m_record_has_atomic_ack_eth = record.has_atomic_ack_eth;
    assign m_record_has_imm = record.has_imm;
    assign m_record_has_ieth = record.has_ieth;
    assign m_record_deth_qkey = record.deth_qkey;
    assign m_record_deth_src_qp = record.deth_src_qp;
    assign m_record_reth_va = record.reth_va;
    assign m_record_reth_rkey = record.reth_rkey;
    assign m_record_reth_dma_len = record.reth_dma_len;
    assign m_record_atomic_va = record.atomic_va;
    assign m_record_atomic_rkey = record.atomic_rkey;
    assign m_record_atomic_swap_add = record.atomic_swap_add;
    assign m_record_atomic_compare = record.atomic_compare;
    assign m_record_aeth_syndrome = record.aeth_syndrome;
    assign m_record_aeth_msn = record.aeth_msn;
    assign m_record_atomic_ack_orig = record.atomic_ack_orig;
    assign m_record_imm = record.imm;
    assign m_record_ieth_rkey = record.ieth_rkey;
    assign m_record_payload_len = record.payload_len;

    top dut (
        .clock(clk),
        .reset(rst),
        .rx$tdata(s_axis_tdata),
        .rx$tkeep(s_axis_tkeep),
        .rx$tlast(s_axis_tlast),
        .rx$tvalid(s_axis_tvalid),
        .rx$tready(s_axis_tready),
        .payload$tdata(m_axis_payload_tdata),
        .payload$tkeep(m_axis_payload_tkeep),
        .payload$tlast(m_axis_payload_tlast),
        .payload$tvalid(m_axis_payload_tvalid),
        .payload$tready(m_axis_payload_tready),
        .payload_drop(m_axis_payload_tuser),
        .record$record(record),
        .record$valid(m_record_valid),
        .record$ready(m_record_ready),
        .stat_select(stat_select),
        .stat_count(stat_count)
    );

endmodule
