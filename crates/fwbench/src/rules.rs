//! From trial parameters to the rendered rule set the gateway installs: the testbed's
//! addresses, the model generator, the import file, the engine's renderer. Also the
//! pre-flight checks run before anything is built (bad input → exit 2, gateway unchanged).

use crate::params::topology::chain_of;
use crate::params::topology::Topology;
use crate::params::workload::Workload;
use crate::params::TrialParams;
use crate::testbed::addr;
use firewall::install;
use firewall::models::{Addressing, Model, ModelSpec};
use firewall::render::{Rendered, Tool};
use firewall::{Engine, Ip, Prefix, Request};
use proto::Family;

/// The testbed's addresses for `n` clients.
pub fn addressing(family: Family, n: u32) -> Addressing {
    // INVARIANT: literal addresses.
    let p = |a: &str, len| Prefix {
        addr: a.parse().expect("literal address"),
        len,
    };
    let (client_net, server_net) = match family {
        Family::V4 => (p("198.18.0.0", 16), p("198.19.0.0", 16)),
        Family::V6 => (p("2001:2:0:1::", 64), p("2001:2:0:2::", 64)),
    };
    Addressing {
        clients: (1..=n).map(|i| addr::client(family, i)).collect(),
        client_net,
        server: addr::server(family),
        server_net,
    }
}

/// The rule request of a trial (`None` for engine none). Errors are bad input.
pub fn request(p: &TrialParams) -> Result<Option<Request>, String> {
    if p.engine == Engine::None {
        return Ok(None);
    }
    if p.topology == Topology::Direct {
        return Err(format!(
            "engine {} needs a gateway, but topology direct has none (use forward or input)",
            p.engine
        ));
    }
    let ip = Ip::from(p.family);
    let mut req = Request {
        engine: p.engine,
        ip,
        spec: None,
        addressing: None,
        imported: None,
        nft_family: p.nft_family,
    };
    if p.model == Model::Import {
        let path = p.import.as_deref().ok_or(
            "model import needs --import FILE (an `nft list ruleset` or `iptables-save` file)",
        )?;
        req.imported = Some(import(path, ip)?);
    } else {
        req.spec = Some(ModelSpec {
            model: p.model,
            count: p.rules,
            position: p.position,
            chain: chain_of(p.topology),
            l4: p.proto.into(),
            ip,
            one_way: matches!(p.workload, Workload::Flood | Workload::Flow),
        });
        req.addressing = Some(addressing(p.family, p.clients));
    }
    Ok(Some(req))
}

/// Read and rewrite a user's ruleset file. nft files are parsed by nft itself, in a
/// scratch network namespace ([`crate::nftload`]); only its read-back is installed.
pub fn import(path: &str, ip: Ip) -> Result<firewall::Imported, String> {
    use firewall::import;
    let text = crate::nftload::read_bounded(path)?;
    // Anything that is not iptables-save text is nft's to judge.
    let imported = match import::detect(&text) {
        Some(firewall::ImportFormat::IptablesSave) => import::import(path, &text, ip),
        _ => {
            import::check_nft_text(path, &text).map_err(|e| e.to_string())?;
            let loaded = crate::nftload::load_nft(path, &text)?;
            import::refused_messages(path, &loaded.messages).map_err(|e| e.to_string())?;
            import::import_nft_listing(path, &loaded.json, &loaded.listing, ip)
        }
    };
    imported.map_err(|e| e.to_string())
}

/// Build and render the rule set of a trial (`None` for engine none).
pub fn build(p: &TrialParams) -> Result<Option<Rendered>, String> {
    request(p)?
        .map(|r| r.render().map_err(|e| e.to_string()))
        .transpose()
}

/// `fwbench rules render`: the batches as the user would type them and, for an
/// imported file, what fwbench changed, the chain mapping (the user's name next to
/// fwbench's) and every rule with its position (`--aim CHAIN:N`).
pub fn render_text(p: &TrialParams) -> Result<Option<String>, String> {
    let Some(req) = request(p)? else {
        return Ok(None);
    };
    let r = req.render().map_err(|e| e.to_string())?;
    let mut out = r.to_text_with_settings();
    if let Some(imp) = &req.imported {
        out += &import_table(imp);
    }
    Ok(Some(out))
}

/// The chain mapping, notes and rule list of an import, as `#` comment lines.
pub fn import_table(imp: &firewall::Imported) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for n in &imp.notes {
        let _ = writeln!(out, "# note: {n}");
    }
    if !imp.chains.is_empty() {
        let w = imp
            .chains
            .iter()
            .map(|(u, _)| u.len())
            .max()
            .unwrap_or(0)
            .max(10);
        let _ = writeln!(out, "# chains:\n#   {:<w$}  fwbench's chain", "your chain");
        for (user, ours) in &imp.chains {
            let _ = writeln!(out, "#   {user:<w$}  {ours}");
        }
    }
    let _ = writeln!(out, "# rules (aim at one with --aim N or --aim CHAIN:N):");
    for (i, r) in imp.rule_list.iter().enumerate() {
        let _ = writeln!(out, "#   {:>4}  {:<24} {}", i + 1, r.place(), r.text);
    }
    out
}

/// Before any testbed exists: the engine's tools are installed, and an imported
/// iptables-save file passes the engine's own check (`--test`), run in a scratch
/// network namespace on fwbench's rewritten text (an nft file was already loaded by
/// nft itself in one). The user's file is never run in the host's namespace.
pub fn preflight(p: &TrialParams, r: &Rendered) -> Result<(), String> {
    install::check_tools(r).map_err(|e| e.to_string())?;
    if let (Some(path), Some(raw)) = (&p.import, r.install.first()) {
        if let Tool::IptablesRestore { .. } = raw.tool {
            let argv = raw.tool.argv();
            let mut check: Vec<&str> = argv.clone();
            check.push("--test");
            crate::nftload::check_in_scratch(&check, &raw.text)
                .map_err(|e| format!("--import {path}: {} rejects it:\n{e}", argv[0]))?;
        }
    }
    Ok(())
}
