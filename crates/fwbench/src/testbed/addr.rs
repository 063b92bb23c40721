//! The address plan of fwbench's testbeds, inside the benchmarking ranges only:
//! clients on 198.18.0.0/16 (2001:2:0:1::/64), servers on 198.19.0.0/16
//! (2001:2:0:2::/64).

use proto::Family;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub const SERVER_V4: &str = "198.19.0.2";

/// Whether an address lies in the benchmarking ranges (198.18.0.0/15, 2001:2::/48),
/// the only ones fwbench ever sends to or from.
pub fn benchmark(a: IpAddr) -> bool {
    match a {
        IpAddr::V4(v) => u32::from(v) >> 17 == u32::from(Ipv4Addr::new(198, 18, 0, 0)) >> 17,
        IpAddr::V6(v) => {
            u128::from(v) >> 80 == u128::from(Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0)) >> 80
        }
    }
}
pub const SERVER_V6: &str = "2001:2:0:2::2";
/// Most clients one testbed addresses (198.18.1.1 … 198.18.255.255).
pub use crate::params::MAX_CLIENTS;

/// Source address of client `i` (1-based).
pub fn client(family: Family, i: u32) -> IpAddr {
    match family {
        Family::V4 => IpAddr::V4(Ipv4Addr::from(u32::from(Ipv4Addr::new(198, 18, 1, 0)) + i)),
        Family::V6 => IpAddr::V6(Ipv6Addr::new(0x2001, 2, 0, 1, 0, 0, 0xc, i as u16)),
    }
}

/// The gateway's address on the client side (the clients' next hop; the proxy's).
pub fn gateway_client_side(family: Family) -> IpAddr {
    match family {
        Family::V4 => "198.18.0.1".parse().expect("literal"),
        Family::V6 => "2001:2:0:1::1".parse().expect("literal"),
    }
}

/// Most destination addresses a flood spreads over (`--dsts`): the server's own and
/// 198.19.1.1 … 198.19.1.254 (2001:2:0:2::d:1 …).
pub const MAX_DSTS: u32 = 255;

/// Destination `i` (0-based) of a spread flood: 0 is the server's address, `i` ≥ 1 an
/// extra address of the server, 198.19.1.i (2001:2:0:2::d:i).
pub fn destination(family: Family, i: u32) -> IpAddr {
    match (family, i) {
        (_, 0) => server(family),
        (Family::V4, i) => IpAddr::V4(Ipv4Addr::from(u32::from(Ipv4Addr::new(198, 19, 1, 0)) + i)),
        (Family::V6, i) => IpAddr::V6(Ipv6Addr::new(0x2001, 2, 0, 2, 0, 0, 0xd, i as u16)),
    }
}

/// The gateway's address on the server side (the server's next hop; source NAT
/// translates to it).
pub fn gateway_server_side(family: Family) -> IpAddr {
    match family {
        Family::V4 => "198.19.0.1".parse().expect("literal"),
        Family::V6 => "2001:2:0:2::1".parse().expect("literal"),
    }
}

pub fn server(family: Family) -> IpAddr {
    match family {
        Family::V4 => SERVER_V4.parse().expect("literal"),
        Family::V6 => SERVER_V6.parse().expect("literal"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_benchmark_ranges_and_nothing_else() {
        for (a, inside) in [
            ("198.18.0.0", true),
            ("198.19.255.255", true),
            ("198.17.255.255", false),
            ("198.20.0.0", false),
            ("203.0.113.1", false),
            ("2001:2::", true),
            ("2001:2:0:ffff:ffff::1", true),
            ("2001:3::1", false),
            ("2001:db8::1", false),
        ] {
            assert_eq!(super::benchmark(a.parse().unwrap()), inside, "{a}");
        }
    }
}
