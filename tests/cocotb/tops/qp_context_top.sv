// qp_context_top: the exported qp_context (module `top` in
// build/verilog/qp_context.v, QpContext at 1024 QPs, 288-bit records) with
// plain port names (the block's `lookup$...` ports carry a `$` that Python
// attribute names cannot):
//   lookup_*   a lookup (valid, qpn, tag) in;
//   ctx_*      the record of the lookup two cycles before, out;
//   update_*   the client's write-back three cycles after its lookup, in;
//   host_*     the masked read-modify-write configuration port.
// Widths here are the block's: a port out of step with the exported Verilog
// fails the build with a width error (in this file warnings are fatal).
module qp_context_top (
    input  wire          clk,
    input  wire          rst,

    input  wire          lookup_valid,
    input  wire [9:0]    lookup_qpn,
    input  wire [15:0]   lookup_tag,

    output wire          ctx_valid,
    output wire [9:0]    ctx_qpn,
    output wire [15:0]   ctx_tag,
    output wire [287:0]  ctx_record,

    input  wire          update_valid,
    input  wire [9:0]    update_qpn,
    input  wire [287:0]  update_record,

    input  wire          host_valid,
    input  wire [9:0]    host_qpn,
    input  wire [287:0]  host_mask,
    input  wire [287:0]  host_data,
    output wire          host_done,
    output wire [287:0]  host_old,
    output wire          host_stalled
);

    top dut (
        .clock(clk),
        .reset(rst),
        .lookup$valid(lookup_valid),
        .lookup$qpn(lookup_qpn),
        .lookup$tag(lookup_tag),
        .context$valid(ctx_valid),
        .context$qpn(ctx_qpn),
        .context$tag(ctx_tag),
        .context$record(ctx_record),
        .update$valid(update_valid),
        .update$qpn(update_qpn),
        .update$record(update_record),
        .host$valid(host_valid),
        .host$qpn(host_qpn),
        .host$mask(host_mask),
        .host$data(host_data),
        .host$done(host_done),
        .host$old(host_old),
        .host$stalled(host_stalled)
    );

endmodule
