//! Thread-local traces the model's blocks write for the RTL tests: each is
//! `None` until a `record_*` call opens it, and a `record_*` call nests (an
//! outer recording sees none of what an inner one took).

use std::cell::RefCell;
use std::thread::LocalKey;

/// One thread's trace of `T`s: `Some` while a recording is open.
pub(crate) type Trace<T> = RefCell<Option<Vec<T>>>;

/// Runs `f` with a fresh trace open in `trace`, and returns what `f`
/// returned with everything pushed to the trace meanwhile; the trace open
/// before (if any) is restored after.
pub(crate) fn record<T: 'static, R>(
    trace: &'static LocalKey<Trace<T>>,
    f: impl FnOnce() -> R,
) -> (R, Vec<T>) {
    let outer = trace.with(|t| t.borrow_mut().replace(Vec::new()));
    let r = f();
    let taken = trace.with(|t| std::mem::replace(&mut *t.borrow_mut(), outer));
    (r, taken.unwrap_or_default())
}

/// Whether a recording is open in `trace`.
pub(crate) fn is_recording<T: 'static>(trace: &'static LocalKey<Trace<T>>) -> bool {
    trace.with(|t| t.borrow().is_some())
}

/// Appends `item()` to `trace` if a recording is open there (`item` is
/// not called otherwise, so an unrecorded trace costs no copy).
pub(crate) fn push<T: 'static>(trace: &'static LocalKey<Trace<T>>, item: impl FnOnce() -> T) {
    trace.with(|t| {
        if let Some(items) = t.borrow_mut().as_mut() {
            items.push(item());
        }
    });
}
