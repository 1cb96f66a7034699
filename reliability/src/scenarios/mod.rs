//! Scenarios shared by the tests (small sizes, CI budget) and the
//! `kindgi-stress` command (large sizes): each runs against a started
//! service and returns a report.

pub mod drain;
pub mod files_crash;
pub mod hostile;
pub mod overload;
pub mod rolling;
