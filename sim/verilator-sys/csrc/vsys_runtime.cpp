// Model-independent half of the Verilator bridge's C ABI: context lifetime
// and waveform writers. Compiled once, linked with every block's shim.
#include "vsys.h"

#include <new>

#include "verilated_vcd_c.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
#endif

extern "C" {

VsysHandle* vsys_handle_alloc(void) {
    VsysHandle* h = new (std::nothrow) VsysHandle{};
    if (!h) return nullptr;
    h->ctx = new (std::nothrow) VerilatedContext;
    if (!h->ctx) {
        delete h;
        return nullptr;
    }
    // Trace callbacks are registered when the model is constructed, so this
    // has to be on before the model exists for a waveform to be possible.
    h->ctx->traceEverOn(true);
    return h;
}

void vsys_handle_free(VsysHandle* h) {
    if (!h) return;
    vsys_trace_close(h);
    delete h->ctx;
    delete h;
}

int vsys_fst_supported(void) { return VM_TRACE_FST ? 1 : 0; }

int vsys_trace_open(VsysHandle* h, const char* path, int fst) {
    if (h->trace) return 1;
    VerilatedTraceBaseC* t = nullptr;
    if (fst) {
#if VM_TRACE_FST
        VerilatedFstC* f = new VerilatedFstC;
        h->ctx->trace(f, 99);
        f->open(path);
        if (!f->isOpen()) {
            delete f;
            return 3;
        }
        t = f;
#else
        (void)path;
        return 2;
#endif
    } else {
        VerilatedVcdC* v = new VerilatedVcdC;
        h->ctx->trace(v, 99);
        v->open(path);
        if (!v->isOpen()) {
            delete v;
            return 3;
        }
        t = v;
    }
    h->trace = t;
    h->trace_fst = fst != 0;
    return 0;
}

void vsys_trace_dump(VsysHandle* h, uint64_t time) {
    if (!h->trace) return;
#if VM_TRACE_FST
    if (h->trace_fst) {
        static_cast<VerilatedFstC*>(h->trace)->dump(time);
        return;
    }
#endif
    static_cast<VerilatedVcdC*>(h->trace)->dump(time);
}

void vsys_trace_flush(VsysHandle* h) {
    if (!h->trace) return;
#if VM_TRACE_FST
    if (h->trace_fst) {
        static_cast<VerilatedFstC*>(h->trace)->flush();
        return;
    }
#endif
    static_cast<VerilatedVcdC*>(h->trace)->flush();
}

void vsys_trace_close(VsysHandle* h) {
    if (!h->trace) return;
#if VM_TRACE_FST
    if (h->trace_fst) {
        VerilatedFstC* f = static_cast<VerilatedFstC*>(h->trace);
        f->close();
        delete f;
        h->trace = nullptr;
        return;
    }
#endif
    VerilatedVcdC* v = static_cast<VerilatedVcdC*>(h->trace);
    v->close();
    delete v;
    h->trace = nullptr;
}

}  // extern "C"
