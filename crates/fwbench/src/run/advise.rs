//! `fwbench rules advise --import FILE`: the rewrites `firewall::advise` proposes for
//! a user's ruleset, each with its reason, proven on probe packets; the optimised
//! ruleset written in the input's own format (plus its ipsets) with `--out`.
//!
//! Owns: the command's arguments, reading the file (through `limits`), the summary
//! (text or `-J`) and writing the output files. Must not: analyse anything itself or
//! touch firewall state (the file is never loaded on this host).

use crate::error::usage;
use anyhow::{Context, Result};
use clap::Args;
use firewall::advise::{Advice, AdviseError};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct AdviseArgs {
    /// The ruleset: `iptables-save` output (`iptables-save -c` adds the live box's
    /// counters, which move hot rules earlier where that is safe) or an nft ruleset
    /// (`nft list ruleset`)
    #[arg(long, value_name = "FILE")]
    pub import: PathBuf,
    /// Write the optimised ruleset to FILE (for `iptables-restore`) and the sets it
    /// uses to FILE.ipset (for `ipset restore`, first); nothing is written when no
    /// safe rewrite exists
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Format of the files --out writes: `iptables` (the input's own, with its
    /// ipsets) or `nft` (FILE: the optimised ruleset, FILE.orig.nft: the original,
    /// both as nft with anonymous sets, to measure them with one engine:
    /// `fwbench flood --engine nft --import FILE`)
    #[arg(long = "as", value_name = "FORMAT", default_value = "iptables", value_parser = ["iptables", "nft"])]
    pub format: String,
    /// Print the summary as JSON
    #[arg(long, short = 'J')]
    pub json: bool,
    /// Move hot rules by the packets each rule counted in a measured run of this
    /// ruleset instead of the file's own counters: a results database (every trial
    /// of the run that imported a ruleset, summed; the rules' texts must be this
    /// file's)
    #[arg(long, value_name = "DB")]
    pub counters_from: Option<PathBuf>,
    /// The run of --counters-from (default: its last run that imported a ruleset)
    #[arg(long, value_name = "N", requires = "counters_from")]
    pub run: Option<i64>,
    /// Measure both rulesets on a testbed (through --engine): UDP floods at the
    /// highest rate to --dport, the two rulesets interleaved --repeat
    /// times; prints the time per packet of each and the saving with its 95 % CI.
    /// The proof on the testbed (--verify-on-testbed) runs first
    #[arg(long, requires_all = ["testbed", "dport"])]
    pub measure: bool,
    /// Prove the rewrite on the testbed too: each ruleset installed in turn on its
    /// gateway (engine nft, every address mapped into 198.18.0.0/15 or 2001:2::/48,
    /// prefixes and order kept), every probe class sent (3 packets each) and counted
    /// after the ruleset; a class that fares differently in the two rulesets, or
    /// otherwise than the model says, is a refusal (exit 1) naming its rule
    #[arg(long, requires = "testbed")]
    pub verify_on_testbed: bool,
    /// Testbed for --measure and --verify-on-testbed (`fwbench testbed up --name NAME
    /// --topology input`; topology forward proves the FORWARD chains)
    #[arg(long, value_name = "NAME")]
    pub testbed: Option<String>,
    /// Destination port of --measure's floods: one the ruleset accepts, after the rules
    /// to measure (the hot rule)
    #[arg(long, value_name = "PORT")]
    pub dport: Option<u16>,
    /// Store --measure's floods in this results database, like any trial (each flood
    /// one run; the two rulesets differ in the `import` axis: original.nft and
    /// optimised.nft, or original.rules and optimised.rules), so `fwbench report FILE` shows both; default: not stored
    #[arg(long, value_name = "FILE", requires = "measure")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub tags: crate::run::tags::TagArgs,
    /// Floods per ruleset for --measure
    #[arg(long, default_value = "3", value_parser = clap::value_parser!(u32).range(2..=100))]
    pub repeat: u32,
    /// Engine of --measure's floods: nft (both rulesets as the nft files --as nft
    /// writes) or, for an iptables-save file, iptables-legacy or iptables-nft (the file
    /// as it is and the optimised one with its ipsets, loaded by the trial's
    /// --import and --import-ipset)
    #[arg(long, default_value = "nft", value_parser = ["nft", "iptables-legacy", "iptables-nft"], requires = "measure")]
    pub engine: String,
    /// Seconds per flood for --measure
    #[arg(long, short = 't', default_value = "2", value_parser = clap::value_parser!(u32).range(1..=600))]
    pub time: u32,
}

/// What `--measure` found: ns per packet (1 / received pps at the highest rate) of
/// each flood, per ruleset, whether fwbench's own sender or sink limited it, and the
/// saving (original − optimised) with its 95 % CI ([`report::advise::Saving`]: a side
/// with a flood fwbench limited is an upper bound of the gateway's time).
#[derive(serde::Serialize)]
pub struct Measured {
    pub testbed: String,
    pub dport: u16,
    pub original_ns: Vec<f64>,
    pub optimised_ns: Vec<f64>,
    /// Which of each ruleset's floods fwbench's own sender or sink limited (their time
    /// per packet is an upper bound of the gateway's).
    pub original_limited: Vec<bool>,
    pub optimised_limited: Vec<bool>,
    pub original: Option<report::stats::Summary>,
    pub optimised: Option<report::stats::Summary>,
    /// original − optimised, ns per packet.
    pub saving_ns: Option<f64>,
    pub saving_ci95: Option<f64>,
    /// What the saving is ([`report::advise::Verdict`]): `measured`, `at least`
    /// (fwbench limited a flood through the optimised ruleset: a lower bound), `not
    /// measurable` (its CI includes 0), `no CI`, or `not stated` (fwbench limited a
    /// flood through the original ruleset).
    pub saving_is: &'static str,
    /// The engine the floods went through.
    pub engine: String,
    /// The rule that took the traffic, per ruleset (the testbed's verdict check).
    pub took: [String; 2],
    /// The results database the floods were stored in (`--db`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db: Option<String>,
    /// The judgement the figures above come from (its text is the line printed).
    #[serde(skip)]
    saving: Option<report::advise::Saving>,
}

impl Measured {
    /// The two rulesets' floods: `(ns, limited)` each, original first.
    fn new(floods: [Vec<report::advise::Flood>; 2], engine: &str, took: [String; 2]) -> Measured {
        let ns = |i: usize| floods[i].iter().map(|f| f.0).collect();
        let limited = |i: usize| floods[i].iter().map(|f| f.1).collect();
        let s = report::advise::Saving::of([&floods[0], &floods[1]]);
        Measured {
            testbed: String::new(),
            dport: 0,
            original_ns: ns(0),
            optimised_ns: ns(1),
            original_limited: limited(0),
            optimised_limited: limited(1),
            original: s.as_ref().map(|s| s.original),
            optimised: s.as_ref().map(|s| s.optimised),
            saving_ns: s.as_ref().map(|s| s.saving.delta),
            saving_ci95: s.as_ref().and_then(|s| s.saving.ci95),
            saving_is: s.as_ref().map_or("not stated", |s| s.verdict().name()),
            engine: engine.to_owned(),
            took,
            db: None,
            saving: s,
        }
    }
}

/// One ruleset as --measure's floods import it: the file's name in the scratch
/// directory (it is the trial's `import` axis), its text, and its ipsets.
struct Measurable<'a> {
    name: &'static str,
    text: &'a str,
    ipset: Option<&'a str>,
}

/// The two rulesets --measure floods through with `engine`: nft files, or the
/// input's own iptables format with the ipsets of the optimised one.
fn measurables<'a>(
    advice: &'a Advice,
    input: &'a str,
    engine: &str,
    path: &str,
) -> Result<[Measurable<'a>; 2]> {
    match (engine, advice.format) {
        ("nft", _) => {
            let (before, after) = advice
                .as_nft
                .as_ref()
                .map_err(|e| usage(format!("--measure: {path} cannot be written as nft: {e}")))?;
            Ok([
                Measurable {
                    name: "original.nft",
                    text: before,
                    ipset: None,
                },
                Measurable {
                    name: "optimised.nft",
                    text: after,
                    ipset: None,
                },
            ])
        }
        (_, firewall::ImportFormat::IptablesSave) => Ok([
            Measurable {
                name: "original.rules",
                text: input,
                ipset: None,
            },
            Measurable {
                name: "optimised.rules",
                text: &advice.text,
                ipset: Some(advice.ipset.as_str()).filter(|s| !s.is_empty()),
            },
        ]),
        (e, firewall::ImportFormat::Nft) => Err(usage(format!(
            "--measure --engine {e}: {path} is an nft ruleset; measure it with --engine nft"
        ))),
    }
}

/// Flood through each ruleset `--repeat` times, interleaved with alternating order,
/// in this process, as one session: with `--db` one run of 2 × N trials (the report
/// puts the two rulesets side by side, `report::advise`).
fn measure(a: &AdviseArgs, path: &str, rulesets: &[Measurable; 2]) -> Result<Measured> {
    let tags = a.tags.tags()?;
    if a.db.is_none() && !tags.is_empty() {
        return Err(usage("--tag: labels a stored run; give --db FILE"));
    }
    use crate::run::session::Session;
    // INVARIANT: clap requires both with --measure.
    let (tb, dport) = (a.testbed.clone().unwrap_or_default(), a.dport.unwrap_or(0));
    let dir = crate::run::proof::Scratch::new("advise")?;
    let engine: firewall::Engine = a
        .engine
        .parse()
        .map_err(|e| usage(format!("--engine {}: {e}", a.engine)))?;
    let mut params = vec![];
    for r in rulesets {
        let f = dir.path().join(r.name);
        std::fs::write(&f, r.text).with_context(|| format!("writing {}", f.display()))?;
        let sets = match r.ipset {
            Some(text) => {
                let s = dir.path().join(format!("{}.ipset", r.name));
                std::fs::write(&s, text).with_context(|| format!("writing {}", s.display()))?;
                Some(s.display().to_string())
            }
            None => None,
        };
        let mut v =
            crate::run::proof::import_values(engine, &f.display().to_string(), sets.as_deref());
        v.rate = proto::Rate::Max;
        v.duration = f64::from(a.time);
        v.dport = Some((dport, dport));
        let p = crate::plan::build::build(&v, 0, &Default::default()).map_err(usage)?;
        params.push(p);
    }
    // The original's is checked when the session opens.
    crate::run::session::preflight(&params[1..])?;
    let mut session = Session::open(
        "rules advise --measure",
        &mut params[0],
        false,
        // Placed like a plain flood's (the gateway's packet work on a CPU of its own
        // where the machine has two): the two rulesets' floods measure the rules, not
        // a sender sharing the gateway's CPU.
        crate::params::Placement::Default,
        Some(&tb),
        a.db.as_deref()
            .map(|db| crate::run::session::StoreAt { db, tags: &tags }),
    )?;
    params[1].topology = params[0].topology;
    params[1].chain = params[0].chain;
    let mut floods: [Vec<report::advise::Flood>; 2] = [vec![], vec![]];
    let mut took = [String::new(), String::new()];
    for rep in 0..a.repeat {
        // Interleaved, the order alternating: drift of the machine hits both alike.
        let order = if rep % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let o = session
                .trial(&params[i])
                .with_context(|| format!("measuring {path}"))?;
            let which = ["original", "optimised"][i];
            let at = (rep + 1, a.repeat);
            if let Some(e) = unmeasured(&o.status, o.error.as_deref(), which, dport, at) {
                return Err(e);
            }
            let pps = o
                .figures
                .as_ref()
                .and_then(|f| f.headline().received_pps)
                .unwrap_or(0.0);
            // A flood fwbench's own sender or sink limited: its time per packet is an
            // upper bound of the gateway's (a cheap optimised ruleset passes all a
            // one-thread sender offers).
            let limited = o
                .figures
                .as_ref()
                .and_then(|f| f.summary().limited_by())
                .is_some_and(|b| b.is_fwbench());
            if pps > 0.0 {
                floods[i].push((1e9 / pps, limited));
            }
            took[i] = o
                .firewall()
                .and_then(|f| f.verdicts.as_ref())
                .and_then(|v| v.took.clone())
                .unwrap_or_default();
        }
    }
    if let Some(e) = session.take_not_stored() {
        return Err(e);
    }
    session.finish("complete")?;
    Ok(Measured {
        testbed: tb,
        dport,
        db: a.db.as_ref().map(|d| d.display().to_string()),
        ..Measured::new(floods, &a.engine, took)
    })
}

/// Why flood `rep` of `of` of `--measure` gives no per-packet time, or `None` when it
/// does (`ok`):
/// the ruleset dropped it (not accepted: bad input, exit 2, another --dport), the trial
/// measured with a doubt (`flagged`: what and why, exit 1 — no saving is made of a
/// figure that may not be stated), or it failed or could not run (exit 1).
fn unmeasured(
    status: &crate::outcome::Status,
    error: Option<&str>,
    which: &str,
    dport: u16,
    (rep, of): (u32, u32),
) -> Option<anyhow::Error> {
    use crate::outcome::Status;
    let flood =
        format!("--measure: flood {rep} of {of} to udp port {dport} through the {which} ruleset");
    let why = error.unwrap_or("no reason recorded");
    match status {
        Status::Ok => None,
        Status::Dropped => Some(usage(format!(
            "{flood} was not accepted ({why}); give a --dport the ruleset accepts"
        ))),
        Status::Flagged => Some(anyhow::anyhow!(
            "{flood} was flagged — {why}; its time per packet may not be stated, so no \
             saving is measured"
        )),
        Status::Failed | Status::Unavailable => {
            Some(anyhow::anyhow!("{flood} {}: {why}", status.as_str()))
        }
    }
}

fn measured_text(m: &Measured) -> String {
    let mut out = format!(
        "measured on testbed {} (engine {}, udp port {}, {} floods each, interleaved): ",
        m.testbed,
        m.engine,
        m.dport,
        m.original_ns.len(),
    );
    // A saving is stated only when measured (a CI that includes 0 is "no measurable
    // saving"), and as a bound where fwbench limited a flood of the optimised ruleset.
    out += &m.saving.as_ref().map_or_else(
        || "no packets arrived through a ruleset".into(),
        |s| s.text(),
    );
    let _ = write!(
        out,
        "\n  took the traffic: original {}; optimised {}\n",
        m.took[0], m.took[1]
    );
    if let Some(d) = &m.db {
        let _ = writeln!(
            out,
            "  stored: {} floods in {d} (`fwbench report {d}`)",
            m.original_ns.len() + m.optimised_ns.len()
        );
    }
    out
}

/// What the proof on the testbed showed.
fn proven_text(tb: &str, p: &firewall::advise::testbed::Proven) -> String {
    let mut s = format!(
        "proven on testbed {tb} ({} hook; {}): {} probe classes, {} packets each through \
         both rulesets, met the same fate in both and the model's ({} delivered, {} \
         dropped, {} that depend on rules the model cannot read agreed between the two)\n",
        p.path.hook(),
        p.maps.join(", "),
        p.classes,
        p.packets,
        p.delivered,
        p.dropped,
        p.either
    );
    for n in &p.not_sent {
        let _ = writeln!(
            s,
            "  not sent: {} probe(s), because {} (e.g. {})",
            n.probes, n.reason, n.example
        );
    }
    s
}

/// `5-9, 12` for a list of lines.
fn lines(ls: &[usize]) -> String {
    let mut out: Vec<String> = vec![];
    let mut i = 0;
    while i < ls.len() {
        let mut j = i;
        while j + 1 < ls.len() && ls[j + 1] == ls[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", ls[i], ls[j])
        } else {
            ls[i].to_string()
        });
        i = j + 1;
    }
    if out.len() > 8 {
        let n = out.len() - 6;
        out.truncate(6);
        out.push(format!("… ({n} more)"));
    }
    out.join(", ")
}

/// The summary people read.
pub fn summary(file: &str, a: &Advice, out: Option<&str>, nft: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{file}: {} rules → {} rules; both rulesets give the same verdict (and pass the \
         same log and counter rules) for each of {} probe packets from every built-in chain",
        a.rules_before, a.rules_after, a.probes
    );
    if a.changes.is_empty() {
        let _ = writeln!(s, "no safe rewrite found: nothing changed, nothing written");
    }
    let unit = match a.format {
        firewall::ImportFormat::Nft => "handle",
        firewall::ImportFormat::IptablesSave => "line",
    };
    for c in &a.changes {
        let kind = serde_json::to_value(c.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  {kind:<10} {} {unit} {}: {}",
            c.chain,
            lines(&c.lines),
            c.reason
        );
    }
    for n in &a.notes {
        let _ = writeln!(s, "note: {n}");
    }
    if !a.kept.is_empty() {
        let _ = writeln!(
            s,
            "left in place (the analysis cannot read them or must keep them as written; nothing moves across them):"
        );
        for (line, why) in &a.kept {
            let _ = writeln!(s, "  {unit} {line}: {why}");
        }
    }
    if let Some(o) = out.filter(|_| !a.changes.is_empty()) {
        if nft {
            let _ = writeln!(
                s,
                "written: {o} (optimised), {o}.orig.nft (the original), both for `nft -f`"
            );
        } else if a.format == firewall::ImportFormat::Nft {
            let _ = writeln!(s, "written: {o} (load: nft -f {o})");
        } else if a.ipset.is_empty() {
            let _ = writeln!(s, "written: {o} (load: iptables-restore < {o})");
        } else {
            let _ = writeln!(
                s,
                "written: {o}, {o}.ipset (load: ipset restore < {o}.ipset && iptables-restore < {o})"
            );
        }
    }
    s
}

/// Where the counts of `--counters-from` came from.
#[derive(serde::Serialize)]
pub struct CountsFrom {
    pub db: String,
    pub run: i64,
    /// Trials of the run that imported a ruleset and counted its rules.
    pub trials: usize,
}

/// The packets each imported rule counted over the trials of a run of `db` (`run`,
/// or the last run with such trials); bad input is exit 2.
fn counts_from(
    db: &std::path::Path,
    run: Option<i64>,
) -> Result<(Vec<firewall::advise::Counted>, CountsFrom)> {
    let name = db.display().to_string();
    if !db.is_file() {
        return Err(usage(format!(
            "--counters-from {name}: no such results file"
        )));
    }
    let store = store::Store::open(db).map_err(|e| usage(format!("--counters-from {e}")))?;
    let runs = store.runs()?;
    let counted = |t: &store::TrialRow| -> Vec<firewall::advise::Counted> {
        if t.params["model"] != "import" {
            return vec![];
        }
        // The gateway's report, as the trial stored it.
        let report: Option<firewall::Report> =
            serde_json::from_value(t.results["gateway"]["firewall"].clone()).ok();
        report
            .and_then(|r| r.verdicts)
            .map(|v| v.rules)
            .unwrap_or_default()
            .into_iter()
            .filter(|h| !h.policy)
            .map(|h| firewall::advise::Counted {
                chain: h.chain,
                index: h.index,
                text: h.text,
                packets: h.packets,
            })
            .collect()
    };
    let mut ids: Vec<i64> = match run {
        Some(n) if runs.iter().any(|r| r.id == n) => vec![n],
        Some(n) => {
            let known: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
            return Err(usage(format!(
                "--run {n}: {name} has no such run (runs: {})",
                known.join(", ")
            )));
        }
        None => runs.iter().map(|r| r.id).collect(),
    };
    ids.sort_unstable();
    for id in ids.into_iter().rev() {
        let per_trial: Vec<Vec<firewall::advise::Counted>> = store
            .trials(Some(id))?
            .iter()
            .map(counted)
            .filter(|c| !c.is_empty())
            .collect();
        if !per_trial.is_empty() {
            let from = CountsFrom {
                db: name,
                run: id,
                trials: per_trial.len(),
            };
            return Ok((per_trial.concat(), from));
        }
    }
    let which = run.map_or("no run of it has a".to_owned(), |n| {
        format!("run {n} has no")
    });
    Err(usage(format!(
        "--counters-from {name}: {which} trial that imported a ruleset and counted its rules"
    )))
}

pub fn advise(a: &AdviseArgs) -> Result<ExitCode> {
    let path = a.import.display().to_string();
    let text = crate::limits::read_user_file(&a.import, "rule import")
        .map_err(|e| usage(format!("--import {e}")))?;
    let (counts, counts_src) = match &a.counters_from {
        Some(db) => {
            let (c, from) = counts_from(db, a.run)?;
            (c, Some(from))
        }
        None => (vec![], None),
    };
    let result = match firewall::import::detect(&text) {
        Some(firewall::ImportFormat::IptablesSave) => {
            firewall::advise::advise_counted(&path, &text, &counts)
        }
        // Anything else is nft's to judge: loaded by nft itself in a scratch namespace
        // (as `--import` does), its read-back analysed.
        _ => {
            use firewall::import;
            import::check_nft_text(&path, &text).map_err(|e| usage(e.to_string()))?;
            let loaded = crate::nftload::load_nft(&path, &text).map_err(usage)?;
            import::refused_messages(&path, &loaded.messages).map_err(|e| usage(e.to_string()))?;
            firewall::advise::advise_nft_counted(&path, &loaded.json, &loaded.listing, &counts)
        }
    };
    let advice = match result {
        Ok(a) => a,
        Err(e @ (AdviseError::Import(_) | AdviseError::Unsupported(_))) => {
            return Err(usage(e.to_string()))
        }
        Err(e @ AdviseError::Disagree(_)) => return Err(anyhow::Error::new(e)),
    };
    // What --measure floods through: refused before anything runs when it cannot be.
    let rulesets = match (a.measure, advice.changes.is_empty()) {
        (true, false) => Some(measurables(&advice, &text, &a.engine, &path)?),
        (false, _) | (true, true) => None,
    };
    // Proof on the testbed before anything is written or measured.
    let proven = match (a.verify_on_testbed || a.measure, advice.changes.is_empty()) {
        (true, false) => {
            // INVARIANT: clap requires --testbed with both flags.
            let tb = a.testbed.as_deref().unwrap_or_default();
            Some(crate::run::proof::prove(tb, &advice.rulesets)?)
        }
        (false, _) | (true, true) => None,
    };
    let out = a.out.as_ref().map(|o| o.display().to_string());
    let write = |p: &std::ffi::OsStr, text: &str| {
        std::fs::write(p, text).with_context(|| format!("writing {}", PathBuf::from(p).display()))
    };
    if let (Some(o), false, "nft") = (&a.out, advice.changes.is_empty(), a.format.as_str()) {
        let (before, after) = advice
            .as_nft
            .as_ref()
            .map_err(|e| usage(format!("{path}: cannot be written as nft: {e}")))?;
        write(o.as_os_str(), after)?;
        let mut p = o.as_os_str().to_owned();
        p.push(".orig.nft");
        write(&p, before)?;
    } else if let (Some(o), false) = (&a.out, advice.changes.is_empty()) {
        std::fs::write(o, &advice.text).with_context(|| format!("writing {}", o.display()))?;
        if !advice.ipset.is_empty() {
            let mut p = o.as_os_str().to_owned();
            p.push(".ipset");
            std::fs::write(&p, &advice.ipset)
                .with_context(|| format!("writing {}", PathBuf::from(&p).display()))?;
        }
    }
    let measured = match &rulesets {
        Some(r) => Some(measure(a, &path, r)?),
        None => None,
    };
    if a.json {
        let mut v = serde_json::to_value(&advice)?;
        if let Some(p) = &proven {
            v["testbed_proof"] = serde_json::to_value(p)?;
        }
        if let Some(c) = &counts_src {
            v["counters_from"] = serde_json::to_value(c)?;
        }
        if let Some(m) = &measured {
            v["measured"] = serde_json::to_value(m)?;
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!(
            "{}",
            summary(&path, &advice, out.as_deref(), a.format == "nft")
        );
        if let Some(c) = &counts_src {
            println!(
                "hot rules by the counters of run {} of {} ({} trial(s) that imported a ruleset)",
                c.run, c.db, c.trials
            );
        }
        if out.is_none() && !advice.changes.is_empty() {
            println!("(--out FILE writes the optimised ruleset)");
        }
        if let Some(p) = &proven {
            print!(
                "{}",
                proven_text(a.testbed.as_deref().unwrap_or_default(), p)
            );
        }
        if let Some(m) = &measured {
            print!("{}", measured_text(m));
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(original: &[f64], optimised: &[f64]) -> Measured {
        let free = |ns: &[f64]| ns.iter().map(|n| (*n, false)).collect();
        Measured {
            testbed: "t".into(),
            dport: 5000,
            ..Measured::new([free(original), free(optimised)], "nft", Default::default())
        }
    }

    /// A flagged flood read "was not accepted (flagged: …)": it was accepted, and
    /// measured with a doubt. Each status says what it is and why; only a dropped
    /// flood is the user's port (exit 2).
    #[test]
    fn a_flood_that_gives_no_time_says_what_it_was() {
        use crate::outcome::Status;
        let why = "overloaded: a flood at the maximum rate: the gateway took in 8624 of the \
                   505408 packets";
        let e = |s: Status, why: Option<&str>| unmeasured(&s, why, "optimised", 5000, (2, 3));
        assert!(e(Status::Ok, None).is_none());
        let flagged = e(Status::Flagged, Some(why)).expect("flagged");
        assert_eq!(
            flagged.to_string(),
            format!(
                "--measure: flood 2 of 3 to udp port 5000 through the optimised ruleset was \
                 flagged — {why}; its time per packet may not be stated, so no saving is \
                 measured"
            )
        );
        assert!(flagged.downcast_ref::<crate::error::UsageError>().is_none());
        assert!(!flagged.to_string().contains("not accepted"));
        let dropped = e(
            Status::Dropped,
            Some("5000 of 5000 packets dropped by rule 3"),
        )
        .unwrap();
        assert!(
            dropped.to_string().ends_with(
                "was not accepted (5000 of 5000 packets dropped by rule 3); give a --dport \
                 the ruleset accepts"
            ),
            "{dropped}"
        );
        assert!(dropped.downcast_ref::<crate::error::UsageError>().is_some());
        let failed = e(Status::Failed, None).unwrap();
        assert!(
            failed
                .to_string()
                .ends_with("ruleset failed: no reason recorded"),
            "{failed}"
        );
    }

    /// "saving 10657 ± 13459 ns … 2.4× cheaper" was a CI that includes 0: no saving.
    /// A run here had its optimised floods limited by fwbench's sender ("2.1×
    /// cheaper", warned of only in the report): at least that, said why.
    #[test]
    fn a_saving_is_stated_only_as_far_as_it_was_measured() {
        let noisy = measured(&[4_000.0, 30_000.0, 8_000.0], &[5_000.0, 6_000.0, 3_000.0]);
        let t = measured_text(&noisy);
        assert!(t.contains("): no measurable saving: "), "{t}");
        assert!(!t.contains("cheaper"), "{t}");
        assert_eq!(noisy.saving_is, "not measurable");
        let clear = measured(&[10_000.0, 10_100.0, 9_900.0], &[1_000.0, 1_050.0, 950.0]);
        let t = measured_text(&clear);
        assert!(
            t.contains(
                "the optimised ruleset saves 9000 ± 210 ns per packet (95 % CI, Welch; 3 and \
                 3 floods): 10× cheaper per packet — original"
            ),
            "{t}"
        );
        assert_eq!(clear.saving_is, "measured");
        let on = |ns: &[f64], limited: bool| ns.iter().map(|n| (*n, limited)).collect();
        let (o, n) = ([10_000.0, 10_100.0, 9_900.0], [1_000.0, 1_050.0, 950.0]);
        let bounded = Measured::new([on(&o, false), on(&n, true)], "nft", Default::default());
        let t = measured_text(&bounded);
        assert!(
            t.contains("saves at least 9000 ± 210 ns per packet")
                && t.contains("at least 10× cheaper per packet")
                && t.contains("limited 3 of the 3 floods through the optimised ruleset"),
            "{t}"
        );
        assert_eq!(bounded.saving_is, "at least");
        let none = Measured::new([on(&o, true), on(&n, false)], "nft", Default::default());
        let t = measured_text(&none);
        assert!(
            t.contains(
                "no saving is stated: fwbench's sender or sink limited 3 of the 3 \
                        floods through the original ruleset"
            ) && !t.contains("cheaper"),
            "{t}"
        );
        assert_eq!(none.saving_is, "not stated");
    }

    #[test]
    fn line_lists_are_ranges() {
        assert_eq!(super::lines(&[5, 6, 7, 9, 11, 12]), "5-7, 9, 11-12");
        assert_eq!(super::lines(&[]), "");
    }
}
