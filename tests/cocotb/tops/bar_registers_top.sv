// bar_registers_top: the exported bar_registers (module `top` in
// build/verilog/bar_registers.v), BAR0 of the host interface, with
// AXI4-Lite port names so cocotbext-axi's AxiLiteMaster attaches by prefix:
//   s_axil_*   the MMIO target (14-bit byte address, 64-bit data, 8 strobes;
//              no awprot/arprot, which cocotbext-axi treats as optional);
// and every side port of the block under its own plain name (control and
// status, admin queue, EQ doorbells, the counter port, the MSI-X table's
// lookup port and PBA input, the unmapped pulse). Widths here are the
// block's: a port out of step with the exported Verilog fails the build
// with a width error (in this file warnings are fatal).
module bar_registers_top (
    input  wire          clk,
    input  wire          rst,

    input  wire [13:0]   s_axil_awaddr,
    input  wire          s_axil_awvalid,
    output wire          s_axil_awready,
    input  wire [63:0]   s_axil_wdata,
    input  wire [7:0]    s_axil_wstrb,
    input  wire          s_axil_wvalid,
    output wire          s_axil_wready,
    output wire [1:0]    s_axil_bresp,
    output wire          s_axil_bvalid,
    input  wire          s_axil_bready,
    input  wire [13:0]   s_axil_araddr,
    input  wire          s_axil_arvalid,
    output wire          s_axil_arready,
    output wire [63:0]   s_axil_rdata,
    output wire [1:0]    s_axil_rresp,
    output wire          s_axil_rvalid,
    input  wire          s_axil_rready,

    output wire          enable,
    output wire          soft_reset,
    input  wire          reset_busy,
    input  wire          fatal,
    input  wire [31:0]   fatal_set,
    output wire [31:0]   admin_eqn,

    output wire [63:0]   asq_base,
    output wire [3:0]    asq_log_size,
    output wire          asq_tail_valid,
    output wire [15:0]   asq_tail,
    input  wire [15:0]   asq_head,
    output wire [63:0]   acq_base,
    output wire [3:0]    acq_log_size,
    output wire          acq_head_valid,
    output wire [15:0]   acq_head,

    output wire          eq_doorbell_valid,
    output wire [2:0]    eq_doorbell_eqn,
    output wire [31:0]   eq_doorbell_value,

    output wire [5:0]    counter_index,
    input  wire [63:0]   counter_value,

    output wire [31:0]   msix_mask,
    input  wire [31:0]   msix_pending,
    input  wire          vector_lookup,
    input  wire [4:0]    vector_lookup_index,
    output wire [63:0]   vector_address,
    output wire [31:0]   vector_data,

    output wire          unmapped
);

    top dut (
        .clock(clk),
        .reset(rst),
        .mmio$awaddr(s_axil_awaddr),
        .mmio$awvalid(s_axil_awvalid),
        .mmio$awready(s_axil_awready),
        .mmio$wdata(s_axil_wdata),
        .mmio$wstrb(s_axil_wstrb),
        .mmio$wvalid(s_axil_wvalid),
        .mmio$wready(s_axil_wready),
        .mmio$bresp(s_axil_bresp),
        .mmio$bvalid(s_axil_bvalid),
        .mmio$bready(s_axil_bready),
        .mmio$araddr(s_axil_araddr),
        .mmio$arvalid(s_axil_arvalid),
        .mmio$arready(s_axil_arready),
        .mmio$rdata(s_axil_rdata),
        .mmio$rresp(s_axil_rresp),
        .mmio$rvalid(s_axil_rvalid),
        .mmio$rready(s_axil_rready),
        .enable(enable),
        .soft_reset(soft_reset),
        .reset_busy(reset_busy),
        .fatal(fatal),
        .fatal_set(fatal_set),
        .admin_eqn(admin_eqn),
        .asq_base(asq_base),
        .asq_log_size(asq_log_size),
        .asq_tail_valid(asq_tail_valid),
        .asq_tail(asq_tail),
        .asq_head(asq_head),
        .acq_base(acq_base),
        .acq_log_size(acq_log_size),
        .acq_head_valid(acq_head_valid),
        .acq_head(acq_head),
        .eq_doorbell_valid(eq_doorbell_valid),
        .eq_doorbell_eqn(eq_doorbell_eqn),
        .eq_doorbell_value(eq_doorbell_value),
        .counter_index(counter_index),
        .counter_value(counter_value),
        .msix_mask(msix_mask),
        .msix_pending(msix_pending),
        .vector_lookup(vector_lookup),
        .vector_lookup_index(vector_lookup_index),
        .vector_address(vector_address),
        .vector_data(vector_data),
        .unmapped(unmapped)
    );

endmodule
