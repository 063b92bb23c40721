//! A role spread over several hosts (a testbed file's `[[client]]` or `[[server]]`
//! tables): how one trial's clients, flows, sender threads and rate are shared out, so
//! that the controller, the testbed and the merged results agree on which host sent
//! what. Pure arithmetic, no I/O.
//!
//! * **Flows**: in contiguous blocks, in host order, as even as whole flows allow
//!   (host `h` of `H` gets ⌊F/H⌋ flows, one more for the first F mod H hosts); a flow
//!   keeps its number in the trial (its source port and payload stamp), so the sink's
//!   per-flow sequence checks see every flow once.
//! * **Client addresses**: client `i` of the trial (1-based) is on host (i−1) mod H, as
//!   that host's client ⌈i/H⌉; a host's flows send from its own share of them.
//! * **Sender threads** like flows (at least one per host); the **rate** in proportion
//!   to each host's flows, so every flow is paced alike.
//! * **Sink hosts**: flow `n` goes to server host n mod S (its address), each sink
//!   counting the flows that reach it; a sink's threads are shared out like a
//!   sender's.

/// `total` split over `n` parts as evenly as whole units allow: part `i`'s share.
pub fn even(total: u32, n: u32, i: u32) -> u32 {
    let n = n.max(1);
    total / n + u32::from(i < total % n)
}

/// Client `i` (1-based) of a trial whose client role has `hosts` hosts: (host,
/// that host's client number, 1-based).
pub fn client_host(i: u32, hosts: u32) -> (u32, u32) {
    let hosts = hosts.max(1);
    let k = i.max(1) - 1;
    (k % hosts, k / hosts + 1)
}

/// What one client host sends of a trial.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientShare {
    pub host: u32,
    /// Its block of the trial's flows: `first_flow .. first_flow + flows`.
    pub first_flow: u32,
    pub flows: u32,
    /// Its client addresses in use (its clients 1..=sources).
    pub sources: u32,
    pub threads: u32,
    /// Its packets/s (`None`: as fast as it can).
    pub pps: Option<f64>,
}

/// The trial's `flows` flows, `clients` clients, `threads` sender threads and `pps`
/// packets/s (total) shared out over `hosts` client hosts. Every host gets at least one
/// flow when `flows >= hosts` (the caller checks).
pub fn client_shares(
    flows: u32,
    clients: u32,
    threads: u32,
    pps: Option<f64>,
    hosts: u32,
) -> Vec<ClientShare> {
    let hosts = hosts.max(1);
    let mut first_flow = 0;
    (0..hosts)
        .map(|h| {
            let n = even(flows, hosts, h);
            let share = ClientShare {
                host: h,
                first_flow,
                flows: n,
                sources: even(clients, hosts, h).min(n).max(1),
                threads: even(threads, hosts, h).clamp(1, n.max(1)),
                pps: pps.map(|p| p * f64::from(n) / f64::from(flows.max(1))),
            };
            first_flow += n;
            share
        })
        .collect()
}

/// The client host that sends flow `flow` (its block holds it).
pub fn host_of_flow(shares: &[ClientShare], flow: u32) -> u32 {
    shares
        .iter()
        .find(|s| (s.first_flow..s.first_flow + s.flows).contains(&flow))
        .map_or(0, |s| s.host)
}

/// The server host flow `flow` goes to.
pub fn server_of_flow(flow: u32, servers: u32) -> u32 {
    flow % servers.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_clients_threads_and_rate_over_three_hosts() {
        let s = client_shares(10, 5, 4, Some(1000.0), 3);
        let rows: Vec<(u32, u32, u32, u32)> = s
            .iter()
            .map(|c| (c.first_flow, c.flows, c.sources, c.threads))
            .collect();
        assert_eq!(rows, [(0, 4, 2, 2), (4, 3, 2, 1), (7, 3, 1, 1)]);
        // Every flow once, the rate in full, each flow at the same rate.
        assert_eq!(s.iter().map(|c| c.flows).sum::<u32>(), 10);
        let pps: Vec<f64> = s.iter().map(|c| c.pps.unwrap()).collect();
        assert!((pps.iter().sum::<f64>() - 1000.0).abs() < 1e-9);
        assert!((pps[0] / 4.0 - pps[1] / 3.0).abs() < 1e-9);
        assert_eq!(
            (0..10).map(|f| host_of_flow(&s, f)).collect::<Vec<_>>(),
            [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
        );
        // One host: the trial unchanged.
        assert_eq!(
            client_shares(10, 5, 4, None, 1),
            [ClientShare {
                host: 0,
                first_flow: 0,
                flows: 10,
                sources: 5,
                threads: 4,
                pps: None
            }]
        );
        // Fewer clients than hosts: each host still sends from one of its own.
        assert!(client_shares(4, 1, 1, None, 2)
            .iter()
            .all(|c| c.sources == 1));
    }

    #[test]
    fn the_trials_clients_round_robin_over_the_hosts() {
        let got: Vec<(u32, u32)> = (1..=5).map(|i| client_host(i, 2)).collect();
        assert_eq!(got, [(0, 1), (1, 1), (0, 2), (1, 2), (0, 3)]);
        // A host's share of n clients is exactly the clients placed on it.
        for n in 0..9 {
            for h in 0..3 {
                let placed = (1..=n).filter(|&i| client_host(i, 3).0 == h).count() as u32;
                assert_eq!(placed, even(n, 3, h));
            }
        }
        assert_eq!(client_host(7, 1), (0, 7));
        assert_eq!(
            (0..5).map(|f| server_of_flow(f, 2)).collect::<Vec<_>>(),
            [0, 1, 0, 1, 0]
        );
    }
}
