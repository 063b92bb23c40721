//! Raw Ethernet/IPv4/IPv6/UDP frame building (pure, no I/O). Filled in by the raw-sender work.
