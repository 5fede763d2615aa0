//! The build script's parsers (`build/parse.rs`): Verilator name mangling,
//! the Verilated header's port declarations, rust-hdl's module port order,
//! Verilator version strings and block/port naming.

#[path = "../build/parse.rs"]
mod parse;

use parse::*;

#[test]
fn demangle_undoes_verilator_escapes() {
    assert_eq!(demangle("s__024valid").unwrap(), "s$valid");
    assert_eq!(demangle("a__024b__024c").unwrap(), "a$b$c");
    assert_eq!(demangle("a___05Fb").unwrap(), "a__b");
    assert_eq!(demangle("plain_name").unwrap(), "plain_name");
    assert!(demangle("bad__0zz").is_err());
    assert!(demangle("cut__02").is_err());
    assert!(demangle("high__0ff").is_err());
}

#[test]
fn names_map_to_rust() {
    assert_eq!(rust_port_name("up$tdata"), "up_tdata");
    assert_eq!(rust_port_name("a$b$c"), "a_b_c");
    assert_eq!(camel_case("axis_register_slice"), "AxisRegisterSlice");
    assert_eq!(camel_case("icrc512"), "Icrc512");
    assert!(valid_block_name("bridge_check"));
    assert!(valid_block_name("icrc512"));
    for bad in [
        "",
        "Bridge",
        "9lives",
        "a__b",
        "trailing_",
        "has-dash",
        "sp ace",
    ] {
        assert!(!valid_block_name(bad), "{bad:?} accepted");
    }
}

const HEADER: &str = r#"
class alignas(VL_CACHE_LINE_BYTES) Vx VL_NOT_FINAL : public VerilatedModel {
  public:
    // PORTS
    VL_IN8(&clock,0,0);
    VL_IN8(&s__024valid,0,0);
    VL_OUT8(&s__024ready,0,0);
    VL_OUT16(&narrow,11,0);
    VL_IN(&mid,31,0);
    VL_OUT64(&q33,32,0);
    VL_INOUT64(&io,63,0);
    VL_INW(&a,511,0,16);
    VL_OUTW(&n100,99,0,4);
    void eval() { eval_step(); }
"#;

#[test]
fn header_ports_parse_with_storage_and_width() {
    let ports = parse_model_header(HEADER).unwrap();
    let summary: Vec<(&str, &str, PortDir, PortStorage, u32)> = ports
        .iter()
        .map(|p| {
            (
                p.cpp_name.as_str(),
                p.hdl_name.as_str(),
                p.dir,
                p.storage,
                p.width,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("clock", "clock", PortDir::In, PortStorage::U8, 1),
            ("s__024valid", "s$valid", PortDir::In, PortStorage::U8, 1),
            ("s__024ready", "s$ready", PortDir::Out, PortStorage::U8, 1),
            ("narrow", "narrow", PortDir::Out, PortStorage::U16, 12),
            ("mid", "mid", PortDir::In, PortStorage::U32, 32),
            ("q33", "q33", PortDir::Out, PortStorage::U64, 33),
            ("io", "io", PortDir::InOut, PortStorage::U64, 64),
            ("a", "a", PortDir::In, PortStorage::Wide(16), 512),
            ("n100", "n100", PortDir::Out, PortStorage::Wide(4), 100),
        ]
    );
}

#[test]
fn header_rejects_inconsistent_declarations() {
    // Width beyond its storage class.
    assert!(parse_model_header("VL_IN8(&x,8,0);").is_err());
    // Word count that does not match the width.
    assert!(parse_model_header("VL_INW(&x,511,0,15);").is_err());
    // Non-zero low bit.
    assert!(parse_model_header("VL_IN8(&x,4,1);").is_err());
    // Garbage arguments.
    assert!(parse_model_header("VL_IN8(&x,high,0);").is_err());
    assert!(parse_model_header("VL_IN8(&x);").is_err());
    assert!(parse_model_header("VL_INX(&x,3,0);").is_err());
    // Unrelated lines are ignored.
    assert_eq!(
        parse_model_header("int main() { return 0; }").unwrap(),
        vec![]
    );
}

#[test]
fn module_ports_come_in_declaration_order() {
    let verilog = "\n\nmodule top(clock,a,s$valid,y);\n  input wire clock;\nendmodule\n\
                   module top$child(d,q);\nendmodule\n";
    assert_eq!(
        parse_module_ports(verilog, "top").unwrap(),
        vec!["clock", "a", "s$valid", "y"]
    );
    assert_eq!(
        parse_module_ports(verilog, "top$child").unwrap(),
        vec!["d", "q"]
    );
    assert!(parse_module_ports(verilog, "other").is_err());
    assert!(parse_module_ports("module top(a,b", "top").is_err());
}

#[test]
fn ordering_matches_and_cross_checks_both_lists() {
    let ports = parse_model_header(HEADER).unwrap();
    let order: Vec<String> = [
        "a", "clock", "mid", "narrow", "q33", "io", "n100", "s$ready", "s$valid",
    ]
    .map(String::from)
    .to_vec();
    let ordered = order_ports(ports.clone(), &order).unwrap();
    let names: Vec<&str> = ordered.iter().map(|p| p.hdl_name.as_str()).collect();
    assert_eq!(names, order);

    let missing = order[..8].to_vec();
    assert!(order_ports(ports.clone(), &missing).is_err());
    let mut extra = order.clone();
    extra.push("ghost".into());
    assert!(order_ports(ports, &extra).is_err());
}

#[test]
fn versions_parse_from_config_header_and_version_output() {
    let config = "#define VERILATOR_PRODUCT \"Verilator\"\n#define VERILATOR_VERSION \"5.49\"\n";
    assert_eq!(parse_config_version(config), Some((5, 49)));
    assert_eq!(parse_config_version("nothing here"), None);
    assert_eq!(
        parse_version_text("Verilator 5.006 2023-01-22 rev (Debian 5.006-3)"),
        Some((5, 6))
    );
    assert_eq!(
        parse_version_text("Verilator 4.228 2022-10-01"),
        Some((4, 228))
    );
    assert_eq!(
        parse_version_text(" rev vUNKNOWN-built20260516-4e853d8"),
        None
    );
}
