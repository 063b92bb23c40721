//! The UDP payload of a received Ethernet frame, for the AF_XDP sink (which gets whole
//! frames, where a socket gets payloads).
//!
//! Owns: Ethernet II → IPv4 (any IHL, first fragment only) or IPv6 (UDP as the first
//! next header) → UDP, with every length checked against the frame.
//! Must not: panic on any input (frames come from the network), or verify checksums
//! (the kernel does not either on this path; the sender computes them, and the socket
//! sink, which does verify, cross-checks).

/// The parts of a frame the sink needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpView<'a> {
    pub dst_port: u16,
    pub payload: &'a [u8],
}

const ETH_HLEN: usize = 14;

/// The UDP datagram in `frame`, or `None` if it is something else (ARP, another
/// protocol, a later fragment) or truncated.
pub fn udp_payload(frame: &[u8]) -> Option<UdpView<'_>> {
    let ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    let ip = frame.get(ETH_HLEN..)?;
    let udp = match ethertype {
        0x0800 => {
            let ihl = usize::from(*ip.first()? & 0x0f) * 4;
            if ip[0] >> 4 != 4 || ihl < 20 || *ip.get(9)? != 17 {
                return None;
            }
            let frag = u16::from_be_bytes([*ip.get(6)?, *ip.get(7)?]);
            if frag & 0x1fff != 0 || frag & 0x2000 != 0 {
                return None; // a fragment: the datagram is not whole here
            }
            let total = usize::from(u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]));
            ip.get(ihl..total)?
        }
        0x86dd => {
            if *ip.first()? >> 4 != 6 || *ip.get(6)? != 17 {
                return None;
            }
            let plen = usize::from(u16::from_be_bytes([*ip.get(4)?, *ip.get(5)?]));
            ip.get(40..40 + plen)?
        }
        _ => return None,
    };
    let len = usize::from(u16::from_be_bytes([*udp.get(4)?, *udp.get(5)?]));
    if len < 8 {
        return None;
    }
    Some(UdpView {
        dst_port: u16::from_be_bytes([udp[2], udp[3]]),
        payload: udp.get(8..len)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::UdpTemplate;

    fn frame(src: &str, dst: &str, payload: &[u8]) -> Vec<u8> {
        let t = UdpTemplate::new(
            [2, 0, 0, 0, 0, 1],
            [2, 0, 0, 0, 0, 2],
            src.parse().unwrap(),
            dst.parse().unwrap(),
            payload.len(),
        )
        .unwrap();
        let mut f = vec![0u8; t.frame_len()];
        t.write(&mut f, payload, 1);
        f
    }

    #[test]
    fn finds_the_payload_v4_and_v6() {
        let p: Vec<u8> = (0..40).collect();
        for (s, d) in [
            ("198.18.0.2:30000", "198.19.0.2:9"),
            ("[2001:2:0:1::2]:30000", "[2001:2:0:2::2]:9"),
        ] {
            let f = frame(s, d, &p);
            let v = udp_payload(&f).unwrap();
            assert_eq!(v.dst_port, 9);
            assert_eq!(v.payload, &p[..]);
            // Ethernet padding after the datagram is not payload.
            let mut padded = f.clone();
            padded.extend_from_slice(&[0xee; 6]);
            assert_eq!(udp_payload(&padded).unwrap().payload, &p[..]);
            // Every truncation is refused, never a panic.
            for n in 0..f.len() {
                assert_eq!(udp_payload(&f[..n]), None, "{s} cut at {n}");
            }
        }
    }

    #[test]
    fn refuses_other_frames() {
        let f = frame("198.18.0.2:30000", "198.19.0.2:9", &[1; 20]);
        let mut arp = f.clone();
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(udp_payload(&arp), None);
        let mut tcp = f.clone();
        tcp[14 + 9] = 6;
        assert_eq!(udp_payload(&tcp), None);
        let mut later_fragment = f.clone();
        later_fragment[14 + 6..14 + 8].copy_from_slice(&0x0010u16.to_be_bytes());
        assert_eq!(udp_payload(&later_fragment), None);
        let mut short_udp_len = f.clone();
        short_udp_len[14 + 20 + 4..14 + 20 + 6].copy_from_slice(&4u16.to_be_bytes());
        assert_eq!(udp_payload(&short_udp_len), None);
        // Single-byte corruptions anywhere never panic.
        for i in 0..f.len() {
            for v in [0u8, 0x45, 0xff] {
                let mut b = f.clone();
                b[i] = v;
                let _ = udp_payload(&b);
            }
        }
    }
}
