//! Snapshot tests: every engine × model (and a few variants and imported files)
//! rendered, compared with `tests/snapshots/<engine>__<case>.txt`.
//!
//! A snapshot holds the rule set's description, the dry-run text
//! ([`Rendered::to_text`]), the removal batches and the chain layout; a combination
//! the engine cannot express holds the error message instead.
//! `UPDATE_SNAPSHOTS=1 cargo test -p firewall --test snapshots` rewrites them.
//! The nft engines with table family ip (`ip`/`ip6` tables) have their own cases,
//! `<engine>__family-ip__<case>.txt`, for a few models.

use firewall::import;
use firewall::models::{self, Addressing, Chain, Model, ModelSpec, Position};
use firewall::render::{self, Rendered};
use firewall::{Engine, EngineOptions, Ip, NftFamily, Prefix, RuleSet, L4};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

const ENGINES: &[Engine] = Engine::ALL;

/// The testbed's addresses for two clients.
fn addressing(ip: Ip) -> Addressing {
    let a = |s: &str| -> IpAddr { s.parse().expect("literal address") };
    let p = |s: &str, len| Prefix { addr: a(s), len };
    match ip {
        Ip::V4 => Addressing {
            clients: vec![a("198.18.1.1"), a("198.18.1.2")],
            client_net: p("198.18.0.0", 16),
            server: a("198.19.0.2"),
            server_net: p("198.19.0.0", 16),
            gateway_client: Some(a("198.18.0.1")),
            gateway_server: Some(a("198.19.0.1")),
        },
        Ip::V6 => Addressing {
            clients: vec![a("2001:2:0:1::c:1"), a("2001:2:0:1::c:2")],
            client_net: p("2001:2:0:1::", 64),
            server: a("2001:2:0:2::2"),
            server_net: p("2001:2:0:2::", 64),
            gateway_client: Some(a("2001:2:0:1::1")),
            gateway_server: Some(a("2001:2:0:2::1")),
        },
    }
}

/// The base case: count 3, udp, forward, IPv4, match last.
fn spec(model: Model) -> ModelSpec {
    ModelSpec {
        model,
        count: 3,
        position: Position::Last,
        chain: Chain::Forward,
        l4: L4::Udp,
        ip: Ip::V4,
        one_way: false,
        dport: Some(9000),
        nat_to: None,
    }
}

/// Changes to the base case.
fn input(s: &mut ModelSpec) {
    s.chain = Chain::Input;
}

fn v6(s: &mut ModelSpec) {
    s.ip = Ip::V6;
}

fn input_v6(s: &mut ModelSpec) {
    input(s);
    v6(s);
}

/// (case name, rule set) of every snapshot case.
fn cases() -> Vec<(String, RuleSet)> {
    let gen = |s: &ModelSpec| models::generate(s, &addressing(s.ip)).expect("model generates");
    let mut out = vec![];
    for model in Model::ALL.into_iter().filter(|m| *m != Model::Import) {
        out.push((model.to_string(), gen(&spec(model))));
    }
    // (case, model, change to the base case)
    type Change = fn(&mut ModelSpec);
    let variants: [(&str, Model, Change); 16] = [
        ("linear-first", Model::Linear, |s| {
            s.position = Position::First
        }),
        ("linear-middle", Model::Linear, |s| {
            s.position = Position::Middle
        }),
        ("linear-none", Model::Linear, |s| {
            s.position = Position::None
        }),
        ("linear-v6", Model::Linear, v6),
        ("linear-tcp-input", Model::Linear, |s| {
            s.l4 = L4::Tcp;
            s.chain = Chain::Input;
        }),
        ("seed000-f2-input", Model::Seed000F2, input),
        ("seed000-f2-v6-input", Model::Seed000F2, input_v6),
        ("seed000-f2-v6", Model::Seed000F2, v6),
        ("seed000-f4-input", Model::Seed000F4, input),
        ("seed000-f4-v6", Model::Seed000F4, v6),
        ("notrack-v6", Model::Notrack, v6),
        ("notrack-input", Model::Notrack, input),
        ("raw-filler-v6-sctp", Model::RawFiller, |s| {
            s.ip = Ip::V6;
            s.l4 = L4::Sctp;
        }),
        ("hashlimit-v6", Model::Hashlimit, v6),
        ("hashlimit-input", Model::Hashlimit, input),
        ("string-kmp-input", Model::StringKmp, input),
    ];
    for (name, model, change) in variants {
        let mut s = spec(model);
        change(&mut s);
        out.push((name.to_string(), gen(&s)));
    }
    for (name, file) in [
        ("import-iptables", "iptables-save.txt"),
        ("import-nft", "nft-ruleset.nft"),
    ] {
        let path = dir("fixtures").join(file);
        let text = std::fs::read_to_string(&path).expect("fixture");
        let imported = if file.ends_with(".nft") {
            // What nft read back from a scratch namespace the fixture was loaded into.
            let read = |f: &str| std::fs::read_to_string(dir("fixtures").join(f)).expect("fixture");
            import::import_nft_listing(
                file,
                &read("nft-listing.json"),
                &read("nft-listing.txt"),
                Ip::V4,
            )
        } else {
            import::import(file, &text, Ip::V4)
        }
        .expect("fixture imports");
        let rs = RuleSet {
            description: format!("imported from {file}"),
            raw: Some(imported),
            ..RuleSet::empty(Ip::V4)
        };
        out.push((name.to_string(), rs));
    }
    out
}

/// (case name, rule set) of the family-ip snapshots of the nft engines.
fn family_ip_cases() -> Vec<(String, RuleSet)> {
    let gen = |s: &ModelSpec| models::generate(s, &addressing(s.ip)).expect("model generates");
    let mut out = vec![];
    for (name, model, ip) in [
        ("linear", Model::Linear, Ip::V4),
        ("linear-v6", Model::Linear, Ip::V6),
        ("seed000-f4", Model::Seed000F4, Ip::V4),
        ("seed000-f4-v6", Model::Seed000F4, Ip::V6),
        ("hashlimit-v6", Model::Hashlimit, Ip::V6),
    ] {
        let mut s = spec(model);
        s.ip = ip;
        out.push((name.to_string(), gen(&s)));
    }
    out
}

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

/// What a snapshot file holds.
/// With `settings`, the dry-run text starts with the settings line (`rules render`).
fn snapshot(rs: &RuleSet, r: &Result<Rendered, render::RenderError>, settings: bool) -> String {
    let mut s = format!("# rule set: {}\n", rs.description);
    match r {
        Err(e) => s += &format!("# error: {e}\n"),
        Ok(r) if settings => s += &r.to_text_with_settings(),
        Ok(r) => s += &r.to_text(),
    }
    if let Ok(r) = r {
        {
            s += "# removal:\n";
            for b in &r.remove {
                s += &format!("# {} <<'EOF'\n{}EOF\n", b.tool.argv().join(" "), b.text);
            }
            for c in &r.layout {
                let roles: Vec<String> = c
                    .roles
                    .iter()
                    .map(|r| format!("{r:?}").to_lowercase())
                    .collect();
                s += &format!("# layout {:?}: {}\n", c.hook, roles.join(" "));
            }
        }
    }
    s
}

/// Every dotted quad in a text must be a benchmark, documentation or mask address.
fn check_addresses(name: &str, text: &str) {
    for word in text.split(|c: char| !(c.is_ascii_digit() || c == '.')) {
        let parts: Vec<&str> = word.split('.').collect();
        if parts.len() != 4 || parts.iter().any(|p| p.parse::<u8>().is_err()) {
            continue;
        }
        let o: Vec<u8> = parts.iter().map(|p| p.parse().unwrap_or(0)).collect();
        let ok = matches!(
            o[..],
            [198, 18 | 19, _, _]
                | [192, 0, 2, _]
                | [198, 51, 100, _]
                | [203, 0, 113, _]
                | [255, ..]
        );
        assert!(ok, "{name}: address {word} outside the allowed ranges");
    }
}

#[test]
fn every_engine_and_model_matches_its_snapshot() {
    let update = std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
    let snapdir = dir("snapshots");
    let mut expected_files = vec![];
    let mut failures = vec![];
    let ip = EngineOptions {
        nft_family: NftFamily::Ip,
        ..EngineOptions::default()
    };
    let default_family = cases().into_iter().flat_map(|(case, rs)| {
        ENGINES.iter().map(move |&engine| {
            let got = snapshot(&rs, &render::render(&rs, engine), false);
            (format!("{engine}__{case}.txt"), got)
        })
    });
    let family_ip = family_ip_cases().into_iter().flat_map(|(case, rs)| {
        [Engine::Nft, Engine::NftSet].map(|engine| {
            let got = snapshot(&rs, &render::render_with(&rs, engine, &ip), true);
            (format!("{engine}__family-ip__{case}.txt"), got)
        })
    });
    for (file, got) in default_family.chain(family_ip) {
        {
            check_addresses(&file, &got);
            let path = snapdir.join(&file);
            expected_files.push(file.clone());
            if update {
                std::fs::write(&path, &got).expect("write snapshot");
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(want) if want == got => {}
                Ok(want) => {
                    let line = want.lines().zip(got.lines()).position(|(a, b)| a != b);
                    let n = line.unwrap_or(want.lines().count().min(got.lines().count()));
                    failures.push(format!(
                        "{file}: differs at line {}:\n  want: {:?}\n  got:  {:?}",
                        n + 1,
                        want.lines().nth(n).unwrap_or("<end>"),
                        got.lines().nth(n).unwrap_or("<end>")
                    ));
                }
                Err(e) => failures.push(format!("{file}: {e} (run with UPDATE_SNAPSHOTS=1)")),
            }
        }
    }
    // Snapshots of cases that no longer exist.
    for entry in std::fs::read_dir(&snapdir).expect("snapshot dir") {
        let name = entry
            .expect("dir entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if !expected_files.contains(&name) {
            failures.push(format!("{name}: stale snapshot (no such case)"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} snapshot(s) differ (UPDATE_SNAPSHOTS=1 rewrites them after review):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
