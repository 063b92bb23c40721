// fwbench's AF_XDP sink: UDP packets to the sink's port are redirected to the AF_XDP
// socket of their receive queue (XSKS, filled by crates/traffic/src/xsk/sink.rs);
// everything else (ARP, neighbour discovery, other ports) goes on to the kernel.
// A queue without a socket passes its packets on as well (the bpf_redirect_map
// fallback), so nothing is lost silently.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 64);
} XSKS SEC(".maps");

// [0]: the UDP destination port to take (host order); 0 takes every UDP packet.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} PORT SEC(".maps");

SEC("xdp")
int fwbench_xsk(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct udphdr *udp;
	__u32 zero = 0;
	__u32 *port;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->ihl < 5)
			return XDP_PASS;
		// Fragments other than the first carry no UDP header.
		if (ip->frag_off & bpf_htons(0x1fff))
			return XDP_PASS;
		udp = (void *)ip + ip->ihl * 4;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return XDP_PASS;
		udp = (void *)(ip6 + 1);
	} else {
		return XDP_PASS;
	}
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
	port = bpf_map_lookup_elem(&PORT, &zero);
	if (!port || (*port != 0 && bpf_ntohs(udp->dest) != *port))
		return XDP_PASS;
	return bpf_redirect_map(&XSKS, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
