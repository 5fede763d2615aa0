// nic_core_top: the exported nic_core (module `top` in
// build/verilog/nic_core.v: the whole RC transport of one NIC) with plain
// port names, so cocotb and cocotbext-axi attach by prefix:
//   s_axis_*   frames from the MAC (512-bit data, 64 keep bits, no FCS);
//   m_axis_*   frames to the MAC;
//   ctx_*      one QP context record as named fields (ctx_<field>), its
//              QP and write mask, written to the responder's context by a
//              ctx_rsp_valid operation and to the requester's by
//              ctx_req_valid (each held to its ctx_*_done);
//   addr_*     one per-QP address record as named fields, written with
//              addr_write;
//   queue_*    the response-queue commands; cfg_* the MR table and MTT;
//   rq_post_* / rcqe_*  receive WQEs and receive CQEs;
//   post_* / post_result_* / scqe_*  send WQEs and send CQEs;
//   dma_* (tagged reads), dmaw_* (posted write bursts): the host DMA ports;
//   out_*, done_*, status_*, *_fire, counters: the scoreboard taps;
//   pfc_* / tx_priority / pause_*  priority flow control (an undriven
//              pfc_honoured of 0 honours no pause);
//   np_* / cnp_*  DCQCN's notification point (an undriven np_enabled of 0
//              sends no CNP); its time base `now` is this wrapper's
//              cycle counter from reset, as a board's shell would give it.
//   rp_* / pacing_*  DCQCN's reaction point and pacing (an undriven
//              rp_enabled of 0 never cuts a rate; the watch ports are left
//              open); cnps_received / rate_cuts / dcqcn_lost count.
// Records are packed through packed structs that list their fields last
// first (rust-hdl packs the first field at bit 0): a field list out of step
// with the exported Verilog fails the Verilator build with a width error.
// Generated once from the exported port list; widths are the block's.
module nic_core_top (
    input  wire           clk,
    input  wire           rst,
    input  wire [9:0]     ctx_qpn,
    input  wire [287:0]   ctx_mask,
    input  wire [2:0]     ctx_state,
    input  wire [3:0]     ctx_access,
    input  wire [2:0]     ctx_path_mtu,
    input  wire [15:0]    ctx_pkey,
    input  wire [15:0]    ctx_pd,
    input  wire [23:0]    ctx_dest_qpn,
    input  wire [13:0]    ctx_addr_index,
    input  wire [23:0]    ctx_sq_next_psn,
    input  wire [23:0]    ctx_sq_send_psn,
    input  wire [23:0]    ctx_sq_una_psn,
    input  wire [23:0]    ctx_sq_max_sent_psn,
    input  wire [23:0]    ctx_sq_ackreq_end_psn,
    input  wire [4:0]     ctx_timeout,
    input  wire [2:0]     ctx_retry_cnt,
    input  wire [2:0]     ctx_rnr_retry,
    input  wire [2:0]     ctx_retry_left,
    input  wire [2:0]     ctx_rnr_left,
    input  wire [4:0]     ctx_max_rd_atomic,
    input  wire [4:0]     ctx_rd_atomic_outstanding,
    input  wire [23:0]    ctx_rq_epsn,
    input  wire [23:0]    ctx_rq_msn,
    input  wire           ctx_nak_sent,
    input  wire [4:0]     ctx_max_dest_rd_atomic,
    input  wire [4:0]     ctx_min_rnr_timer,
    input  wire [1:0]     ctx_in_progress,
    input  wire [31:0]    addr_pd,
    input  wire [23:0]    addr_dest_qp,
    input  wire [15:0]    addr_pkey,
    input  wire [47:0]    addr_eth_dst,
    input  wire [47:0]    addr_eth_src,
    input  wire           addr_ipv6,
    input  wire [127:0]   addr_ip_src,
    input  wire [127:0]   addr_ip_dst,
    input  wire [5:0]     addr_dscp,
    input  wire [1:0]     addr_ecn,
    input  wire [15:0]    addr_udp_src_port,
    input  wire [511:0]   s_axis_tdata,
    input  wire [63:0]    s_axis_tkeep,
    input  wire           s_axis_tlast,
    input  wire           s_axis_tvalid,
    output wire           s_axis_tready,
    output wire [511:0]   m_axis_tdata,
    output wire [63:0]    m_axis_tkeep,
    output wire           m_axis_tlast,
    output wire           m_axis_tvalid,
    input  wire           m_axis_tready,
    input  wire           ctx_rsp_valid,
    output wire           ctx_rsp_done,
    output wire [287:0]   ctx_rsp_old,
    output wire           ctx_rsp_stalled,
    input  wire           ctx_req_valid,
    output wire           ctx_req_done,
    output wire [287:0]   ctx_req_old,
    output wire           ctx_req_stalled,
    input  wire           queue_valid,
    output wire           queue_ready,
    input  wire [2:0]     queue_op,
    input  wire [9:0]     queue_qpn,
    input  wire [7:0]     queue_syndrome,
    input  wire [23:0]    queue_psn,
    input  wire [23:0]    queue_msn,
    input  wire [63:0]    queue_value,
    input  wire [31:0]    queue_rkey,
    input  wire [31:0]    queue_len,
    input  wire [2:0]     queue_mtu_code,
    input  wire [31:0]    cfg_window,
    input  wire [31:0]    cfg_ack_req_interval,
    input  wire           addr_write,
    input  wire [9:0]     addr_qpn,
    output wire           cfg_ready,
    input  wire           cfg_mr_write,
    input  wire [9:0]     cfg_mr_index,
    input  wire [1:0]     cfg_mr_state,
    input  wire [7:0]     cfg_mr_variant,
    input  wire [31:0]    cfg_mr_pd,
    input  wire [63:0]    cfg_mr_base_va,
    input  wire [63:0]    cfg_mr_len,
    input  wire [3:0]     cfg_mr_access,
    input  wire [4:0]     cfg_mr_page_shift,
    input  wire [13:0]    cfg_mr_mtt_base,
    input  wire           cfg_mtt_write,
    input  wire [13:0]    cfg_mtt_index,
    input  wire [63:0]    cfg_mtt_addr,
    input  wire           rq_post_valid,
    output wire           rq_post_ready,
    input  wire [9:0]     rq_post_qpn,
    input  wire [63:0]    rq_post_wr_id,
    input  wire [31:0]    rq_post_lkey,
    input  wire [63:0]    rq_post_va,
    input  wire [31:0]    rq_post_len,
    output wire           rq_post_done,
    output wire           rq_post_accepted,
    output wire           rcqe_valid,
    input  wire           rcqe_ready,
    output wire [23:0]    rcqe_qpn,
    output wire [63:0]    rcqe_wr_id,
    output wire [3:0]     rcqe_status,
    output wire [2:0]     rcqe_opcode,
    output wire [31:0]    rcqe_byte_len,
    output wire           rcqe_imm_valid,
    output wire [31:0]    rcqe_imm,
    input  wire           post_valid,
    output wire           post_ready,
    input  wire [9:0]     post_qpn,
    input  wire [1:0]     post_kind,
    input  wire [2:0]     post_opcode,
    input  wire [23:0]    post_npsn,
    input  wire [31:0]    post_len,
    input  wire           post_signaled,
    input  wire [3:0]     post_status,
    input  wire [31:0]    post_lkey,
    input  wire [63:0]    post_va,
    input  wire [2:0]     post_op,
    input  wire [63:0]    post_remote_va,
    input  wire [31:0]    post_rkey,
    input  wire [31:0]    post_imm,
    input  wire [63:0]    post_compare,
    input  wire [63:0]    post_swap_add,
    input  wire           post_solicited,
    output wire           post_result_valid,
    output wire [9:0]     post_result_qpn,
    output wire           post_result_accepted,
    output wire [3:0]     post_result_slot,
    output wire           scqe_valid,
    input  wire           scqe_ready,
    output wire [9:0]     scqe_qpn,
    output wire [3:0]     scqe_slot,
    output wire [3:0]     scqe_status,
    output wire [2:0]     scqe_opcode,
    output wire [31:0]    scqe_byte_len,
    output wire           dma_req_valid,
    input  wire           dma_req_ready,
    output wire [7:0]     dma_req_tag,
    output wire [63:0]    dma_req_addr,
    output wire [31:0]    dma_req_len,
    input  wire           dma_rd_valid,
    output wire           dma_rd_ready,
    input  wire [7:0]     dma_rd_tag,
    input  wire [511:0]   dma_rd_data,
    input  wire           dma_rd_last,
    output wire           dmaw_valid,
    input  wire           dmaw_ready,
    output wire [63:0]    dmaw_addr,
    output wire [511:0]   dmaw_data,
    output wire [63:0]    dmaw_keep,
    output wire           dmaw_first,
    output wire           dmaw_last,
    output wire [63:0]    dmaw_req_addr,
    output wire [12:0]    dmaw_req_len,
    output wire           out_valid,
    input  wire           out_ready,
    output wire [23:0]    out_qpn,
    output wire [23:0]    out_psn,
    output wire [7:0]     out_opcode,
    output wire [3:0]     out_verdict,
    output wire           out_response_valid,
    output wire [7:0]     out_response_syndrome,
    output wire           queue_fire,
    output wire           desc_fire,
    output wire [23:0]    desc_qpn,
    output wire           rsp_fire,
    output wire           done_valid,
    output wire [9:0]     done_qpn,
    output wire [2:0]     done_kind,
    output wire [2:0]     done_state,
    output wire           status_valid,
    output wire [23:0]    status_qpn,
    output wire [23:0]    status_next_psn,
    output wire           status_error,
    input  wire [2:0]     stat_select,
    output wire [31:0]    rsp_stat_count,
    output wire [31:0]    req_stat_count,
    output wire [31:0]    queue_full_waits,
    output wire [15:0]    read_errors,
    output wire [15:0]    rsp_payload_last_errors,
    output wire [15:0]    req_payload_last_errors,
    output wire [15:0]    to_err_from_responder,
    output wire [15:0]    to_err_from_requester,
    input  wire [7:0]     pfc_honoured,
    input  wire [9:0]     pfc_bits_per_cycle,
    input  wire [31:0]    pfc_watchdog_quanta,
    input  wire [2:0]     tx_priority,
    output wire [7:0]     pfc_paused,
    output wire [7:0]     pfc_tripped,
    output wire           pause_frame,
    output wire [7:0]     pause_trips,
    input  wire           np_enabled,
    input  wire [31:0]    np_interval,
    input  wire [5:0]     cnp_dscp,
    output wire           cnp_fire,
    output wire [9:0]     cnp_qpn,
    output wire [31:0]    ce_events,
    output wire [15:0]    cnp_lost,
    input  wire           rp_enabled,
    input  wire [31:0]    rp_line_rate,
    input  wire [31:0]    rp_min_rate,
    input  wire [31:0]    rp_ai_rate,
    input  wire [31:0]    rp_hai_rate,
    input  wire [15:0]    rp_g,
    input  wire [3:0]     rp_gd,
    input  wire [15:0]    rp_min_dec_fac,
    input  wire [15:0]    rp_initial_alpha,
    input  wire [31:0]    rp_alpha_period,
    input  wire [31:0]    rp_rate_period,
    input  wire [31:0]    rp_byte_reset,
    input  wire [7:0]     rp_threshold,
    input  wire [31:0]    rp_monitor_period,
    input  wire [31:0]    pacing_line_rate,
    input  wire [31:0]    pacing_byte_cost,
    input  wire [46:0]    pacing_burst,
    output wire [31:0]    cnps_received,
    output wire [31:0]    rate_cuts,
    output wire [15:0]    dcqcn_lost
);

    reg [31:0] now = 32'd0;
    always @(posedge clk) now <= rst ? 32'd0 : now + 32'd1;

    typedef struct packed {
        logic [1:0]     in_progress;
        logic [4:0]     min_rnr_timer;
        logic [4:0]     max_dest_rd_atomic;
        logic           nak_sent;
        logic [23:0]    rq_msn;
        logic [23:0]    rq_epsn;
        logic [4:0]     rd_atomic_outstanding;
        logic [4:0]     max_rd_atomic;
        logic [2:0]     rnr_left;
        logic [2:0]     retry_left;
        logic [2:0]     rnr_retry;
        logic [2:0]     retry_cnt;
        logic [4:0]     timeout;
        logic [23:0]    sq_ackreq_end_psn;
        logic [23:0]    sq_max_sent_psn;
        logic [23:0]    sq_una_psn;
        logic [23:0]    sq_send_psn;
        logic [23:0]    sq_next_psn;
        logic [13:0]    addr_index;
        logic [23:0]    dest_qpn;
        logic [15:0]    pd;
        logic [15:0]    pkey;
        logic [2:0]     path_mtu;
        logic [3:0]     access;
        logic [2:0]     state;
    } qp_context_t;

    typedef struct packed {
        logic [15:0]    udp_src_port;
        logic [1:0]     ecn;
        logic [5:0]     dscp;
        logic [127:0]   ip_dst;
        logic [127:0]   ip_src;
        logic           ipv6;
        logic [47:0]    eth_src;
        logic [47:0]    eth_dst;
        logic [15:0]    pkey;
        logic [23:0]    dest_qp;
        logic [31:0]    pd;
    } qp_address_t;

    qp_context_t ctx_record;
    qp_address_t addr_record;

    assign ctx_record.state = ctx_state;
    assign ctx_record.access = ctx_access;
    assign ctx_record.path_mtu = ctx_path_mtu;
    assign ctx_record.pkey = ctx_pkey;
    assign ctx_record.pd = ctx_pd;
    assign ctx_record.dest_qpn = ctx_dest_qpn;
    assign ctx_record.addr_index = ctx_addr_index;
    assign ctx_record.sq_next_psn = ctx_sq_next_psn;
    assign ctx_record.sq_send_psn = ctx_sq_send_psn;
    assign ctx_record.sq_una_psn = ctx_sq_una_psn;
    assign ctx_record.sq_max_sent_psn = ctx_sq_max_sent_psn;
    assign ctx_record.sq_ackreq_end_psn = ctx_sq_ackreq_end_psn;
    assign ctx_record.timeout = ctx_timeout;
    assign ctx_record.retry_cnt = ctx_retry_cnt;
    assign ctx_record.rnr_retry = ctx_rnr_retry;
    assign ctx_record.retry_left = ctx_retry_left;
    assign ctx_record.rnr_left = ctx_rnr_left;
    assign ctx_record.max_rd_atomic = ctx_max_rd_atomic;
    assign ctx_record.rd_atomic_outstanding = ctx_rd_atomic_outstanding;
    assign ctx_record.rq_epsn = ctx_rq_epsn;
    assign ctx_record.rq_msn = ctx_rq_msn;
    assign ctx_record.nak_sent = ctx_nak_sent;
    assign ctx_record.max_dest_rd_atomic = ctx_max_dest_rd_atomic;
    assign ctx_record.min_rnr_timer = ctx_min_rnr_timer;
    assign ctx_record.in_progress = ctx_in_progress;

    assign addr_record.pd = addr_pd;
    assign addr_record.dest_qp = addr_dest_qp;
    assign addr_record.pkey = addr_pkey;
    assign addr_record.eth_dst = addr_eth_dst;
    assign addr_record.eth_src = addr_eth_src;
    assign addr_record.ipv6 = addr_ipv6;
    assign addr_record.ip_src = addr_ip_src;
    assign addr_record.ip_dst = addr_ip_dst;
    assign addr_record.dscp = addr_dscp;
    assign addr_record.ecn = addr_ecn;
    assign addr_record.udp_src_port = addr_udp_src_port;

    top dut (
        .clock(clk),
        .reset(rst),
        .rx$tdata(s_axis_tdata),
        .rx$tkeep(s_axis_tkeep),
        .rx$tlast(s_axis_tlast),
        .rx$tvalid(s_axis_tvalid),
        .rx$tready(s_axis_tready),
        .frame$tdata(m_axis_tdata),
        .frame$tkeep(m_axis_tkeep),
        .frame$tlast(m_axis_tlast),
        .frame$tvalid(m_axis_tvalid),
        .frame$tready(m_axis_tready),
        .rsp_qp_host$valid(ctx_rsp_valid),
        .rsp_qp_host$qpn(ctx_qpn),
        .rsp_qp_host$mask(ctx_mask),
        .rsp_qp_host$data(ctx_record),
        .rsp_qp_host$done(ctx_rsp_done),
        .rsp_qp_host$old(ctx_rsp_old),
        .rsp_qp_host$stalled(ctx_rsp_stalled),
        .req_qp_host$valid(ctx_req_valid),
        .req_qp_host$qpn(ctx_qpn),
        .req_qp_host$mask(ctx_mask),
        .req_qp_host$data(ctx_record),
        .req_qp_host$done(ctx_req_done),
        .req_qp_host$old(ctx_req_old),
        .req_qp_host$stalled(ctx_req_stalled),
        .queue_host$valid(queue_valid),
        .queue_host$ready(queue_ready),
        .queue_host$op(queue_op),
        .queue_host$qpn(queue_qpn),
        .queue_host$syndrome(queue_syndrome),
        .queue_host$psn(queue_psn),
        .queue_host$msn(queue_msn),
        .queue_host$value(queue_value),
        .queue_host$rkey(queue_rkey),
        .queue_host$len(queue_len),
        .queue_host$mtu_code(queue_mtu_code),
        .cfg_window(cfg_window),
        .cfg_ack_req_interval(cfg_ack_req_interval),
        .addr_write(addr_write),
        .addr_qpn(addr_qpn),
        .addr_data(addr_record),
        .cfg$ready(cfg_ready),
        .cfg$mr_write(cfg_mr_write),
        .cfg$mr_index(cfg_mr_index),
        .cfg$mr_state(cfg_mr_state),
        .cfg$mr_variant(cfg_mr_variant),
        .cfg$mr_pd(cfg_mr_pd),
        .cfg$mr_base_va(cfg_mr_base_va),
        .cfg$mr_len(cfg_mr_len),
        .cfg$mr_access(cfg_mr_access),
        .cfg$mr_page_shift(cfg_mr_page_shift),
        .cfg$mr_mtt_base(cfg_mr_mtt_base),
        .cfg$mtt_write(cfg_mtt_write),
        .cfg$mtt_index(cfg_mtt_index),
        .cfg$mtt_addr(cfg_mtt_addr),
        .rq_post$valid(rq_post_valid),
        .rq_post$ready(rq_post_ready),
        .rq_post$qpn(rq_post_qpn),
        .rq_post$wr_id(rq_post_wr_id),
        .rq_post$lkey(rq_post_lkey),
        .rq_post$va(rq_post_va),
        .rq_post$len(rq_post_len),
        .rq_post$done(rq_post_done),
        .rq_post$accepted(rq_post_accepted),
        .rcqe$valid(rcqe_valid),
        .rcqe$ready(rcqe_ready),
        .rcqe$qpn(rcqe_qpn),
        .rcqe$wr_id(rcqe_wr_id),
        .rcqe$status(rcqe_status),
        .rcqe$opcode(rcqe_opcode),
        .rcqe$byte_len(rcqe_byte_len),
        .rcqe$imm_valid(rcqe_imm_valid),
        .rcqe$imm(rcqe_imm),
        .post$valid(post_valid),
        .post$ready(post_ready),
        .post$qpn(post_qpn),
        .post$kind(post_kind),
        .post$opcode(post_opcode),
        .post$npsn(post_npsn),
        .post$len(post_len),
        .post$signaled(post_signaled),
        .post$status(post_status),
        .post$lkey(post_lkey),
        .post$va(post_va),
        .post$op(post_op),
        .post$remote_va(post_remote_va),
        .post$rkey(post_rkey),
        .post$imm(post_imm),
        .post$compare(post_compare),
        .post$swap_add(post_swap_add),
        .post$solicited(post_solicited),
        .post_result$valid(post_result_valid),
        .post_result$qpn(post_result_qpn),
        .post_result$accepted(post_result_accepted),
        .post_result$slot(post_result_slot),
        .scqe$valid(scqe_valid),
        .scqe$ready(scqe_ready),
        .scqe$qpn(scqe_qpn),
        .scqe$slot(scqe_slot),
        .scqe$status(scqe_status),
        .scqe$opcode(scqe_opcode),
        .scqe$byte_len(scqe_byte_len),
        .dma$req_valid(dma_req_valid),
        .dma$req_ready(dma_req_ready),
        .dma$req_tag(dma_req_tag),
        .dma$req_addr(dma_req_addr),
        .dma$req_len(dma_req_len),
        .dma$rd_valid(dma_rd_valid),
        .dma$rd_ready(dma_rd_ready),
        .dma$rd_tag(dma_rd_tag),
        .dma$rd_data(dma_rd_data),
        .dma$rd_last(dma_rd_last),
        .dmaw$valid(dmaw_valid),
        .dmaw$ready(dmaw_ready),
        .dmaw$addr(dmaw_addr),
        .dmaw$data(dmaw_data),
        .dmaw$keep(dmaw_keep),
        .dmaw$first(dmaw_first),
        .dmaw$last(dmaw_last),
        .dmaw$req_addr(dmaw_req_addr),
        .dmaw$req_len(dmaw_req_len),
        .out_valid(out_valid),
        .out_ready(out_ready),
        .out_qpn(out_qpn),
        .out_psn(out_psn),
        .out_opcode(out_opcode),
        .out_verdict(out_verdict),
        .out_response_valid(out_response_valid),
        .out_response_syndrome(out_response_syndrome),
        .queue_fire(queue_fire),
        .desc_fire(desc_fire),
        .desc_qpn(desc_qpn),
        .rsp_fire(rsp_fire),
        .done$valid(done_valid),
        .done$qpn(done_qpn),
        .done$kind(done_kind),
        .done$state(done_state),
        .status$valid(status_valid),
        .status$qpn(status_qpn),
        .status$next_psn(status_next_psn),
        .status$error(status_error),
        .stat_select(stat_select),
        .rsp_stat_count(rsp_stat_count),
        .req_stat_count(req_stat_count),
        .queue_full_waits(queue_full_waits),
        .read_errors(read_errors),
        .rsp_payload_last_errors(rsp_payload_last_errors),
        .req_payload_last_errors(req_payload_last_errors),
        .to_err_from_responder(to_err_from_responder),
        .to_err_from_requester(to_err_from_requester),
        .pfc$honoured(pfc_honoured),
        .pfc$bits_per_cycle(pfc_bits_per_cycle),
        .pfc$watchdog_quanta(pfc_watchdog_quanta),
        .tx_priority(tx_priority),
        .pfc_paused(pfc_paused),
        .pfc_tripped(pfc_tripped),
        .pause_frame(pause_frame),
        .pause_trips(pause_trips),
        .now(now),
        .np$enabled(np_enabled),
        .np$interval(np_interval),
        .cnp_dscp(cnp_dscp),
        .cnp_fire(cnp_fire),
        .cnp_qpn(cnp_qpn),
        .ce_events(ce_events),
        .cnp_lost(cnp_lost),
        .rp$enabled(rp_enabled),
        .rp$line_rate(rp_line_rate),
        .rp$min_rate(rp_min_rate),
        .rp$ai_rate(rp_ai_rate),
        .rp$hai_rate(rp_hai_rate),
        .rp$g(rp_g),
        .rp$gd(rp_gd),
        .rp$min_dec_fac(rp_min_dec_fac),
        .rp$initial_alpha(rp_initial_alpha),
        .rp$alpha_period(rp_alpha_period),
        .rp$rate_period(rp_rate_period),
        .rp$byte_reset(rp_byte_reset),
        .rp$threshold(rp_threshold),
        .rp$monitor_period(rp_monitor_period),
        .pacing$line_rate(pacing_line_rate),
        .pacing$byte_cost(pacing_byte_cost),
        .pacing$burst(pacing_burst),
        .cnps_received(cnps_received),
        .rate_cuts(rate_cuts),
        .dcqcn_lost(dcqcn_lost),
        // The watch ports (every reaction point and pacing outcome, for
        // the Rust harness's replay) are left open here.
        .pacing_watch$allowed(),
        .pacing_watch$kind(),
        .pacing_watch$now(),
        .pacing_watch$qpn(),
        .pacing_watch$record(),
        .pacing_watch$valid(),
        .pacing_watch$value(),
        .rp_watch$bytes(),
        .rp_watch$cut(),
        .rp_watch$held(),
        .rp_watch$increase(),
        .rp_watch$kind(),
        .rp_watch$now(),
        .rp_watch$qpn(),
        .rp_watch$rate(),
        .rp_watch$record(),
        .rp_watch$valid()
    );

endmodule
