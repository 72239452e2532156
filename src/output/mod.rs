//! The output folder: the only code that writes into it.

pub mod staging;
