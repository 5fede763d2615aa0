//! rocenic simulator library
