//! The contract's tables are consistent, encode what they say, agree with
//! the model's verbs vocabulary, and `docs/abi.md` is their current page.

use proptest::prelude::*;
use rocenic_abi::layout::{Field, LayoutError};
use rocenic_abi::registers::{self, Access, Register, BAR0_BLOCKS, BAR0_SIZE, PAGE_SIZE};
use rocenic_abi::{admin, codes, cqe, markdown, wqe, LAYOUTS};

#[test]
fn every_layout_has_its_fields_inside_and_apart() {
    let mut problems: Vec<String> = Vec::new();
    for layout in LAYOUTS.iter().chain(admin::inputs::ALL) {
        problems.extend(layout.problems());
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn admin_inputs_stay_inside_the_command_input_area() {
    for layout in admin::inputs::ALL {
        for f in layout.fields {
            assert!(
                f.offset >= admin::INPUTS,
                "{}.{} overlaps the header",
                layout.name,
                f.name
            );
        }
    }
}

#[test]
fn every_code_family_is_unambiguous() {
    let problems: Vec<String> = codes::ALL.iter().flat_map(|set| set.problems()).collect();
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The byte ranges a register's instances occupy within its block.
fn ranges(r: &Register) -> Vec<(u32, u32)> {
    (0..r.count.max(1))
        .map(|n| (r.offset_of(n), r.offset_of(n) + r.width / 8))
        .collect()
}

fn assert_registers_fit(name: &str, regs: &[Register], size: u32) {
    let mut taken: Vec<(u32, u32, &str)> = Vec::new();
    for r in regs {
        assert!(
            r.width == 32 || r.width == 64,
            "{name}.{}: width {}",
            r.name,
            r.width
        );
        assert!(
            r.count <= 1 || r.stride >= r.width / 8,
            "{name}.{}: instances overlap",
            r.name
        );
        for (start, end) in ranges(r) {
            assert_eq!(
                start % (r.width / 8),
                0,
                "{name}.{} is not aligned to its width",
                r.name
            );
            assert!(
                end <= size,
                "{name}.{} ends at {end:#x}, past {size:#x}",
                r.name
            );
            taken.push((start, end, r.name));
        }
        assert!(
            r.reset <= u64::MAX >> (64 - r.width),
            "{name}.{}: reset wider than the register",
            r.name
        );
        for f in r.fields {
            assert!(
                f.offset + f.span() <= (r.width / 8) as usize,
                "{name}.{}.{} is outside it",
                r.name,
                f.name
            );
        }
    }
    taken.sort();
    for pair in taken.windows(2) {
        assert!(
            pair[1].0 >= pair[0].1,
            "{name}: {} overlaps {}",
            pair[0].2,
            pair[1].2
        );
    }
}

#[test]
fn bar0_blocks_are_aligned_apart_and_their_registers_inside() {
    let mut end = 0;
    for (index, (offset, block)) in BAR0_BLOCKS.iter().enumerate() {
        assert!(
            *offset >= end,
            "block {} overlaps the one before it",
            block.name
        );
        assert_eq!(
            offset % 0x100,
            0,
            "block {} is not 256-byte aligned",
            block.name
        );
        end = offset + block.size;
        assert!(end <= BAR0_SIZE, "block {} ends past BAR0", block.name);
        let mut all: Vec<Register> = block.header(registers::next_block_offset(index)).to_vec();
        all.extend_from_slice(block.registers);
        assert_registers_fit(block.name, &all, block.size);
        assert!(
            block
                .registers
                .iter()
                .all(|r| r.offset >= registers::header::SIZE),
            "block {} puts a register in the header",
            block.name
        );
    }
    let mut types: Vec<u32> = BAR0_BLOCKS.iter().map(|(_, b)| b.type_id).collect();
    types.sort();
    types.dedup();
    assert_eq!(types.len(), BAR0_BLOCKS.len(), "two blocks share a type");
}

#[test]
fn doorbell_pages_fit_their_page() {
    for page in [&registers::QP_PAGE, &registers::CQ_PAGE] {
        assert_registers_fit(page.name, page.registers, PAGE_SIZE);
        assert!(page.registers.iter().all(|r| r.access == Access::WriteOnly));
    }
    let window = &registers::QP_PAGE.registers[2];
    assert!(
        window.span() as usize >= 1 << wqe::LOG_STRIDES[1],
        "the inline window holds the largest WQE"
    );
}

#[test]
fn the_counter_names_are_distinct_and_the_capability_counts_them() {
    let mut names: Vec<&str> = registers::COUNTERS.iter().map(|r| r.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), registers::COUNTERS.len());
    let cap = registers::DEVICE.register("cap_counters").unwrap();
    assert_eq!(cap.reset as usize, registers::COUNTERS.len());
}

#[test]
fn the_reset_image_reads_each_header_and_capability() {
    for (index, (offset, block)) in BAR0_BLOCKS.iter().enumerate() {
        assert_eq!(registers::bar0_reset_read32(*offset), block.type_id);
        assert_eq!(registers::bar0_reset_read32(offset + 4), block.version);
        assert_eq!(
            registers::bar0_reset_read32(offset + 8),
            registers::next_block_offset(index)
        );
    }
    let device = BAR0_BLOCKS[0].0;
    let cap_qps = registers::DEVICE.register("cap_qps").unwrap();
    assert_eq!(
        registers::bar0_reset_read32(device + cap_qps.offset),
        registers::limits::QPS
    );
    // Unmapped and write-only offsets read 0.
    assert_eq!(registers::bar0_reset_read32(0x0FF0), 0);
    let admin = registers::bar0_offset(&registers::ADMIN);
    let tail = registers::ADMIN.register("asq_tail").unwrap();
    assert_eq!(registers::bar0_reset_read32(admin + tail.offset), 0);
    // Both halves of a 64-bit register with a reset value.
    let msix = registers::bar0_offset(&registers::MSIX);
    let control = registers::MSIX.register("vector_control").unwrap();
    assert_eq!(
        registers::bar0_reset_read32(msix + control.offset_of(31)),
        1
    );
}

#[test]
fn slot_sizes_give_the_advertised_capabilities() {
    assert_eq!(wqe::send::max_sge(6), 2);
    assert_eq!(wqe::send::max_sge(7), 6);
    assert_eq!(wqe::recv::max_sge(6), 3);
    assert_eq!(wqe::send::max_inline(7), 96);
    let cap = |name| registers::DEVICE.register(name).unwrap().reset as usize;
    assert!(
        cap("cap_max_send_sge") >= 4 && cap("cap_max_recv_sge") >= 4,
        "at least 4 SGEs each way"
    );
}

#[test]
fn the_owner_bit_flips_each_pass() {
    assert_eq!(cqe::owner_for(0, 4), 1);
    assert_eq!(cqe::owner_for(15, 4), 1);
    assert_eq!(cqe::owner_for(16, 4), 0);
    assert_eq!(cqe::owner_for(32, 4), 1);
}

#[test]
fn a_field_refuses_what_does_not_fit() {
    let mut cqe = [0u8; 32];
    assert_eq!(
        cqe::QPN.set(&mut cqe, 1 << 24),
        Err(LayoutError::ValueTooWide {
            field: "qpn",
            width: 24,
            value: 1 << 24
        })
    );
    assert!(matches!(
        cqe::OWNER.get(&cqe[..16]),
        Err(LayoutError::BufferTooShort { .. })
    ));
    assert_eq!(cqe, [0u8; 32], "a refused set leaves the buffer alone");
}

#[test]
fn the_page_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/abi.md");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == markdown::render(),
        "docs/abi.md is not what the tables say; run `{}`",
        markdown::REGENERATE
    );
}

/// The model's names for a family, in the ABI's spelling (`LocLenErr` ->
/// `LOC_LEN_ERR`).
fn screaming(debug_name: &str) -> String {
    let mut out = String::new();
    for (i, ch) in debug_name.chars().enumerate() {
        if ch.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_uppercase());
    }
    out
}

#[test]
fn the_model_vocabulary_has_an_abi_code_for_every_value() {
    use rocenic_model::verbs::{QpState, WcOpcode, WcStatus};
    let mut missing = Vec::new();
    for status in (0..).map_while(WcStatus::from_repr) {
        let name = screaming(&format!("{status:?}"));
        if codes::WC_STATUS.by_name(&name).is_none() {
            missing.push(name);
        }
    }
    for opcode in (0..).map_while(WcOpcode::from_repr) {
        let name = screaming(&format!("{opcode:?}"));
        if codes::WC_OPCODE.by_name(&name).is_none() {
            missing.push(name);
        }
    }
    for state in [
        QpState::Reset,
        QpState::Init,
        QpState::Rtr,
        QpState::Rts,
        QpState::Err,
    ] {
        let name = screaming(&format!("{state:?}"));
        if codes::QP_STATE.by_name(&name).is_none() {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "no ABI code for {missing:?}");
    for flag in codes::ACCESS.codes {
        let model = match flag.name {
            "LOCAL_WRITE" => rocenic_model::verbs::Access::LOCAL_WRITE,
            "REMOTE_WRITE" => rocenic_model::verbs::Access::REMOTE_WRITE,
            "REMOTE_READ" => rocenic_model::verbs::Access::REMOTE_READ,
            "REMOTE_ATOMIC" => rocenic_model::verbs::Access::REMOTE_ATOMIC,
            other => panic!("access flag {other} has no model counterpart"),
        };
        assert_eq!(u64::from(model.0), flag.value, "{}", flag.name);
    }
}

fn any_field() -> impl Strategy<Value = Field> {
    (0usize..24, 0u32..8, 1u32..=56)
        .prop_map(|(offset, bit, width)| Field::new("f", offset, bit, width, ""))
}

proptest! {
    /// A set writes exactly the field's bits: it reads back, and every
    /// other bit of the buffer is as it was.
    #[test]
    fn set_then_get_round_trips_and_touches_nothing_else(
        field in any_field(),
        value in any::<u64>(),
        background in proptest::collection::vec(any::<u8>(), 32),
    ) {
        let value = value & field.max();
        let mut buf = background.clone();
        field.set(&mut buf, value).unwrap();
        prop_assert_eq!(field.get(&buf).unwrap(), value);
        for bit in 0..buf.len() * 8 {
            let inside = bit >= field.first_bit() && bit < field.first_bit() + field.width as usize;
            if !inside {
                prop_assert_eq!((buf[bit / 8] >> (bit % 8)) & 1, (background[bit / 8] >> (bit % 8)) & 1);
            }
        }
    }
}

#[test]
fn the_consistency_checks_catch_what_they_look_for() {
    use rocenic_abi::layout::{Code, CodeSet, Layout};
    const BROKEN: Layout = Layout {
        name: "broken",
        size: 8,
        doc: "",
        fields: &[Field::bytes("b", 4, 4, ""), Field::new("a", 0, 0, 40, "")],
        areas: &[],
    };
    let problems = BROKEN.problems();
    assert!(
        problems.iter().any(|p| p.contains("overlaps")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("offset order")),
        "{problems:?}"
    );
    const CLASH: CodeSet = CodeSet {
        name: "clash",
        doc: "",
        flags: true,
        codes: &[
            Code {
                name: "X",
                value: 3,
                doc: "",
            },
            Code {
                name: "Y",
                value: 3,
                doc: "",
            },
        ],
    };
    let problems = CLASH.problems();
    assert!(
        problems.iter().any(|p| p.contains("not one bit")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("collide")),
        "{problems:?}"
    );
}
