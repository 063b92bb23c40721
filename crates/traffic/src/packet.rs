//! Raw Ethernet II + IPv4/IPv6 + UDP frame building for the raw-frame sender.
//!
//! Owns: MAC address parsing, the per-flow frame template (`UdpTemplate`) and the
//! RFC 1071 Internet checksum.
//! Must not: do I/O (the one exception is `if_mac`, which reads sysfs) or use `unsafe`.
//! Sending the frames is `rawsock`'s job.
//!
//! `UdpTemplate::new` lays out every constant header byte once and precomputes the
//! one's-complement partial sums of the constant header fields, so that
//! `UdpTemplate::write` (called for every frame, at more than 1 Mpps) only copies bytes,
//! sums the payload and folds.

use std::io;
use std::net::{IpAddr, SocketAddr};

/// An Ethernet (EUI-48) address.
pub type Mac = [u8; 6];

const ETH_HLEN: usize = 14;
const IPV4_HLEN: usize = 20;
const IPV6_HLEN: usize = 40;
const UDP_HLEN: usize = 8;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const IPPROTO_UDP: u8 = 17;
const TTL: u8 = 64;
/// The longest header stack a template holds: Ethernet + IPv6 + UDP.
const MAX_HLEN: usize = ETH_HLEN + IPV6_HLEN + UDP_HLEN;

/// Parse a MAC address written as six colon-separated two-digit hex bytes,
/// e.g. `"aa:bb:cc:dd:ee:ff"` (either case).
pub fn parse_mac(s: &str) -> Result<Mac, String> {
    let bad = || format!("bad MAC address {s:?}: expected six hex bytes like aa:bb:cc:dd:ee:ff");
    let mut mac = [0u8; 6];
    let mut parts = s.split(':');
    for byte in mac.iter_mut() {
        let part = parts.next().ok_or_else(bad)?;
        if part.len() != 2 || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        *byte = u8::from_str_radix(part, 16).map_err(|_| bad())?;
    }
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok(mac)
}

/// The MAC address of interface `ifname`, read from `/sys/class/net/IFNAME/address`.
///
/// Note that sysfs shows the interfaces of the network namespace that mounted it, not
/// necessarily those of the calling thread's namespace.
pub fn if_mac(ifname: &str) -> io::Result<Mac> {
    if ifname.is_empty() || ifname == "." || ifname == ".." || ifname.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {ifname:?}"),
        ));
    }
    let path = format!("/sys/class/net/{ifname}/address");
    let text = std::fs::read_to_string(&path)?;
    parse_mac(text.trim())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{path}: {e}")))
}

/// Template of one UDP flow's frames: Ethernet II + IPv4 (no options, DF set, TTL 64)
/// or IPv6 (hop limit 64, flow label 0) + UDP, with a fixed payload length.
#[derive(Debug, Clone)]
pub struct UdpTemplate {
    /// Every header byte, with zero in the IPv4 identification and both checksums.
    header: [u8; MAX_HLEN],
    header_len: usize,
    payload_len: usize,
    /// Unfolded one's-complement sum of the IPv4 header with identification and
    /// checksum zero; `None` for IPv6.
    ip4_sum: Option<u32>,
    /// Unfolded one's-complement sum of the pseudo-header and the UDP header
    /// (checksum zero).
    udp_sum: u32,
}

impl UdpTemplate {
    /// A template for frames from `src_mac`/`src` to `dst_mac`/`dst` carrying
    /// `payload_len` bytes of UDP payload.
    ///
    /// Fails if the address families differ, or if the payload does not fit in one
    /// IP packet: for IPv4 the total length (20 + 8 + `payload_len`) must fit 65535,
    /// for IPv6 the payload length field (8 + `payload_len`) must (no jumbograms).
    pub fn new(
        src_mac: Mac,
        dst_mac: Mac,
        src: SocketAddr,
        dst: SocketAddr,
        payload_len: usize,
    ) -> Result<Self, String> {
        let udp_len = UDP_HLEN + payload_len;
        let mut header = [0u8; MAX_HLEN];
        header[0..6].copy_from_slice(&dst_mac);
        header[6..12].copy_from_slice(&src_mac);

        let mut pseudo = Sum::default();
        let (ip4_sum, ip_hlen) = match (src.ip(), dst.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let total = IPV4_HLEN + udp_len;
                let total = u16::try_from(total).map_err(|_| {
                    format!(
                        "UDP payload of {payload_len} bytes does not fit one IPv4 packet \
                         (at most {} bytes)",
                        usize::from(u16::MAX) - IPV4_HLEN - UDP_HLEN
                    )
                })?;
                header[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
                let ip = &mut header[ETH_HLEN..ETH_HLEN + IPV4_HLEN];
                ip[0] = 0x45; // version 4, IHL 5 (no options)
                ip[1] = 0; // DSCP/ECN
                ip[2..4].copy_from_slice(&total.to_be_bytes());
                // ip[4..6]: identification, per frame.
                ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF, offset 0
                ip[8] = TTL;
                ip[9] = IPPROTO_UDP;
                // ip[10..12]: header checksum, per frame.
                ip[12..16].copy_from_slice(&s.octets());
                ip[16..20].copy_from_slice(&d.octets());
                let ip4_sum = sum_words(ip);

                pseudo.add(&s.octets());
                pseudo.add(&d.octets());
                pseudo.add(&[0, IPPROTO_UDP]);
                pseudo.add(&(udp_len as u16).to_be_bytes());
                (Some(ip4_sum), IPV4_HLEN)
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                let plen = u16::try_from(udp_len).map_err(|_| {
                    format!(
                        "UDP payload of {payload_len} bytes does not fit one IPv6 packet \
                         (at most {} bytes)",
                        usize::from(u16::MAX) - UDP_HLEN
                    )
                })?;
                header[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
                let ip = &mut header[ETH_HLEN..ETH_HLEN + IPV6_HLEN];
                ip[0] = 0x60; // version 6, traffic class 0, flow label 0
                ip[4..6].copy_from_slice(&plen.to_be_bytes());
                ip[6] = IPPROTO_UDP;
                ip[7] = TTL;
                ip[8..24].copy_from_slice(&s.octets());
                ip[24..40].copy_from_slice(&d.octets());

                pseudo.add(&s.octets());
                pseudo.add(&d.octets());
                pseudo.add(&(udp_len as u32).to_be_bytes());
                pseudo.add(&[0, 0, 0, IPPROTO_UDP]);
                (None, IPV6_HLEN)
            }
            _ => {
                return Err(format!(
                    "source {src} and destination {dst} are of different address families"
                ))
            }
        };

        let udp_at = ETH_HLEN + ip_hlen;
        let udp = &mut header[udp_at..udp_at + UDP_HLEN];
        udp[0..2].copy_from_slice(&src.port().to_be_bytes());
        udp[2..4].copy_from_slice(&dst.port().to_be_bytes());
        udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
        // udp[6..8]: checksum, per frame.
        pseudo.add(udp);

        Ok(UdpTemplate {
            header,
            header_len: udp_at + UDP_HLEN,
            payload_len,
            ip4_sum,
            udp_sum: u32::from(pseudo.folded()),
        })
    }

    /// Length of a whole frame: 14 + IP header + 8 + payload length (no FCS).
    pub fn frame_len(&self) -> usize {
        self.header_len + self.payload_len
    }

    /// The UDP payload length every frame carries.
    pub fn payload_len(&self) -> usize {
        self.payload_len
    }

    /// Write one complete frame into `out[..frame_len()]`: the template's headers, then
    /// `payload`, with the IPv4 identification set to `ip_id` (ignored for IPv6), and
    /// correct IPv4 header and UDP checksums.
    ///
    /// # Panics
    /// If `out` is shorter than `frame_len()` or `payload` is not exactly the
    /// template's payload length: both are the caller's bugs, not input.
    pub fn write(&self, out: &mut [u8], payload: &[u8], ip_id: u16) {
        assert_eq!(
            payload.len(),
            self.payload_len,
            "payload length differs from the template's"
        );
        assert!(
            out.len() >= self.frame_len(),
            "frame buffer of {} bytes is shorter than the frame ({} bytes)",
            out.len(),
            self.frame_len()
        );
        // The whole payload as the head: nothing left to be zeros.
        self.write_head(out, payload, ip_id);
    }
}

impl UdpTemplate {
    /// Like [`UdpTemplate::write`], for a frame whose payload past `head` already holds
    /// zeros (a UMEM chunk of the AF_XDP sender, zeroed once and only ever rewritten up
    /// to `head.len()`): writes the headers and `head` alone. Zeros add nothing to a
    /// one's-complement sum, so the checksum is the same as `write`'s over the payload
    /// `head` followed by zeros.
    ///
    /// # Panics
    /// If `head` is longer than the payload or `out` shorter than `frame_len()`.
    pub fn write_head(&self, out: &mut [u8], head: &[u8], ip_id: u16) {
        assert!(
            head.len() <= self.payload_len,
            "head longer than the payload"
        );
        let hlen = self.header_len;
        let out = &mut out[..self.frame_len()];
        out[..hlen].copy_from_slice(&self.header[..hlen]);
        out[hlen..hlen + head.len()].copy_from_slice(head);
        if let Some(ip4_sum) = self.ip4_sum {
            let ip = &mut out[ETH_HLEN..ETH_HLEN + IPV4_HLEN];
            ip[4..6].copy_from_slice(&ip_id.to_be_bytes());
            let csum = !fold(u64::from(ip4_sum) + u64::from(ip_id));
            ip[10..12].copy_from_slice(&csum.to_be_bytes());
        }
        // The UDP header and the pseudo-header have even lengths, so the payload's
        // words line up with the sum's.
        let mut csum = !fold(u64::from(self.udp_sum) + sum_words_wide(head));
        if csum == 0 {
            // Zero means "no checksum" (IPv4) or is forbidden (IPv6): send its
            // one's-complement twin (RFC 768, RFC 8200 section 8.1).
            csum = 0xffff;
        }
        out[hlen - 2..hlen].copy_from_slice(&csum.to_be_bytes());
    }
}

/// One probe packet of a ruleset check: a protocol, addresses and ports (ports are
/// written for TCP, UDP, SCTP, UDP-Lite and DCCP; ICMP gets an echo request).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProbeTuple {
    pub proto: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
}

/// A complete frame for `p`: Ethernet II, IPv4 (DF, TTL 64) or IPv6 (hop limit 64),
/// and the transport header with correct checksums — TCP: a SYN; UDP: 8 payload bytes
/// of zeros; ICMP/ICMPv6: an echo request; SCTP, UDP-Lite, DCCP and any other
/// protocol: the two ports, then zeros (8 bytes; no checksum). Fails when the
/// addresses are of different families.
pub fn probe_frame(src_mac: Mac, dst_mac: Mac, p: &ProbeTuple) -> Result<Vec<u8>, String> {
    let ports = |len: usize| {
        let mut h = vec![0u8; len];
        h[0..2].copy_from_slice(&p.sport.to_be_bytes());
        h[2..4].copy_from_slice(&p.dport.to_be_bytes());
        h
    };
    let v6 = p.src.is_ipv6();
    let (mut l4, csum_at, pseudo) = match p.proto {
        6 => {
            let mut h = ports(20);
            h[4..8].copy_from_slice(&1u32.to_be_bytes()); // sequence
            h[12] = 5 << 4; // data offset: 5 words
            h[13] = 0x02; // SYN
            h[14..16].copy_from_slice(&0xffffu16.to_be_bytes()); // window
            (h, Some(16), true)
        }
        17 => (ports(16), Some(6), true),
        1 if !v6 => (vec![8, 0, 0, 0, 0, 1, 0, 1], Some(2), false),
        58 if v6 => (vec![128, 0, 0, 0, 0, 1, 0, 1], Some(2), true),
        _ => (ports(8), None, false),
    };
    if p.proto == 17 {
        l4[4..6].copy_from_slice(&16u16.to_be_bytes()); // UDP length
    }
    let l4_len = l4.len();
    let mut frame = Vec::with_capacity(ETH_HLEN + IPV6_HLEN + l4_len);
    frame.extend_from_slice(&dst_mac);
    frame.extend_from_slice(&src_mac);
    let mut pseudo_sum = Sum::default();
    match (p.src, p.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            frame.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
            let mut ip = [0u8; IPV4_HLEN];
            ip[0] = 0x45;
            ip[2..4].copy_from_slice(&((IPV4_HLEN + l4_len) as u16).to_be_bytes());
            ip[4..6].copy_from_slice(&1u16.to_be_bytes());
            ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes());
            ip[8] = TTL;
            ip[9] = p.proto;
            ip[12..16].copy_from_slice(&s.octets());
            ip[16..20].copy_from_slice(&d.octets());
            let c = internet_checksum(&[&ip]);
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            frame.extend_from_slice(&ip);
            pseudo_sum.add(&s.octets());
            pseudo_sum.add(&d.octets());
            pseudo_sum.add(&[0, p.proto]);
            pseudo_sum.add(&(l4_len as u16).to_be_bytes());
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            frame.extend_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
            let mut ip = [0u8; IPV6_HLEN];
            ip[0] = 0x60;
            ip[4..6].copy_from_slice(&(l4_len as u16).to_be_bytes());
            ip[6] = p.proto;
            ip[7] = TTL;
            ip[8..24].copy_from_slice(&s.octets());
            ip[24..40].copy_from_slice(&d.octets());
            frame.extend_from_slice(&ip);
            pseudo_sum.add(&s.octets());
            pseudo_sum.add(&d.octets());
            pseudo_sum.add(&(l4_len as u32).to_be_bytes());
            pseudo_sum.add(&[0, 0, 0, p.proto]);
        }
        (s, d) => {
            return Err(format!(
                "probe source {s} and destination {d} are of different address families"
            ))
        }
    }
    if let Some(at) = csum_at {
        let mut sum = if pseudo { pseudo_sum } else { Sum::default() };
        sum.add(&l4);
        let mut c = !sum.folded();
        if c == 0 && p.proto == 17 {
            c = 0xffff; // zero means "no checksum" for UDP
        }
        l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
    }
    frame.extend_from_slice(&l4);
    Ok(frame)
}

/// RFC 1071 Internet checksum (the one's complement of the one's-complement sum of
/// 16-bit big-endian words) over the concatenation of `chunks`. Chunks may have odd
/// lengths; the data is treated as one byte stream, padded with a zero byte at the end
/// if its total length is odd.
pub fn internet_checksum(chunks: &[&[u8]]) -> u16 {
    let mut sum = Sum::default();
    for chunk in chunks {
        sum.add(chunk);
    }
    !sum.folded()
}

/// A running one's-complement sum over a byte stream fed in pieces of any length.
#[derive(Debug, Default, Clone, Copy)]
struct Sum {
    sum: u64,
    /// True if an odd number of bytes has been added so far.
    odd: bool,
}

impl Sum {
    fn add(&mut self, data: &[u8]) {
        let mut s = fold(sum_words_wide(data));
        if self.odd {
            // The chunk starts at an odd offset: each of its bytes sits in the other
            // half of its word. The one's-complement sum is byte-order independent
            // (RFC 1071 section 2(B)), so swapping the folded sum moves it across.
            s = s.swap_bytes();
        }
        self.sum += u64::from(s);
        self.odd ^= data.len() % 2 == 1;
    }

    fn folded(self) -> u16 {
        fold(self.sum)
    }
}

/// Unfolded sum of the big-endian 16-bit words of a short header (< 64 KiB).
fn sum_words(data: &[u8]) -> u32 {
    // At most 2^15 words of at most 2^16 - 1 each: fits 32 bits.
    fold(sum_words_wide(data)).into()
}

/// Sum of `data` as big-endian 16-bit words (a trailing odd byte is padded with zero),
/// not folded. Adds 32-bit words, which is the same modulo 0xffff since
/// 2^16 ≡ 1 (mod 0xffff), and halves the additions.
fn sum_words_wide(data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(4);
    let mut sum: u64 = 0;
    for c in &mut chunks {
        sum += u64::from(u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
    }
    match *chunks.remainder() {
        [] => {}
        [a] => sum += u64::from(a) << 8,
        [a, b] => sum += u64::from(u16::from_be_bytes([a, b])),
        [a, b, c] => sum += u64::from(u16::from_be_bytes([a, b])) + (u64::from(c) << 8),
        _ => unreachable!("chunks_exact(4) leaves fewer than 4 bytes"),
    }
    sum
}

/// Fold a one's-complement sum to 16 bits (end-around carries).
fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_head_equals_write_over_zeros() {
        for (src, dst) in [v4(), v6()] {
            for len in [0usize, 7, 8, 15, 16, 17, 100, 1472] {
                let t = UdpTemplate::new(SRC_MAC, DST_MAC, src, dst, len).unwrap();
                let head: Vec<u8> = (0..len.min(16) as u8)
                    .map(|b| b.wrapping_mul(37) | 1)
                    .collect();
                let mut payload = vec![0u8; len];
                payload[..head.len()].copy_from_slice(&head);
                let mut a = vec![0u8; t.frame_len()];
                t.write(&mut a, &payload, 0x1234);
                let mut b = vec![0u8; t.frame_len()];
                t.write_head(&mut b, &head, 0x1234);
                assert_eq!(a, b, "{src} payload {len}");
            }
        }
    }

    #[test]
    fn probe_frames_carry_their_tuple_with_correct_checksums() {
        let tuple = |proto, src: &str, dst: &str| ProbeTuple {
            proto,
            src: src.parse().unwrap(),
            dst: dst.parse().unwrap(),
            sport: 1024,
            dport: 5000,
        };
        // (protocol, family, transport length, checksum covers a pseudo-header).
        for (proto, src, dst, l4_len, pseudo) in [
            (6, "198.18.128.1", "198.19.128.2", 20, true),
            (17, "198.18.128.1", "198.19.128.2", 16, true),
            (1, "198.18.128.1", "198.19.128.2", 8, false),
            (132, "198.18.128.1", "198.19.128.2", 8, false),
            (6, "2001:2:0:1:8000::1", "2001:2:0:2:8000::2", 20, true),
            (17, "2001:2:0:1:8000::1", "2001:2:0:2:8000::2", 16, true),
            (58, "2001:2:0:1:8000::1", "2001:2:0:2:8000::2", 8, true),
        ] {
            let t = tuple(proto, src, dst);
            let f = probe_frame(SRC_MAC, DST_MAC, &t).unwrap();
            assert_eq!((&f[0..6], &f[6..12]), (&DST_MAC[..], &SRC_MAC[..]));
            let (ip_len, s, d): (usize, Vec<u8>, Vec<u8>) = match (t.src, t.dst) {
                (IpAddr::V4(s), IpAddr::V4(d)) => {
                    let ip = &f[14..34];
                    assert_eq!(internet_checksum(&[ip]), 0, "{proto}: IPv4 header checksum");
                    assert_eq!(
                        (ip[9], &ip[12..16], &ip[16..20]),
                        (proto, &s.octets()[..], &d.octets()[..])
                    );
                    (20, s.octets().to_vec(), d.octets().to_vec())
                }
                (IpAddr::V6(s), IpAddr::V6(d)) => {
                    assert_eq!(f[14 + 6], proto);
                    (40, s.octets().to_vec(), d.octets().to_vec())
                }
                _ => unreachable!(),
            };
            let l4 = &f[14 + ip_len..];
            assert_eq!(l4.len(), l4_len, "{proto} {src}");
            if proto != 1 && proto != 58 {
                assert_eq!(&l4[0..4], &[4, 0, 0x13, 0x88], "ports 1024 → 5000");
            }
            if proto == 132 {
                continue; // no checksum written
            }
            let mut ph = vec![];
            if pseudo {
                ph.extend(&s);
                ph.extend(&d);
                if ip_len == 20 {
                    ph.extend([0, proto]);
                    ph.extend((l4_len as u16).to_be_bytes());
                } else {
                    ph.extend((l4_len as u32).to_be_bytes());
                    ph.extend([0, 0, 0, proto]);
                }
            }
            assert_eq!(
                naive_checksum(&[ph, l4.to_vec()].concat()),
                0,
                "{proto} {src}: checksum"
            );
        }
        assert!(probe_frame(SRC_MAC, DST_MAC, &tuple(17, "198.18.0.1", "2001:2::1")).is_err());
    }

    const SRC_MAC: Mac = [0x02, 0, 0, 0, 0, 0x0a];
    const DST_MAC: Mac = [0x02, 0, 0, 0, 0, 0x0b];

    fn v4() -> (SocketAddr, SocketAddr) {
        (
            "198.18.0.2:30000".parse().unwrap(),
            "198.19.0.2:9".parse().unwrap(),
        )
    }

    fn v6() -> (SocketAddr, SocketAddr) {
        (
            "[2001:2:0:1::2]:30000".parse().unwrap(),
            "[2001:2:0:2::2]:9".parse().unwrap(),
        )
    }

    /// Straightforward checksum over one buffer, for cross-checking.
    fn naive_checksum(data: &[u8]) -> u16 {
        let mut sum: u32 = 0;
        for pair in data.chunks(2) {
            let hi = u32::from(pair[0]) << 8;
            let lo = pair.get(1).copied().map_or(0, u32::from);
            sum += hi | lo;
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    /// Parse `frame` as the template describes and check every field and checksum.
    fn check_frame(frame: &[u8], src: SocketAddr, dst: SocketAddr, payload: &[u8], ip_id: u16) {
        assert_eq!(&frame[0..6], &DST_MAC);
        assert_eq!(&frame[6..12], &SRC_MAC);
        let (udp_at, pseudo): (usize, Vec<u8>) = match (src.ip(), dst.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                assert_eq!(&frame[12..14], &[0x08, 0x00]);
                let ip = &frame[14..34];
                assert_eq!(ip[0], 0x45);
                assert_eq!(
                    usize::from(u16::from_be_bytes([ip[2], ip[3]])),
                    20 + 8 + payload.len()
                );
                assert_eq!(u16::from_be_bytes([ip[4], ip[5]]), ip_id);
                assert_eq!(&ip[6..8], &[0x40, 0x00], "DF set, no fragment offset");
                assert_eq!(ip[8], 64);
                assert_eq!(ip[9], 17);
                assert_eq!(&ip[12..16], &s.octets());
                assert_eq!(&ip[16..20], &d.octets());
                assert_eq!(internet_checksum(&[ip]), 0, "IPv4 header checksum");
                assert_eq!(naive_checksum(ip), 0);
                let mut p = Vec::new();
                p.extend_from_slice(&s.octets());
                p.extend_from_slice(&d.octets());
                p.extend_from_slice(&[0, 17]);
                p.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
                (34, p)
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                assert_eq!(&frame[12..14], &[0x86, 0xdd]);
                let ip = &frame[14..54];
                assert_eq!(&ip[0..4], &[0x60, 0, 0, 0]);
                assert_eq!(
                    usize::from(u16::from_be_bytes([ip[4], ip[5]])),
                    8 + payload.len()
                );
                assert_eq!(ip[6], 17);
                assert_eq!(ip[7], 64);
                assert_eq!(&ip[8..24], &s.octets());
                assert_eq!(&ip[24..40], &d.octets());
                let mut p = Vec::new();
                p.extend_from_slice(&s.octets());
                p.extend_from_slice(&d.octets());
                p.extend_from_slice(&((8 + payload.len()) as u32).to_be_bytes());
                p.extend_from_slice(&[0, 0, 0, 17]);
                (54, p)
            }
            _ => unreachable!(),
        };
        let udp = &frame[udp_at..];
        assert_eq!(udp.len(), 8 + payload.len());
        assert_eq!(u16::from_be_bytes([udp[0], udp[1]]), src.port());
        assert_eq!(u16::from_be_bytes([udp[2], udp[3]]), dst.port());
        assert_eq!(usize::from(u16::from_be_bytes([udp[4], udp[5]])), udp.len());
        assert_ne!(&udp[6..8], &[0, 0], "UDP checksum is always present");
        assert_eq!(&udp[8..], payload);
        assert_eq!(internet_checksum(&[&pseudo, udp]), 0, "UDP checksum");
        let mut all = pseudo.clone();
        all.extend_from_slice(udp);
        assert_eq!(naive_checksum(&all), 0);
    }

    fn build(src: SocketAddr, dst: SocketAddr, payload: &[u8], ip_id: u16) -> Vec<u8> {
        let t = UdpTemplate::new(SRC_MAC, DST_MAC, src, dst, payload.len()).unwrap();
        // A dirty, oversized buffer: `write` must overwrite every byte it owns.
        let mut out = vec![0xa5u8; t.frame_len() + 7];
        t.write(&mut out, payload, ip_id);
        out.truncate(t.frame_len());
        out
    }

    #[test]
    fn checksum_rfc1071_example() {
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(internet_checksum(&[&data]), !0xddf2u16);
        assert_eq!(internet_checksum(&[&data]), 0x220d);
        // Split anywhere, including at odd offsets.
        for cut in 0..=data.len() {
            let (a, b) = data.split_at(cut);
            assert_eq!(internet_checksum(&[a, b]), 0x220d, "cut at {cut}");
        }
        assert_eq!(
            internet_checksum(&[&data[..1], &data[1..4], &[], &data[4..7], &data[7..]]),
            0x220d
        );
    }

    #[test]
    fn checksum_edge_vectors() {
        assert_eq!(internet_checksum(&[]), 0xffff);
        assert_eq!(internet_checksum(&[&[]]), 0xffff);
        // A single odd byte is the high half of a zero-padded word.
        assert_eq!(internet_checksum(&[&[0x01]]), !0x0100);
        assert_eq!(internet_checksum(&[&[0xff, 0xff]]), 0x0000);
        // Carries wrap around: 0xffff + 0x0001 = 0x0001 in one's complement.
        assert_eq!(internet_checksum(&[&[0xff, 0xff, 0x00, 0x01]]), !0x0001);
        // A classic IPv4 header (checksum field 0xb861 included) sums to zero.
        let hdr = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(internet_checksum(&[&hdr]), 0);
    }

    #[test]
    fn checksum_matches_naive_on_odd_splits() {
        let data: Vec<u8> = (0..1001u32).map(|i| (i * 7 + 13) as u8 ^ 0x5a).collect();
        let want = naive_checksum(&data);
        for cut1 in [0, 1, 2, 3, 5, 500, 999, 1001] {
            for cut2 in [cut1, cut1 + 1, cut1 + 3] {
                let cut2 = cut2.min(data.len());
                let got = internet_checksum(&[&data[..cut1], &data[cut1..cut2], &data[cut2..]]);
                assert_eq!(got, want, "cuts {cut1}, {cut2}");
            }
        }
    }

    /// "hello" from `src` to `dst` in one frame: Ethernet, an IP header of `ip_len`
    /// bytes, UDP and the 5 bytes, each field as [`check_frame`] reads it.
    fn hello_frame((src, dst): (SocketAddr, SocketAddr), ip_len: usize) {
        let f = build(src, dst, b"hello", 0x1234);
        assert_eq!(f.len(), 14 + ip_len + 8 + 5);
        check_frame(&f, src, dst, b"hello", 0x1234);
    }

    #[test]
    fn ipv4_frame_hello() {
        hello_frame(v4(), 20);
    }

    #[test]
    fn ipv6_frame_hello() {
        hello_frame(v6(), 40);
    }

    #[test]
    fn many_lengths_and_ids() {
        for (src, dst) in [v4(), v6()] {
            for len in [
                0usize, 1, 2, 3, 4, 5, 17, 18, 63, 64, 1471, 1472, 1473, 9000,
            ] {
                let payload: Vec<u8> = (0..len).map(|i| (i * 31 + len) as u8).collect();
                for ip_id in [0u16, 1, 0x7fff, 0xfffe, 0xffff] {
                    let f = build(src, dst, &payload, ip_id);
                    check_frame(&f, src, dst, &payload, ip_id);
                }
            }
        }
    }

    #[test]
    fn payload_len_zero() {
        for (src, dst) in [v4(), v6()] {
            let t = UdpTemplate::new(SRC_MAC, DST_MAC, src, dst, 0).unwrap();
            assert_eq!(t.payload_len(), 0);
            let f = build(src, dst, &[], 7);
            assert_eq!(f.len(), t.frame_len());
            check_frame(&f, src, dst, &[], 7);
        }
    }

    #[test]
    fn all_ones_payload_never_gives_zero_udp_checksum() {
        // Search for a payload word that makes the computed checksum 0 and check that
        // 0xffff is sent instead.
        for (src, dst) in [v4(), v6()] {
            let t = UdpTemplate::new(SRC_MAC, DST_MAC, src, dst, 2).unwrap();
            let mut out = vec![0u8; t.frame_len()];
            let mut found = false;
            for w in 0..=u16::MAX {
                t.write(&mut out, &w.to_be_bytes(), 0);
                let c = &out[t.frame_len() - 4..t.frame_len() - 2];
                assert_ne!(c, &[0, 0]);
                if c == [0xff, 0xff] {
                    found = true;
                    check_frame(&out, src, dst, &w.to_be_bytes(), 0);
                }
            }
            assert!(found);
        }
    }

    #[test]
    fn size_limits() {
        let (s4, d4) = v4();
        let (s6, d6) = v6();
        assert!(UdpTemplate::new(SRC_MAC, DST_MAC, s4, d4, 65535 - 28).is_ok());
        let e = UdpTemplate::new(SRC_MAC, DST_MAC, s4, d4, 65535 - 27).unwrap_err();
        assert!(e.contains("65507"), "{e}");
        assert!(UdpTemplate::new(SRC_MAC, DST_MAC, s6, d6, 65535 - 8).is_ok());
        assert!(UdpTemplate::new(SRC_MAC, DST_MAC, s6, d6, 65535 - 7).is_err());
        // The largest IPv4 frame is still correct.
        let payload = vec![0xffu8; 65535 - 28];
        let f = build(s4, d4, &payload, 9);
        check_frame(&f, s4, d4, &payload, 9);
    }

    #[test]
    fn mismatched_families_rejected() {
        let (s4, d4) = v4();
        let (s6, d6) = v6();
        let e = UdpTemplate::new(SRC_MAC, DST_MAC, s4, d6, 10).unwrap_err();
        assert!(e.contains("different address families"), "{e}");
        assert!(UdpTemplate::new(SRC_MAC, DST_MAC, s6, d4, 10).is_err());
    }

    #[test]
    #[should_panic(expected = "payload length")]
    fn wrong_payload_length_panics() {
        let (src, dst) = v4();
        let t = UdpTemplate::new(SRC_MAC, DST_MAC, src, dst, 4).unwrap();
        let mut out = vec![0u8; t.frame_len()];
        t.write(&mut out, b"hello", 0);
    }

    #[test]
    fn parse_mac_good() {
        assert_eq!(
            parse_mac("aa:bb:cc:dd:ee:ff"),
            Ok([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff])
        );
        assert_eq!(parse_mac("02:00:5E:10:00:01"), Ok([2, 0, 0x5e, 0x10, 0, 1]));
        assert_eq!(parse_mac("00:00:00:00:00:00"), Ok([0; 6]));
    }

    #[test]
    fn parse_mac_bad() {
        for s in [
            "",
            "aa:bb:cc:dd:ee",
            "aa:bb:cc:dd:ee:ff:00",
            "aa:bb:cc:dd:ee:f",
            "aa:bb:cc:dd:ee:fff",
            "aa-bb-cc-dd-ee-ff",
            "aa:bb:cc:dd:ee:gg",
            "aa:bb:cc:dd:ee:+f",
            "aa:bb:cc:dd:ee:ff:",
            " aa:bb:cc:dd:ee:ff",
            "aabb.ccdd.eeff",
        ] {
            let e = parse_mac(s).unwrap_err();
            assert!(e.contains("bad MAC address"), "{s:?}: {e}");
        }
    }

    #[test]
    fn if_mac_rejects_paths_and_reads_loopback() {
        assert_eq!(
            if_mac("../x").unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        assert_eq!(if_mac("").unwrap_err().kind(), io::ErrorKind::InvalidInput);
        if std::path::Path::new("/sys/class/net/lo/address").exists() {
            assert_eq!(if_mac("lo").unwrap(), [0; 6]);
        }
    }
}
