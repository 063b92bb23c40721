//! From trial parameters to the rendered rule set the gateway installs: the testbed's
//! addresses, the model generator, the import file, the engine's renderer. Also the
//! pre-flight checks run before anything is built (bad input → exit 2, gateway unchanged).

use crate::params::topology::chain_of;
use crate::params::topology::Topology;
use crate::params::workload::Workload;
use crate::params::TrialParams;
use crate::process::{Cmd, Failure};
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
        let text = std::fs::read_to_string(path).map_err(|e| format!("--import {path}: {e}"))?;
        req.imported = Some(firewall::import::import(path, &text, ip).map_err(|e| e.to_string())?);
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

/// Build and render the rule set of a trial (`None` for engine none).
pub fn build(p: &TrialParams) -> Result<Option<Rendered>, String> {
    request(p)?
        .map(|r| r.render().map_err(|e| e.to_string()))
        .transpose()
}

/// Before any testbed exists: the engine's tools are installed, and an import file
/// passes the engine's own check (its error names the file and line).
pub fn preflight(p: &TrialParams, r: &Rendered) -> Result<(), String> {
    install::check_tools(r).map_err(|e| e.to_string())?;
    if let (Some(path), Some(raw)) = (&p.import, r.install.first()) {
        // Check mode of the same program that will apply the batch.
        let prog = raw.tool.argv()[0].to_string();
        let check: Vec<String> = match raw.tool {
            Tool::Nft => vec![prog, "-c".into(), "-f".into(), path.clone()],
            Tool::IptablesRestore { .. } => vec![prog, "--test".into(), path.clone()],
            Tool::IpsetRestore | Tool::Bpf => vec![],
        };
        if !check.is_empty() {
            // Check mode parses and validates only; it changes no firewall state.
            let args: Vec<&str> = check[1..].iter().map(String::as_str).collect();
            let o = Cmd::new(&check[0], &args)
                .finish()
                .map_err(|e| match e.failure {
                    Failure::Spawn(e) | Failure::Wait(e) => format!("running {}: {e}", check[0]),
                    _ => e.to_string(),
                })?;
            if !o.success() {
                return Err(format!(
                    "--import {path}: {} rejects it:\n{}",
                    check[0],
                    o.stderr.trim()
                ));
            }
        }
    }
    Ok(())
}
