//! Rendering: a [`RuleSet`] → the exact text each engine's batch tool applies.
//!
//! Every engine emits one atomic batch per tool (`nft -f`, `iptables-restore
//! --noflush`, `ipset restore`), a matching removal batch, the number of rules and
//! set elements the installer must read back, and the chain layout (rule roles in
//! order) used to map counters back to roles.
//!
//! Owns: the entry point [`render`] and the public names of what it produces.
//! Must not: hold any engine's syntax (each engine's file in the `engine` module does).

use crate::model::{Engine, EngineOptions, RuleSet};

pub use crate::engine::{ipt_chain, nft_chain, IPSET_PREFIX, NFT_FAMILIES, NFT_TABLE};
pub use crate::rendered::{ChainLayout, RenderError, Rendered, Settings};
pub use crate::tool::{Batch, Flavour, Tool};

/// Render a rule set for an engine: install and removal batches, expected counts and
/// the chain layout.
pub fn render(rs: &RuleSet, engine: Engine) -> Result<Rendered, RenderError> {
    render_with(rs, engine, &EngineOptions::default())
}

/// [`render`] with engine options; an option the engine does not take (an nft family
/// for an iptables engine) is refused rather than ignored.
pub fn render_with(
    rs: &RuleSet,
    engine: Engine,
    opts: &EngineOptions,
) -> Result<Rendered, RenderError> {
    if !opts.nft_family.is_default() && !engine.takes_nft_family() {
        return Err(RenderError::Invalid(format!(
            "nft family {} applies to engines nft and nft-set, not {engine}",
            opts.nft_family
        )));
    }
    crate::engine::backend(engine).render(rs, opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;
    use crate::models::{filler_addr, generate, Addressing, Model, Position};

    fn addressing(ip: Ip) -> Addressing {
        let n = match ip {
            Ip::V4 => 2,
            Ip::V6 => 1,
        };
        crate::models::test_addressing(ip, n)
    }

    fn model(model: Model, count: u32, position: Position) -> RuleSet {
        let spec = crate::models::test_spec(model, count, position, Ip::V4, Some(9000));
        generate(&spec, &addressing(Ip::V4)).unwrap()
    }

    const ALL: &[Engine] = Engine::ALL;
    const BPF: &[Engine] = &[
        Engine::Xdp,
        Engine::XdpMap,
        Engine::XdpGeneric,
        Engine::TcBpf,
    ];

    #[test]
    fn collapsed_set_has_exactly_count_elements() {
        let rs = model(Model::Linear, 1000, Position::Last);
        for engine in [Engine::NftSet, Engine::IpsetLegacy, Engine::IpsetNft] {
            let r = render(&rs, engine).unwrap();
            assert_eq!((r.expect_rules, r.expect_elements), (2, 1000), "{engine}");
            assert_eq!(r.layout[0].roles, [Role::Filler, Role::Match]);
        }
        let r = render(&rs, Engine::IpsetLegacy).unwrap();
        assert_eq!(r.install[0].tool, Tool::IpsetRestore);
        let adds = r.install[0]
            .text
            .lines()
            .filter(|l| l.starts_with("add "))
            .count();
        assert_eq!(adds, 1000);
        assert!(r.install[0].text.contains("hashsize 1024 maxelem 65536"));
        let r = render(&rs, Engine::NftSet).unwrap();
        let text = &r.install[0].text;
        let list = &text[text.find("elements = {").unwrap()..];
        let elements = list[..list.find('}').unwrap()].matches(" . ").count();
        assert_eq!(elements, 1000);
        assert!(r.install[0].text.contains("size 1000\n"));
    }

    #[test]
    fn linear_drop_puts_the_client_in_the_set_that_drops() {
        let rs = model(Model::LinearDrop, 1000, Position::Last);
        for engine in [Engine::NftSet, Engine::IpsetLegacy, Engine::IpsetNft] {
            let r = render(&rs, engine).unwrap();
            assert_eq!((r.expect_rules, r.expect_elements), (1, 1000), "{engine}");
            assert_eq!(r.layout[0].roles, [Role::Match], "{engine}");
        }
        let r = render(&rs, Engine::IpsetLegacy).unwrap();
        assert!(
            r.install[0].text.contains("udp:9000"),
            "{}",
            r.install[0].text
        );
        let r = render(&rs, Engine::IptablesLegacy).unwrap();
        assert_eq!(r.expect_rules, 1000);
    }

    #[test]
    fn layout_roles_and_expect_counts() {
        let rs = model(Model::Linear, 4, Position::Middle);
        use Role::{Filler as F, Match as M, Policy as P};
        for engine in [Engine::Nft, Engine::IptablesLegacy, Engine::IptablesNft] {
            let r = render(&rs, engine).unwrap();
            assert_eq!(r.layout.len(), 1);
            assert_eq!(r.layout[0].hook, Hook::FilterForward);
            assert_eq!(r.layout[0].roles, [F, F, M, F, F], "{engine}");
            assert_eq!((r.expect_rules, r.expect_elements), (5, 0));
        }
        for engine in [Engine::NftSet, Engine::IpsetLegacy, Engine::IpsetNft] {
            let r = render(&rs, engine).unwrap();
            assert_eq!(r.layout[0].roles, [F, M, F], "{engine}");
            assert_eq!((r.expect_rules, r.expect_elements), (3, 4));
        }
        // Seed 000 F=4: mangle before filter, the policy drop last, counted.
        let rs = model(Model::Seed000F4, 0, Position::Last);
        for &engine in ALL.iter().skip(1) {
            if BPF.contains(&engine) {
                let e = render(&rs, engine).unwrap_err().to_string();
                assert!(e.contains("(model seed000-f4)"), "{e}");
                continue;
            }
            let r = render(&rs, engine).unwrap();
            let hooks: Vec<Hook> = r.layout.iter().map(|c| c.hook).collect();
            assert_eq!(hooks, [Hook::ManglePrerouting, Hook::FilterForward]);
            assert_eq!(r.layout[1].roles, [M, M, M, M, P]);
            assert_eq!((r.expect_rules, r.expect_elements), (9, 0), "{engine}");
        }
    }

    #[test]
    fn engine_none_renders_nothing() {
        let rs = model(Model::Seed000F4, 0, Position::Last);
        let r = render(&rs, Engine::None).unwrap();
        assert!(r.install.is_empty() && r.remove.is_empty() && r.layout.is_empty());
        assert_eq!((r.expect_rules, r.expect_elements), (0, 0));
        assert_eq!(r.to_text(), "# expect 0 rules, 0 set elements\n");
    }

    #[test]
    fn empty_rule_set_installs_an_empty_table() {
        for &engine in ALL {
            let r = render(&RuleSet::empty(Ip::V4), engine).unwrap();
            assert_eq!((r.expect_rules, r.expect_elements), (0, 0), "{engine}");
            assert!(r.layout.is_empty());
        }
    }

    #[test]
    fn unsupported_combinations_say_what_to_use() {
        let rs = model(Model::StringBm, 2, Position::Last);
        for engine in [Engine::Nft, Engine::NftSet] {
            assert_eq!(
                render(&rs, engine).unwrap_err().to_string(),
                format!("engine {engine} cannot express string match (use iptables-legacy or iptables-nft)")
            );
        }
        let mut rs = RuleSet::empty(Ip::V4);
        rs.sets.push(SetDef {
            name: "blocked".into(),
            ip: Ip::V4,
            elements: vec![SetElem {
                addr: filler_addr(Ip::V4, 1),
                port: 53,
            }],
        });
        rs.rules.push(Rule {
            hook: Hook::FilterInput,
            m: Match {
                l4: Some(L4::Udp),
                set: Some("blocked".into()),
                ..Match::default()
            },
            action: Action::Drop,
            role: Role::Filler,
        });
        assert_eq!(
            render(&rs, Engine::IptablesNft).unwrap_err().to_string(),
            "engine iptables-nft cannot express sets (use nft-set or ipset)"
        );
        // Defined sets render for the engines that have sets, with the rule's protocol.
        let r = render(&rs, Engine::Nft).unwrap();
        assert!(r.install[0]
            .text
            .contains("ip saddr . udp dport @blocked counter drop"));
        assert_eq!((r.expect_rules, r.expect_elements), (1, 1));
        let r = render(&rs, Engine::IpsetNft).unwrap();
        assert!(r.install[0]
            .text
            .contains("add fwbench-blocked 192.0.2.1,udp:53\n"));
        assert_eq!(r.remove[1].text, "destroy fwbench-blocked\n");
    }

    #[test]
    fn invalid_rule_sets_are_refused() {
        let mut rs = RuleSet::empty(Ip::V4);
        rs.rules.push(Rule {
            hook: Hook::FilterForward,
            m: Match {
                l4: Some(L4::Icmpv6),
                ..Match::default()
            },
            action: Action::Accept,
            role: Role::Guard,
        });
        for &engine in ALL.iter().skip(1) {
            assert!(
                matches!(render(&rs, engine), Err(RenderError::Invalid(_))),
                "{engine}"
            );
        }
        rs.rules[0].m.l4 = Some(L4::Udp);
        rs.rules[0].action = Action::Notrack;
        assert!(render(&rs, Engine::Nft)
            .unwrap_err()
            .to_string()
            .contains("notrack needs raw"));
        rs.rules[0].action = Action::Accept;
        rs.rules[0].m.src = Some(Prefix::host(filler_addr(Ip::V6, 0)));
        assert!(render(&rs, Engine::Nft)
            .unwrap_err()
            .to_string()
            .contains("IPv4 rule set"));
    }

    #[test]
    fn nft_and_iptables_syntax() {
        let rs = model(Model::Linear, 1, Position::First);
        let r = render(&rs, Engine::Nft).unwrap();
        assert_eq!(
            r.install[0].text,
            "add table inet fwbench\ndelete table inet fwbench\ntable inet fwbench {\n  \
             chain forward {\n    type filter hook forward priority filter; policy accept;\n    \
             ip saddr 198.18.0.0/16 meta l4proto udp counter accept\n    \
             ip saddr 192.0.2.0 udp dport 1 counter drop\n  }\n}\n"
        );
        assert_eq!(r.remove[0].text, "delete table inet fwbench\n");
        let r = render(&rs, Engine::IptablesLegacy).unwrap();
        assert_eq!(
            r.install[0].tool,
            Tool::IptablesRestore {
                v6: false,
                flavour: Flavour::Legacy
            }
        );
        assert_eq!(
            r.install[0].text,
            "*filter\n:FWBENCH-FORWARD - [0:0]\n\
             -A FWBENCH-FORWARD -s 198.18.0.0/16 -p udp -j ACCEPT\n\
             -A FWBENCH-FORWARD -s 192.0.2.0/32 -p udp -m udp --dport 1 -j DROP\n\
             -I FORWARD 1 -j FWBENCH-FORWARD\nCOMMIT\n"
        );
        assert_eq!(
            r.remove[0].text,
            "*filter\n-D FORWARD -j FWBENCH-FORWARD\n-F FWBENCH-FORWARD\n-X FWBENCH-FORWARD\nCOMMIT\n"
        );
    }

    #[test]
    fn nft_family_ip_renders_ip_and_ip6_tables_and_says_so() {
        let ip = EngineOptions {
            nft_family: NftFamily::Ip,
            ..EngineOptions::default()
        };
        let rs = model(Model::Linear, 1, Position::First);
        let r = render_with(&rs, Engine::Nft, &ip).unwrap();
        assert!(r.install[0]
            .text
            .starts_with("add table ip fwbench\ndelete table ip fwbench\ntable ip fwbench {\n"));
        assert_eq!(r.remove[0].text, "delete table ip fwbench\n");
        assert_eq!(r.nft_family, NftFamily::Ip);
        assert_eq!(r.settings.table.as_deref(), Some("ip fwbench"));
        // The default is inet, named in the settings.
        let d = render(&rs, Engine::NftSet).unwrap();
        assert_eq!(d.settings.table.as_deref(), Some("inet fwbench"));
        assert_eq!(
            d.settings.to_line(),
            "table inet fwbench; hook forward; priority filter (0); counters per rule; \
             policy accept; sets ipv4_addr . inet_service, no flags (hash), size = elements"
        );
        assert!(d
            .to_text_with_settings()
            .starts_with("# settings: table inet fwbench;"));
        assert!(!d.to_text().contains("settings"));
        let mut v6 = model(Model::Linear, 1, Position::First);
        v6.ip = Ip::V6;
        v6.rules.clear();
        let r = render_with(&v6, Engine::NftSet, &ip).unwrap();
        assert_eq!(r.remove[0].text, "delete table ip6 fwbench\n");
        // Engines without nft tables refuse the option rather than ignore it.
        for engine in [Engine::None, Engine::IptablesLegacy, Engine::IpsetNft] {
            assert_eq!(
                render_with(&rs, engine, &ip).unwrap_err().to_string(),
                format!("nft family ip applies to engines nft and nft-set, not {engine}")
            );
        }
        let x = render(&rs, Engine::IptablesLegacy).unwrap();
        assert_eq!(x.settings.table.as_deref(), Some("filter (legacy)"));
        assert_eq!(
            x.settings.counters.as_deref(),
            Some("per rule (xtables always counts)")
        );
        let s = render(
            &model(Model::Linear, 3, Position::Last),
            Engine::IpsetLegacy,
        )
        .unwrap();
        assert!(s
            .settings
            .sets
            .unwrap()
            .contains("hash:ip,port family inet hashsize 1024"));
    }

    #[test]
    fn quarter_million_element_set() {
        let rs = model(Model::RawFiller, 250_000, Position::None);
        for engine in [Engine::NftSet, Engine::IpsetLegacy] {
            let r = render(&rs, engine).unwrap();
            assert_eq!(
                (r.expect_rules, r.expect_elements),
                (1, 250_000),
                "{engine}"
            );
        }
        let r = render(&rs, Engine::IpsetNft).unwrap();
        assert!(r.install[0]
            .text
            .contains("hashsize 262144 maxelem 250000 -exist"));
    }

    #[test]
    fn imported_rule_sets_render_as_is() {
        use crate::model::{ImportFormat, Imported};
        let imported = |format, text: &str| RuleSet {
            raw: Some(Imported {
                format,
                source: "f".into(),
                text: text.into(),
                rules: 3,
                elements: 2,
                rule_list: vec![],
                chains: vec![],
                notes: vec![],
                sets: None,
            }),
            ..RuleSet::empty(Ip::V6)
        };
        let nft = imported(ImportFormat::Nft, "add table inet fwbench\n");
        let r = render(&nft, Engine::NftSet).unwrap();
        assert_eq!(r.install[0].text, "add table inet fwbench\n");
        assert_eq!(r.install[0].tool, Tool::NftJson);
        assert_eq!((r.expect_rules, r.expect_elements), (3, 2));
        assert!(r.layout.is_empty());
        assert_eq!(
            render(&nft, Engine::IptablesNft).unwrap_err().to_string(),
            "an nft ruleset needs engine nft"
        );
        let ipt = "*filter\n:FWBENCH-FORWARD - [0:0]\n:FWBENCH-U-X - [0:0]\n\
                   -A FWBENCH-FORWARD -j FWBENCH-U-X\n-I FORWARD 1 -j FWBENCH-FORWARD\nCOMMIT\n";
        let ipt = imported(ImportFormat::IptablesSave, ipt);
        let r = render(&ipt, Engine::IpsetNft).unwrap();
        assert_eq!(
            r.install[0].tool,
            Tool::IptablesRestore {
                v6: true,
                flavour: Flavour::Nft
            }
        );
        assert_eq!(
            r.remove[0].text,
            "*filter\n-D FORWARD -j FWBENCH-FORWARD\n-F FWBENCH-FORWARD\n-F FWBENCH-U-X\n\
             -X FWBENCH-FORWARD\n-X FWBENCH-U-X\nCOMMIT\n"
        );
        assert_eq!(
            render(&ipt, Engine::Nft).unwrap_err().to_string(),
            "an iptables-save file needs engine iptables-legacy or iptables-nft"
        );
        assert!(render(&ipt, Engine::None).unwrap().install.is_empty());
        // With its ipsets: made before the rules, destroyed after them, for every
        // iptables engine.
        let mut with_sets = ipt.clone();
        if let Some(imp) = with_sets.raw.as_mut() {
            imp.sets = Some(crate::model::ImportedSets {
                source: "s.ipset".into(),
                text: "create fwbench-i-s hash:ip -exist\nflush fwbench-i-s\n".into(),
                names: vec![("s".into(), "fwbench-i-s".into())],
            });
        }
        for e in [
            Engine::IptablesLegacy,
            Engine::IptablesNft,
            Engine::IpsetLegacy,
        ] {
            let r = render(&with_sets, e).unwrap();
            let tools: Vec<Tool> = r.install.iter().chain(&r.remove).map(|b| b.tool).collect();
            assert_eq!(tools[0], Tool::IpsetRestore, "{e}");
            assert!(matches!(tools[1], Tool::IptablesRestore { .. }), "{e}");
            assert!(matches!(tools[2], Tool::IptablesRestore { .. }), "{e}");
            assert_eq!(
                r.remove.last().unwrap().text,
                "destroy fwbench-i-s\n",
                "{e}"
            );
            assert!(r
                .settings
                .sets
                .as_deref()
                .unwrap()
                .starts_with("1 ipsets of s.ipset"));
        }
    }

    #[test]
    fn nat_models_render_for_netfilter_engines_and_bpf_refuses() {
        use Role::{Filler as F, Match as M};
        let rs = model(Model::Snat, 2, Position::Last);
        let r = render(&rs, Engine::Nft).unwrap();
        let text = &r.install[0].text;
        assert!(
            text.contains("type nat hook postrouting priority srcnat; policy accept;"),
            "{text}"
        );
        assert!(
            text.contains("ip saddr 198.18.0.0/16 meta l4proto udp counter snat ip to 198.19.0.1"),
            "{text}"
        );
        assert_eq!(r.layout[0].hook, Hook::NatPostrouting);
        assert_eq!(r.layout[0].roles, [F, F, M]);
        let r = render(&rs, Engine::IptablesLegacy).unwrap();
        assert_eq!(
            r.install[0].text,
            "*nat\n:FWBENCH-SNAT - [0:0]\n\
             -A FWBENCH-SNAT -s 192.0.2.0/32 -p udp -m udp --dport 1 -j SNAT --to-source 198.19.0.1\n\
             -A FWBENCH-SNAT -s 192.0.2.1/32 -p udp -m udp --dport 1 -j SNAT --to-source 198.19.0.1\n\
             -A FWBENCH-SNAT -s 198.18.0.0/16 -p udp -j SNAT --to-source 198.19.0.1\n\
             -I POSTROUTING 1 -j FWBENCH-SNAT\nCOMMIT\n"
        );
        assert!(r.remove[0].text.contains("-D POSTROUTING -j FWBENCH-SNAT"));
        // The set engines collapse the NAT fillers into one set with the same verdict.
        for engine in [Engine::NftSet, Engine::IpsetLegacy, Engine::IpsetNft] {
            let r = render(&rs, engine).unwrap();
            assert_eq!((r.expect_rules, r.expect_elements), (2, 2), "{engine}");
        }
        let r = render(
            &model(Model::Masquerade, 0, Position::First),
            Engine::IptablesNft,
        )
        .unwrap();
        assert!(r.install[0]
            .text
            .contains("-s 198.18.0.0/16 -p udp -j MASQUERADE"));
        let dnat = model(Model::Dnat, 1, Position::First);
        let r = render(&dnat, Engine::Nft).unwrap();
        assert!(r.install[0].text.contains(
            "type nat hook prerouting priority dstnat; policy accept;\n    \
             ip daddr 198.18.0.1 udp dport 9000 counter dnat ip to 198.19.0.2:9000\n"
        ));
        let r = render(&dnat, Engine::IptablesLegacy).unwrap();
        assert!(r.install[0].text.contains(
            "-A FWBENCH-DNAT -d 198.18.0.1/32 -p udp -m udp --dport 9000 -j DNAT --to-destination 198.19.0.2:9000\n"
        ));
        assert!(r.install[0]
            .text
            .contains("-I PREROUTING 1 -j FWBENCH-DNAT"));
        for &engine in BPF {
            let e = render(&dnat, engine).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("engine {engine} cannot express NAT")),
                "{e}"
            );
        }
        // A NAT verdict outside its NAT chain is refused for every engine.
        let mut bad = dnat.clone();
        bad.rules[0].hook = Hook::NatPostrouting;
        for &engine in ALL.iter().skip(1) {
            assert!(render(&bad, engine).is_err(), "{engine}");
        }
        assert_eq!(
            render(&bad, Engine::Nft).unwrap_err().to_string(),
            "dnat needs nat prerouting, not NatPostrouting"
        );
    }

    #[test]
    fn flowtable_is_nft_only_and_its_devices_are_resolved_where_applied() {
        let rs = model(Model::Flowtable, 1, Position::Last);
        let r = render(&rs, Engine::Nft).unwrap();
        let text = &r.install[0].text;
        assert!(
            text.contains(
                "  flowtable ft {\n    hook ingress priority 0; \
                 devices = { @devices-towards 198.18.1.1 198.19.0.2@ };\n  }\n"
            ),
            "{text}"
        );
        assert!(text.contains("ip saddr 198.18.0.0/16 meta l4proto udp counter flow add @ft"));
        for engine in [Engine::IptablesLegacy, Engine::IpsetNft] {
            assert_eq!(
                render(&rs, engine).unwrap_err().to_string(),
                format!("engine {engine} cannot express a flowtable (model flowtable) (use nft or nft-set)")
            );
        }
        assert!(render(&rs, Engine::Xdp)
            .unwrap_err()
            .to_string()
            .contains("cannot express a flowtable"));
        let said =
            "/dev/stdin:2:13-14: Error: Could not process rule: No such file or directory\n  \
                    flowtable ft {\n            ^^";
        assert_eq!(
            crate::engine::flowtable_unavailable(said),
            "flowtable unavailable in this kernel (nft could not create one: Error: Could not \
             process rule: No such file or directory; flowtables need a kernel built with \
             NF_FLOW_TABLE and NFT_FLOW_OFFLOAD)"
        );
    }
}
