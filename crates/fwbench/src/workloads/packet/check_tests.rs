use super::*;
use crate::plan::build::test_params;

/// Flows, batch and `--dsts` outside 1..max are refused naming the value and the
/// range, word for word; their bounds pass.
#[test]
fn counts_outside_one_to_their_maximum_are_refused_by_name() {
    let refused = |set: &dyn Fn(&mut PacketParams)| {
        let mut p = test_params(Workload::Flood, &[]);
        set(p.kind.packet_mut().unwrap());
        check(&p, &PacketRate).err().map(|c| c.0)
    };
    let max_flows = traffic::udp::MAX_FLOWS;
    let max_batch = traffic::udp::MAX_BATCH;
    let max_dsts = crate::testbed::addr::MAX_DSTS;
    for (set, want) in [
        (
            &(|k: &mut PacketParams| k.flows = 0) as &dyn Fn(&mut PacketParams),
            format!("flows must be 1..{max_flows}, not 0"),
        ),
        (
            &|k: &mut PacketParams| k.flows = max_flows + 1,
            format!("flows must be 1..{max_flows}, not {}", max_flows + 1),
        ),
        (
            &|k: &mut PacketParams| k.batch = 0,
            format!("batch must be 1..{max_batch}, not 0"),
        ),
        (
            &|k: &mut PacketParams| k.batch = max_batch + 1,
            format!("batch must be 1..{max_batch}, not {}", max_batch + 1),
        ),
        (
            &|k: &mut PacketParams| k.dsts = 0,
            format!("--dsts must be 1..{max_dsts}, not 0"),
        ),
        (
            &|k: &mut PacketParams| {
                k.flows = max_flows;
                k.dsts = max_dsts + 1;
            },
            format!("--dsts must be 1..{max_dsts}, not {}", max_dsts + 1),
        ),
    ] {
        assert_eq!(refused(set), Some(want));
    }
    let at_bounds = |k: &mut PacketParams| {
        (k.flows, k.batch, k.dsts) = (max_flows, max_batch, max_dsts);
    };
    assert_eq!(refused(&at_bounds), None);
}
