//! Attribute macros of the Kindgi pack SDK.
