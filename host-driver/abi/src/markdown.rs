//! Renders the contract as `docs/abi.md`.

use crate::layout::{CodeSet, Field, Layout};
use crate::registers::{self, DoorbellPage, Register, RegisterBlock};
use std::fmt::Write;

/// The command that rewrites `docs/abi.md`.
pub const REGENERATE: &str = "cargo run -p rocenic-abi --bin rocenic-abi-doc -- docs/abi.md";

/// The whole page.
pub fn render() -> String {
    let mut out = String::new();
    let major = crate::ABI_VERSION >> 16;
    let minor = crate::ABI_VERSION & 0xFFFF;
    let _ = writeln!(out, "# rocenic host ABI {major}.{minor}\n");
    let _ = writeln!(
        out,
        "Generated from `host-driver/abi` (crate `rocenic-abi`) by `{REGENERATE}`; \
         do not edit by hand. The RTL and the driver take every offset below from the same tables.\n"
    );
    out.push_str(CONVENTIONS);
    render_bars(&mut out);
    let _ = writeln!(out, "## Queue entries and commands\n");
    for layout in crate::LAYOUTS {
        render_layout(&mut out, layout, 3);
    }
    let _ = writeln!(out, "### Admin command inputs\n");
    let _ = writeln!(
        out,
        "Offsets are within the 64-byte command; CREATE_PD has no inputs.\n"
    );
    for layout in crate::admin::inputs::ALL {
        render_layout(&mut out, layout, 4);
    }
    let _ = writeln!(out, "## Codes\n");
    for set in crate::codes::ALL {
        render_codes(&mut out, set);
    }
    out
}

const CONVENTIONS: &str = "\
## Conventions

- Everything is little-endian. A field is `width` bits from bit `bit` of the little-endian \
value starting at byte `offset`; widths of 8, 16, 32 and 64 at bit 0 are whole integers.
- Rings (send, receive, completion, event, admin) hold a power of two of entries. Producer and \
consumer indexes count entries since creation and wrap at the width of their doorbell field; the \
slot of index `i` is `i mod size`.
- The NIC writes each CQE, EQE and admin completion with one DMA write, after every write of the \
data it reports, with its `owner` bit in the last byte: entry `i` of a ring of `2^n` entries \
carries owner `((i >> n) & 1) ^ 1`. Software zeroes a ring before handing it over and owns an \
entry when its owner bit is the one it expects, so it never reads a torn entry.
- Errors from the host side (a doorbell beyond its ring, a malformed WQE, an SGE outside its MR, \
a failed DMA read) complete the WQE with an error CQE, move the QP to ERR and raise a QP event; \
they never touch memory outside a registered MR.

";

fn hex(value: u64) -> String {
    format!("0x{value:X}")
}

fn bits(field: &Field) -> String {
    if field.width == 1 {
        format!("{}", field.bit)
    } else {
        format!("{}:{}", field.bit + field.width - 1, field.bit)
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

fn render_bars(out: &mut String) {
    let _ = writeln!(out, "## BAR0: register blocks\n");
    let _ = writeln!(
        out,
        "BAR0 is {} bytes. Its blocks form a chain from offset 0: each opens with `type` (+0x0), \
         `version` (+0x4) and `next` (+0x8, the next block's offset, 0 after the last); a driver \
         walks the chain and finds blocks by type.\n",
        registers::BAR0_SIZE
    );
    for rule in registers::ACCESS_RULES {
        let _ = writeln!(out, "- {rule}");
    }
    out.push('\n');
    let _ = writeln!(out, "| offset | block | type | version | size |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for (offset, block) in registers::BAR0_BLOCKS {
        let _ = writeln!(
            out,
            "| {} | [{}](#block-{}) | {} | {}.{} | {} |",
            hex(u64::from(*offset)),
            block.name,
            block.name,
            hex(u64::from(block.type_id)),
            block.version >> 16,
            block.version & 0xFFFF,
            hex(u64::from(block.size))
        );
    }
    out.push('\n');
    for (index, (offset, block)) in registers::BAR0_BLOCKS.iter().enumerate() {
        render_block(out, *offset, block, registers::next_block_offset(index));
    }
    let _ = writeln!(out, "## Doorbell pages\n");
    let _ = writeln!(
        out,
        "One {}-byte page per object, so a process maps only its own. Reads return 0.\n",
        registers::PAGE_SIZE
    );
    for page in [&registers::QP_PAGE, &registers::CQ_PAGE] {
        render_page(out, page);
    }
}

fn render_register_rows(out: &mut String, regs: &mut dyn Iterator<Item = &Register>) {
    let _ = writeln!(
        out,
        "| offset | register | width | access | reset | description |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let mut with_fields = Vec::new();
    for r in regs {
        let offset = if r.count > 1 {
            format!(
                "{} + {} n, n < {}",
                hex(u64::from(r.offset)),
                r.stride,
                r.count
            )
        } else {
            hex(u64::from(r.offset))
        };
        // A register that is one value in its low bits says how many in
        // its row instead of a table of one field.
        let (doc, table) = match r.fields {
            [f] if f.name == "value" && f.offset == 0 && f.bit == 0 => {
                (format!("{} Bits {}:0.", r.doc, f.width - 1), false)
            }
            fields => (r.doc.to_string(), !fields.is_empty()),
        };
        let _ = writeln!(
            out,
            "| {offset} | `{}` | {} | {} | {} | {} |",
            r.name,
            r.width,
            r.access.short(),
            hex(r.reset),
            cell(&doc)
        );
        if table {
            with_fields.push(*r);
        }
    }
    out.push('\n');
    for r in with_fields {
        let _ = writeln!(out, "`{}` bits:\n", r.name);
        let _ = writeln!(out, "| bits | field | description |");
        let _ = writeln!(out, "|---|---|---|");
        for f in r.fields {
            let _ = writeln!(out, "| {} | `{}` | {} |", bits(f), f.name, cell(f.doc));
        }
        out.push('\n');
    }
}

fn render_block(out: &mut String, offset: u32, block: &RegisterBlock, next: u32) {
    let _ = writeln!(out, "### Block `{}`\n", block.name);
    let _ = writeln!(
        out,
        "At BAR0 {}; type {}. {}\n",
        hex(u64::from(offset)),
        hex(u64::from(block.type_id)),
        block.doc
    );
    let header = block.header(next);
    render_register_rows(out, &mut header.iter().chain(block.registers));
}

fn render_page(out: &mut String, page: &DoorbellPage) {
    let _ = writeln!(out, "### `{}` (BAR{})\n", page.name, page.bar);
    let _ = writeln!(out, "{}\n", page.doc);
    render_register_rows(out, &mut page.registers.iter());
}

fn render_layout(out: &mut String, layout: &Layout, level: usize) {
    let hashes = "#".repeat(level);
    let _ = writeln!(out, "{hashes} `{}` ({} bytes)\n", layout.name, layout.size);
    if !layout.doc.is_empty() {
        let _ = writeln!(out, "{}\n", layout.doc);
    }
    let _ = writeln!(out, "| offset | bits | field | description |");
    let _ = writeln!(out, "|---|---|---|---|");
    let mut rows: Vec<(usize, String)> = Vec::new();
    for f in layout.fields {
        rows.push((
            f.first_bit(),
            format!(
                "| {} | {} | `{}` | {} |",
                hex(f.offset as u64),
                bits(f),
                f.name,
                cell(f.doc)
            ),
        ));
    }
    for a in layout.areas {
        rows.push((
            a.offset * 8,
            format!(
                "| {} | {} bytes | `{}` | {} |",
                hex(a.offset as u64),
                a.len,
                a.name,
                cell(a.doc)
            ),
        ));
    }
    rows.sort_by_key(|(at, _)| *at);
    for (_, row) in rows {
        let _ = writeln!(out, "{row}");
    }
    out.push('\n');
}

fn render_codes(out: &mut String, set: &CodeSet) {
    let _ = writeln!(out, "### `{}`\n", set.name);
    let _ = writeln!(out, "{}\n", set.doc);
    let _ = writeln!(out, "| value | name | meaning |");
    let _ = writeln!(out, "|---|---|---|");
    for c in set.codes {
        let _ = writeln!(out, "| {} | `{}` | {} |", hex(c.value), c.name, cell(c.doc));
    }
    out.push('\n');
}
