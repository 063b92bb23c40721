//! A prefix- and order-preserving map of a ruleset's addresses into a small target
//! block (the testbed's benchmark ranges), so that probe packets whose addresses lie
//! anywhere can be sent on the testbed with the same fate.
//!
//! The prefixes the rulesets match form a tree (two prefixes are nested or disjoint).
//! Each prefix gets an image prefix inside its parent's image, children in address
//! order; the probe addresses that fall between (or outside) a node's children get
//! one address each per gap. So for every prefix P of the rulesets and every probe
//! address q: q ∈ P ⟺ map(q) ∈ map(P), and q < r ⟹ map(q) ≤ map(r). Prefix
//! lengths change (a /24 with no probe inside but one address becomes a /32); the
//! verdict structure does not.
//!
//! Must not: do I/O; map an address it was not built for (`None`).

use super::model::Net;

/// One node of the prefix tree: a prefix of the rulesets (node 0: the whole space).
#[derive(Debug, Clone)]
struct Node {
    net: Net,
    /// Children (node indices), in address order.
    children: Vec<usize>,
    /// Per gap (before child 0, between children, after the last): whether a probe
    /// address falls there, and its offset in this node's image once laid out.
    gaps: Vec<Option<u128>>,
    /// Offset of each child's image in this node's image.
    child_at: Vec<u128>,
    /// Host bits of this node's image (its image is a prefix of width − bits).
    bits: u32,
    /// First address of the image.
    image: u128,
}

/// The map of one address family and field (source or destination).
#[derive(Debug, Clone)]
pub struct AddrMap {
    v6: bool,
    nodes: Vec<Node>,
    target: Net,
}

fn width(v6: bool) -> u32 {
    if v6 {
        128
    } else {
        32
    }
}

impl AddrMap {
    /// The map of `points` and `nets` (all of family `v6`; others are ignored) into
    /// `target`; an error when they need more room than `target` has.
    pub fn build(
        v6: bool,
        nets: &[Net],
        points: &[u128],
        target: Net,
    ) -> Result<AddrMap, AddrMapError> {
        let w = width(v6);
        let mut prefixes: Vec<Net> = nets
            .iter()
            .filter(|n| n.v6 == v6 && n.len > 0)
            .map(|n| Net {
                addr: n.range().0,
                ..*n
            })
            .collect();
        prefixes.sort_by_key(|n| (n.range().0, n.len));
        prefixes.dedup();
        let root = Net {
            v6,
            addr: 0,
            len: 0,
        };
        let node = |net| Node {
            net,
            children: vec![],
            gaps: vec![],
            child_at: vec![],
            bits: 0,
            image: 0,
        };
        let mut nodes = vec![node(root)];
        // Sorted by first address, shorter first: a stack of the open ancestors.
        let mut stack = vec![0usize];
        for p in prefixes {
            let (lo, _) = p.range();
            // INVARIANT: the root holds every address, so the stack never empties.
            while let Some(&top) = stack.last() {
                if top == 0 || nodes[top].net.contains(v6, lo) {
                    break;
                }
                stack.pop();
            }
            let parent = *stack.last().unwrap_or(&0);
            nodes.push(node(p));
            let i = nodes.len() - 1;
            nodes[parent].children.push(i);
            stack.push(i);
        }
        for n in &mut nodes {
            n.gaps = vec![None; n.children.len() + 1];
        }
        let mut m = AddrMap { v6, nodes, target };
        for &q in points {
            let (n, g) = m.locate(q);
            m.nodes[n].gaps[g] = Some(0);
        }
        // Lay out bottom-up (children come after their parents in `nodes`).
        for i in (0..m.nodes.len()).rev() {
            let mut at: u128 = 0;
            let mut child_at = vec![];
            let n = &m.nodes[i];
            let mut gaps = n.gaps.clone();
            for (k, g) in gaps.iter_mut().enumerate() {
                if g.is_some() {
                    *g = Some(at);
                    at += 1;
                }
                if let Some(&c) = n.children.get(k) {
                    let bits = m.nodes[c].bits;
                    if bits >= w {
                        return Err(AddrMapError::Deeper {
                            v6,
                            width: w,
                            target,
                        });
                    }
                    let size = 1u128 << bits;
                    at = at.div_ceil(size) * size;
                    child_at.push(at);
                    at += size;
                }
            }
            // ceil(log2(at)): the host bits of the smallest prefix holding `at` slots.
            let bits = u128::BITS - at.max(1).saturating_sub(1).leading_zeros();
            let n = &mut m.nodes[i];
            n.gaps = gaps;
            n.child_at = child_at;
            n.bits = bits;
        }
        let room = w - u32::from(target.len);
        if m.nodes[0].bits > room {
            return Err(AddrMapError::Room {
                v6,
                need: m.nodes[0].bits,
                target,
                room,
            });
        }
        // Images top-down.
        m.nodes[0].image = target.range().0;
        for i in 0..m.nodes.len() {
            let base = m.nodes[i].image;
            for k in 0..m.nodes[i].children.len() {
                let (c, off) = (m.nodes[i].children[k], m.nodes[i].child_at[k]);
                m.nodes[c].image = base + off;
            }
        }
        Ok(m)
    }

    /// The deepest node holding `a`, and the gap of that node it falls in.
    fn locate(&self, a: u128) -> (usize, usize) {
        let mut n = 0;
        loop {
            let cs = &self.nodes[n].children;
            // Children are disjoint and sorted: the last one starting at or before `a`.
            let k = cs.partition_point(|&c| self.nodes[c].net.range().0 <= a);
            match k.checked_sub(1).map(|j| cs[j]) {
                Some(c) if self.nodes[c].net.contains(self.v6, a) => n = c,
                _ => return (n, k),
            }
        }
    }

    /// The image of a probe address the map was built with.
    pub fn point(&self, a: u128) -> Option<u128> {
        let (n, g) = self.locate(a);
        let node = &self.nodes[n];
        Some(node.image + node.gaps[g]?)
    }

    /// The image of a prefix the map was built with (its length may change).
    pub fn net(&self, p: Net) -> Option<Net> {
        if p.v6 != self.v6 {
            return None;
        }
        if p.len == 0 {
            return Some(self.target);
        }
        let p = Net {
            addr: p.range().0,
            ..p
        };
        let mut n = 0;
        loop {
            let cs = &self.nodes[n].children;
            let k = cs.partition_point(|&c| self.nodes[c].net.range().0 <= p.addr);
            let c = cs[k.checked_sub(1)?];
            let net = self.nodes[c].net;
            if net == p {
                let node = &self.nodes[c];
                return Some(Net {
                    v6: self.v6,
                    addr: node.image,
                    len: (width(self.v6) - node.bits) as u8,
                });
            }
            if net.len >= p.len || !net.contains(self.v6, p.addr) {
                return None;
            }
            n = c;
        }
    }

    /// `198.18.128.0/17`: where the map puts everything.
    pub fn target(&self) -> Net {
        self.target
    }
}

fn what(v6: bool) -> &'static str {
    if v6 {
        "the rulesets' IPv6 prefixes and probe addresses"
    } else {
        "the rulesets' IPv4 prefixes and probe addresses"
    }
}

/// Why the addresses (`v6`: of IPv6) cannot be mapped into `target`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddrMapError {
    /// The prefixes nest deeper than the family's address width.
    #[error("{} need more than {width} address bits (target {target})", what(*v6))]
    Deeper { v6: bool, width: u32, target: Net },
    /// The tree needs more host bits than the target block has.
    #[error("{} need {need} address bits, {target} has {room}", what(*v6))]
    Room {
        v6: bool,
        need: u32,
        target: Net,
        room: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> u128 {
        Net::parse(s).unwrap().addr
    }
    fn n(s: &str) -> Net {
        Net::parse(s).unwrap()
    }

    #[test]
    fn nested_prefixes_keep_membership_and_order() {
        let m = AddrMap::build(
            false,
            &[n("203.0.113.0/24"), n("203.0.113.7/32")],
            &[
                a("203.0.113.7"),
                a("203.0.113.8"),
                a("203.0.112.255"),
                a("198.51.100.1"),
            ],
            n("198.18.128.0/17"),
        )
        .unwrap();
        // Root: one gap (both outside addresses), then the /24 (2 slots, aligned).
        assert_eq!(m.point(a("198.51.100.1")), Some(a("198.18.128.0")));
        assert_eq!(m.point(a("203.0.112.255")), Some(a("198.18.128.0")));
        assert_eq!(m.net(n("203.0.113.0/24")), Some(n("198.18.128.2/31")));
        assert_eq!(m.net(n("203.0.113.7/32")), Some(n("198.18.128.2/32")));
        assert_eq!(m.point(a("203.0.113.7")), Some(a("198.18.128.2")));
        assert_eq!(m.point(a("203.0.113.8")), Some(a("198.18.128.3")));
        // An address it was not built for (no probe in that gap): none.
        assert_eq!(m.point(a("203.0.114.1")), None);
        assert_eq!(m.net(n("203.0.114.0/24")), None);
    }

    #[test]
    fn every_membership_holds_after_the_map() {
        // A blocklist with gaps, a covering /16, an overlapping /20 inside it, and
        // probes at both ends and just outside each prefix.
        let nets: Vec<Net> = [
            "198.51.100.0/24",
            "198.51.100.0/26",
            "198.51.100.16/28",
            "198.51.100.17/32",
            "203.0.0.0/16",
            "203.0.112.0/20",
            "192.0.2.9/32",
        ]
        .iter()
        .map(|s| n(s))
        .collect();
        let mut points = vec![];
        for p in &nets {
            let (lo, hi) = p.range();
            points.extend([lo - 1, lo, lo + (hi - lo) / 2, hi, hi + 1]);
        }
        let m = AddrMap::build(false, &nets, &points, n("198.18.128.0/17")).unwrap();
        let t = n("198.18.128.0/17");
        for &q in &points {
            let mq = m.point(q).unwrap();
            assert!(t.contains(false, mq));
            for p in &nets {
                let mp = m.net(*p).unwrap();
                assert!(t.contains(false, mp.range().0) && t.contains(false, mp.range().1));
                assert_eq!(p.contains(false, q), mp.contains(false, mq), "{q} in {p}");
            }
            for &r in &points {
                if q < r {
                    assert!(mq <= m.point(r).unwrap(), "order of {q} and {r}");
                }
            }
        }
    }

    #[test]
    fn too_many_prefixes_for_the_target_is_an_error() {
        let nets: Vec<Net> = (0..600u128)
            .map(|i| Net {
                v6: false,
                addr: a("203.0.0.0") + i * 2,
                len: 32,
            })
            .collect();
        let points: Vec<u128> = nets.iter().map(|n| n.addr).collect();
        let e = AddrMap::build(false, &nets, &points, n("198.18.1.0/24")).unwrap_err();
        assert!(matches!(
            e,
            AddrMapError::Room {
                need: 10,
                room: 8,
                ..
            }
        ));
        assert_eq!(
            e.to_string(),
            "the rulesets' IPv4 prefixes and probe addresses need 10 address bits, \
             198.18.1.0/24 has 8"
        );
        // IPv6: the same tree fits easily.
        let nets6 = [n("2001:db8::/32"), n("2001:db8::1/128")];
        let m = AddrMap::build(
            true,
            &nets6,
            &[a("2001:db8::1"), a("2001:db8::2")],
            n("2001:2:0:1:8000::/65"),
        )
        .unwrap();
        assert_eq!(m.net(nets6[1]), Some(n("2001:2:0:1:8000::/128")));
        assert_eq!(m.point(a("2001:db8::2")), Some(a("2001:2:0:1:8000::1")));
    }
}
