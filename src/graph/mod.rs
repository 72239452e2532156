//! Graphs as data, with no IO: the frame table that stacks merge into, and the colour of a
//! function's name.

pub mod color;
pub mod diff;
pub mod frames;
pub mod generated;
pub mod lists;
pub mod preview;
