// mr_translate_top: the exported mr_translate (module `top` in
// build/verilog/mr_translate.v, MrTranslateDefault: 1024 MRs, 16384 MTT
// entries) with plain port names, so cocotb and cocotbext-axi's generic
// stream source and sink attach by prefix (the block's `cfg$...` ports
// carry a `$` that Python attribute names cannot):
//   cfg_*    the configuration port (MR table and MTT writes; cfg_ready is
//            low during the reset sweep);
//   req_*    lookups in (valid/ready);
//   resp_*   response beats out (valid/ready).
// Widths here are the block's: a port out of step with the exported Verilog
// fails the build with a width error (in this file warnings are fatal).
module mr_translate_top (
    input  wire          clk,
    input  wire          rst,

    output wire          cfg_ready,
    input  wire          cfg_mr_write,
    input  wire [9:0]    cfg_mr_index,
    input  wire [1:0]    cfg_mr_state,
    input  wire [7:0]    cfg_mr_variant,
    input  wire [31:0]   cfg_mr_pd,
    input  wire [63:0]   cfg_mr_base_va,
    input  wire [63:0]   cfg_mr_len,
    input  wire [3:0]    cfg_mr_access,
    input  wire [4:0]    cfg_mr_page_shift,
    input  wire [13:0]   cfg_mr_mtt_base,
    input  wire          cfg_mtt_write,
    input  wire [13:0]   cfg_mtt_index,
    input  wire [63:0]   cfg_mtt_addr,

    input  wire          req_valid,
    output wire          req_ready,
    input  wire [31:0]   req_key,
    input  wire [63:0]   req_va,
    input  wire [31:0]   req_len,
    input  wire [31:0]   req_pd,
    input  wire [3:0]    req_access,
    input  wire          req_remote,
    input  wire [15:0]   req_tag,

    output wire          resp_valid,
    input  wire          resp_ready,
    output wire [15:0]   resp_tag,
    output wire [2:0]    resp_status,
    output wire          resp_first,
    output wire          resp_last,
    output wire          resp_has_seg,
    output wire [63:0]   resp_phys,
    output wire [31:0]   resp_len
);

    top dut (
        .clock(clk),
        .reset(rst),
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
        .req_valid(req_valid),
        .req_ready(req_ready),
        .req_key(req_key),
        .req_va(req_va),
        .req_len(req_len),
        .req_pd(req_pd),
        .req_access(req_access),
        .req_remote(req_remote),
        .req_tag(req_tag),
        .resp_valid(resp_valid),
        .resp_ready(resp_ready),
        .resp_tag(resp_tag),
        .resp_status(resp_status),
        .resp_first(resp_first),
        .resp_last(resp_last),
        .resp_has_seg(resp_has_seg),
        .resp_phys(resp_phys),
        .resp_len(resp_len)
    );

endmodule
