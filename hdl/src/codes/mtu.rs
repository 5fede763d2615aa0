//! Path MTU codes. Two encodings travel in the RTL:
//! - the IBA path MTU code (IBA `PathMTU`, libibverbs `ibv_mtu`):
//!   1 = 256 .. 5 = 4096 bytes, `128 << code`. The context record's
//!   `path_mtu`, the segmenter's `wqe_mtu` and the grant and checker ports
//!   carry it;
//! - the response queue's shift code: 0 = 256 .. 4 = 4096 bytes,
//!   `256 << code`, which the queue shifts its MTU base by
//!   (`response_queue` `command.mtu_code`).
//!
//! Both are [`BITS`] wide. The model keeps the MTU in bytes.

/// Width of either code on a port or in a record.
pub const BITS: usize = 3;

/// IBA path MTU codes.
pub const IBA_256: u32 = 1;
pub const IBA_512: u32 = 2;
pub const IBA_1024: u32 = 3;
pub const IBA_2048: u32 = 4;
pub const IBA_4096: u32 = 5;

/// Every MTU the RTL supports, in bytes, smallest first.
pub const SIZES: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// IBA path MTU code of an MTU in bytes, `None` for other sizes.
pub fn iba_code(bytes: u32) -> Option<u32> {
    match bytes {
        256 => Some(IBA_256),
        512 => Some(IBA_512),
        1024 => Some(IBA_1024),
        2048 => Some(IBA_2048),
        4096 => Some(IBA_4096),
        _ => None,
    }
}

/// MTU in bytes of an IBA path MTU code, `None` for codes outside 1..5.
pub fn iba_bytes(code: u32) -> Option<u32> {
    (IBA_256..=IBA_4096).contains(&code).then(|| 128 << code)
}

/// The response queue's shift code of an MTU in bytes (`256 << code`),
/// `None` for sizes the RTL does not support.
pub fn shift_code(bytes: u32) -> Option<u32> {
    iba_code(bytes).map(|code| code - 1)
}

/// MTU in bytes of a shift code, `None` for codes outside 0..4.
pub fn shift_bytes(code: u32) -> Option<u32> {
    iba_bytes(code + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iba_codes_are_ibas_1_to_5_for_256_to_4096() {
        for (bytes, code) in [(256, 1), (512, 2), (1024, 3), (2048, 4), (4096, 5)] {
            assert_eq!(iba_code(bytes), Some(code));
            assert_eq!(iba_bytes(code), Some(bytes));
        }
        assert_eq!(iba_code(1500), None);
        assert_eq!(iba_bytes(0), None);
        assert_eq!(iba_bytes(6), None);
    }

    #[test]
    fn shift_codes_are_256_shifted() {
        for bytes in SIZES {
            let code = shift_code(bytes).unwrap();
            assert_eq!(256 << code, bytes);
            assert_eq!(shift_bytes(code), Some(bytes));
        }
        assert_eq!(shift_code(128), None);
        assert_eq!(shift_bytes(5), None);
    }

    #[test]
    fn every_code_fits_its_width() {
        for bytes in SIZES {
            assert!(iba_code(bytes).unwrap() < 1 << BITS);
            assert!(shift_code(bytes).unwrap() < 1 << BITS);
        }
    }
}
