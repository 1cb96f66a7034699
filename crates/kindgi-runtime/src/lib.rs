//! The runtime side of Kindgi pack protocol v2 for development: tool-files API, wait links, pack client.
