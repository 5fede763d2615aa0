//! Build-time parsing for the Verilator bridge: the port list of a Verilated
//! model header, the port order of rust-hdl's `top` module, Verilator's name
//! mangling, and the Rust names derived from them.
//!
//! Shared by `build.rs` (through `#[path]`) and `tests/parse.rs`, so it only
//! uses `std`.

use std::fmt;

/// Port direction as declared in the Verilated header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortDir {
    In,
    Out,
    InOut,
}

/// The C++ type Verilator stores a port in, which follows from its width:
/// `CData` (1..=8 bits), `SData` (..=16), `IData` (..=32), `QData` (..=64),
/// or `VlWide<words>`, an array of 32-bit words, least significant first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortStorage {
    U8,
    U16,
    U32,
    U64,
    Wide(u32),
}

/// One port of a Verilated model, as its header declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderPort {
    /// The C++ member name (Verilator-mangled, e.g. `s__024valid`).
    pub cpp_name: String,
    /// The Verilog name (e.g. `s$valid`).
    pub hdl_name: String,
    pub dir: PortDir,
    pub storage: PortStorage,
    pub width: u32,
}

/// A parse failure with enough context to find the offending text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Undoes Verilator's identifier mangling: every character that is not
/// valid in a C++ identifier (and the second `_` of a `__` pair) is written
/// as `__0` followed by its two hex digits, e.g. `$` → `__024`.
pub fn demangle(cpp_name: &str) -> Result<String, ParseError> {
    let bytes = cpp_name.as_bytes();
    let mut out = String::with_capacity(cpp_name.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"__0") {
            let hex = cpp_name
                .get(i + 3..i + 5)
                .ok_or_else(|| ParseError(format!("truncated escape in `{cpp_name}`")))?;
            let code = u8::from_str_radix(hex, 16)
                .map_err(|_| ParseError(format!("bad escape `__0{hex}` in `{cpp_name}`")))?;
            if !code.is_ascii() {
                return Err(ParseError(format!(
                    "non-ASCII escape `__0{hex}` in `{cpp_name}`"
                )));
            }
            out.push(code as char);
            i += 5;
        } else {
            out.push(bytes[i] as char);
            i += 1;
        }
    }
    Ok(out)
}

/// The Rust-friendly port name: rust-hdl joins interface fields with `$`
/// (`iface$field`), which becomes `iface_field`.
pub fn rust_port_name(hdl_name: &str) -> String {
    hdl_name.replace('$', "_")
}

/// `bridge_check` → `BridgeCheck`.
pub fn camel_case(snake: &str) -> String {
    snake
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// Whether `name` is usable as an exported block name: lower snake case
/// starting with a letter, so that it is a C identifier, a file name and,
/// in CamelCase, a Rust type name.
pub fn valid_block_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.contains("__")
        && !name.ends_with('_')
}

/// Parses the `VL_IN*/VL_OUT*/VL_INOUT*` port declarations of a Verilated
/// model's primary header (`V<prefix>.h`), in header order.
pub fn parse_model_header(header: &str) -> Result<Vec<HeaderPort>, ParseError> {
    let mut ports = Vec::new();
    for line in header.lines() {
        let line = line.trim();
        let Some(open) = line.find('(') else { continue };
        let macro_name = &line[..open];
        let (dir, kind) = match macro_name {
            m if m.starts_with("VL_INOUT") => (PortDir::InOut, &m[8..]),
            m if m.starts_with("VL_IN") => (PortDir::In, &m[5..]),
            m if m.starts_with("VL_OUT") => (PortDir::Out, &m[6..]),
            _ => continue,
        };
        let close = line
            .rfind(')')
            .ok_or_else(|| ParseError(format!("unterminated port declaration `{line}`")))?;
        let args: Vec<&str> = line[open + 1..close].split(',').map(str::trim).collect();
        let bad = || ParseError(format!("unexpected port declaration `{line}`"));
        let number = |s: &str| s.parse::<u32>().map_err(|_| bad());
        let cpp_name = args.first().ok_or_else(bad)?.trim_start_matches('&');
        if cpp_name.is_empty() || args.len() < 3 {
            return Err(bad());
        }
        let (msb, lsb) = (number(args[1])?, number(args[2])?);
        if lsb != 0 || msb >= 1 << 20 {
            return Err(ParseError(format!(
                "port `{cpp_name}` is [{msb}:{lsb}]; the bridge expects [N-1:0]"
            )));
        }
        let width = msb + 1;
        let storage = match kind {
            "8" => PortStorage::U8,
            "16" => PortStorage::U16,
            "" => PortStorage::U32,
            "64" => PortStorage::U64,
            "W" => PortStorage::Wide(number(args.get(3).ok_or_else(bad)?)?),
            _ => return Err(bad()),
        };
        let fits = match storage {
            PortStorage::U8 => width <= 8,
            PortStorage::U16 => width <= 16,
            PortStorage::U32 => width <= 32,
            PortStorage::U64 => width <= 64,
            PortStorage::Wide(words) => width.div_ceil(32) == words,
        };
        if !fits {
            return Err(ParseError(format!(
                "port `{cpp_name}` of {width} bits does not fit its storage {storage:?}"
            )));
        }
        ports.push(HeaderPort {
            cpp_name: cpp_name.to_string(),
            hdl_name: demangle(cpp_name)?,
            dir,
            storage,
            width,
        });
    }
    Ok(ports)
}

/// The port names of `module <top>(a,b,...);` in declaration order.
pub fn parse_module_ports(verilog: &str, top: &str) -> Result<Vec<String>, ParseError> {
    let mut rest = verilog;
    loop {
        let at = rest
            .find("module ")
            .ok_or_else(|| ParseError(format!("no `module {top}(` in the Verilog")))?;
        let after = &rest[at + "module ".len()..];
        let name_end = after
            .find(|c: char| c == '(' || c == ';' || c.is_whitespace())
            .unwrap_or(after.len());
        let preceded_ok = at == 0 || rest[..at].ends_with(|c: char| c.is_whitespace());
        if preceded_ok && &after[..name_end] == top {
            let list = after[name_end..].trim_start();
            let Some(list) = list.strip_prefix('(') else {
                return Ok(Vec::new());
            };
            let close = list
                .find(')')
                .ok_or_else(|| ParseError(format!("unterminated port list of `{top}`")))?;
            return Ok(list[..close]
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect());
        }
        rest = after;
    }
}

/// Orders the header's ports by the Verilog declaration order and checks
/// the two lists describe the same ports.
pub fn order_ports(
    header_ports: Vec<HeaderPort>,
    verilog_order: &[String],
) -> Result<Vec<HeaderPort>, ParseError> {
    let mut remaining = header_ports;
    let mut ordered = Vec::with_capacity(remaining.len());
    for name in verilog_order {
        let at = remaining
            .iter()
            .position(|p| &p.hdl_name == name)
            .ok_or_else(|| {
                ParseError(format!(
                    "Verilog port `{name}` is missing from the Verilated header"
                ))
            })?;
        ordered.push(remaining.remove(at));
    }
    if let Some(extra) = remaining.first() {
        return Err(ParseError(format!(
            "Verilated header port `{}` is not a port of the Verilog module",
            extra.hdl_name
        )));
    }
    Ok(ordered)
}

/// Parses the `VERILATOR_VERSION "major.minor"` line of
/// `include/verilated_config.h`.
pub fn parse_config_version(config_h: &str) -> Option<(u32, u32)> {
    config_h.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("#define VERILATOR_VERSION ")?;
        parse_version_text(rest.trim().trim_matches('"'))
    })
}

/// Parses the first `major.minor` in `text` (`5.048`, `Verilator 5.006
/// 2023-01-22`), for `verilator --version` output.
pub fn parse_version_text(text: &str) -> Option<(u32, u32)> {
    text.split(|c: char| c.is_whitespace() || c == 'v')
        .find_map(|word| {
            let (major, minor) = word.split_once('.')?;
            let minor: String = minor.chars().take_while(char::is_ascii_digit).collect();
            Some((major.parse().ok()?, minor.parse().ok()?))
        })
}
