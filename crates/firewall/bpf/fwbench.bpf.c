// fwbench's rule walker: the same program for XDP (native and generic) and tc (tcx
// ingress). The rules, the set elements and the per-rule counters are maps the loader
// (crates/firewall/src/engine/bpf.rs) fills; keep the structs in step with it.
//
// Evaluation follows netfilter's: the rules are walked in order (raw prerouting
// first, then the filter chain); the first rule that matches counts the packet;
// drop ends it, accept skips to the first rule of the next hook. Packets of the other
// IP family, non-IP frames (ARP), multicast, broadcast and IPv6 link-scope traffic
// (neighbour discovery, MLD) pass untouched.
// The walk is a bpf_loop over the rules [start, n_rules) (the loader caps their number
// at MAX_BPF_RULES), so every rule costs one iteration: no hidden shortcut. The slots
// before `start` are spare: a gateway event inserts rules at the head by writing them
// there and then moving `start` (one word: the program sees the old head or the new).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define F_SRC 1
#define F_DST 2
#define F_L4 4
#define F_DPORT 8
#define F_SET 16

struct rule {
	__u32 flags;
	__u32 next;    // where an accept continues (the next hook's first rule, or n)
	__u32 set_id;
	__u8 l4;       // IP protocol number
	__u8 drop;     // 1: drop, 0: accept
	__u16 dport;   // host order
	__u32 src[4];  // network order, already masked
	__u32 src_mask[4];
	__u32 dst[4];
	__u32 dst_mask[4];
};

struct set_key {
	__u32 set_id;
	__u8 l4;
	__u8 pad;
	__u16 port;   // host order
	__u32 addr[4];
};

struct config {
	__u32 n_rules; // end of the walk (a slot index)
	__u32 v6;
	__u32 start;   // first rule walked
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct config);
	__uint(max_entries, 1);
} CONFIG SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rule);
	__uint(max_entries, 1); // sized by the loader
} RULES SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1); // sized by the loader
} COUNTERS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct set_key);
	__type(value, __u8);
	__uint(max_entries, 1); // sized by the loader
} SET SEC(".maps");

struct pkt {
	__u32 src[4];
	__u32 dst[4];
	__u8 l4;
	__u8 has_port;
	__u16 dport;
};

struct walk {
	struct pkt p;
	__u32 pos;
	__u32 n;
	int drop;
};

static __always_inline int prefix_ok(const __u32 *a, const __u32 *net, const __u32 *mask)
{
	return ((a[0] & mask[0]) == net[0]) & ((a[1] & mask[1]) == net[1]) &
	       ((a[2] & mask[2]) == net[2]) & ((a[3] & mask[3]) == net[3]);
}

static long step(__u32 i, void *vctx)
{
	struct walk *w = vctx;
	__u32 pos = w->pos;
	if (pos >= w->n)
		return 1;
	struct rule *r = bpf_map_lookup_elem(&RULES, &pos);
	if (!r)
		return 1;
	struct pkt *p = &w->p;
	int ok = 1;
	if ((r->flags & F_L4) && r->l4 != p->l4)
		ok = 0;
	if (ok && (r->flags & F_DPORT) && (!p->has_port || r->dport != p->dport))
		ok = 0;
	if (ok && (r->flags & F_SRC) && !prefix_ok(p->src, r->src, r->src_mask))
		ok = 0;
	if (ok && (r->flags & F_DST) && !prefix_ok(p->dst, r->dst, r->dst_mask))
		ok = 0;
	if (ok && (r->flags & F_SET)) {
		struct set_key k = {};
		k.set_id = r->set_id;
		k.l4 = p->l4;
		k.port = p->dport;
		k.addr[0] = p->src[0];
		k.addr[1] = p->src[1];
		k.addr[2] = p->src[2];
		k.addr[3] = p->src[3];
		if (!p->has_port || !bpf_map_lookup_elem(&SET, &k))
			ok = 0;
	}
	if (!ok) {
		w->pos = pos + 1;
		return 0;
	}
	__u64 *c = bpf_map_lookup_elem(&COUNTERS, &pos);
	if (c)
		*c += 1;
	if (r->drop) {
		w->drop = 1;
		return 1;
	}
	w->pos = r->next;
	return 0;
}

// 1: drop, 0: pass.
static __always_inline int filter(void *data, void *data_end)
{
	__u32 zero = 0;
	struct config *cfg = bpf_map_lookup_elem(&CONFIG, &zero);
	if (!cfg)
		return 0;
	__u32 start = cfg->start, end = cfg->n_rules;
	if (start >= end)
		return 0;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > data_end)
		return 0;
	struct walk w = {};
	struct pkt *pp = &w.p;
	void *l4;
	int frag = 0;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		if (cfg->v6)
			return 0;
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > data_end)
			return 0;
		// Multicast and broadcast never cross the gateway either.
		if ((ip->daddr & bpf_htonl(0xf0000000)) == bpf_htonl(0xe0000000) ||
		    ip->daddr == 0xffffffff)
			return 0;
		pp->src[0] = ip->saddr;
		pp->dst[0] = ip->daddr;
		pp->l4 = ip->protocol;
		l4 = (void *)ip + ip->ihl * 4;
		// Fragments after the first carry no ports.
		if (ip->frag_off & bpf_htons(0x1fff))
			frag = 1;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		if (!cfg->v6)
			return 0;
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > data_end)
			return 0;
		__builtin_memcpy(pp->src, &ip6->saddr, 16);
		__builtin_memcpy(pp->dst, &ip6->daddr, 16);
		pp->l4 = ip6->nexthdr;
		l4 = (void *)(ip6 + 1);
		// Link-scope traffic (neighbour discovery, MLD, router solicitations: to
		// ff00::/8 or fe80::/10) never crosses the gateway: netfilter's forward
		// chain never sees it, so neither do the rules here.
		__u8 d0 = ip6->daddr.in6_u.u6_addr8[0], d1 = ip6->daddr.in6_u.u6_addr8[1];
		if (d0 == 0xff || (d0 == 0xfe && (d1 & 0xc0) == 0x80))
			return 0;
		if (pp->l4 == IPPROTO_ICMPV6) {
			__u8 *type = l4;
			if ((void *)(type + 1) <= data_end && *type >= 133 && *type <= 137)
				return 0; // neighbour discovery: infrastructure
		}
	} else {
		return 0;
	}
	if (!frag && (pp->l4 == IPPROTO_TCP || pp->l4 == IPPROTO_UDP || pp->l4 == IPPROTO_SCTP)) {
		__u16 *ports = l4;
		if ((void *)(ports + 2) <= data_end) {
			pp->dport = bpf_ntohs(ports[1]);
			pp->has_port = 1;
		}
	}
	w.pos = start;
	w.n = end;
	bpf_loop(end - start, step, &w, 0);
	return w.drop;
}

SEC("xdp")
int fwbench_xdp(struct xdp_md *ctx)
{
	return filter((void *)(long)ctx->data, (void *)(long)ctx->data_end) ? XDP_DROP : XDP_PASS;
}

SEC("classifier")
int fwbench_tc(struct __sk_buff *skb)
{
	return filter((void *)(long)skb->data, (void *)(long)skb->data_end) ? TC_ACT_SHOT : TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
