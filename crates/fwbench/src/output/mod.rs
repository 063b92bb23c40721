//! What the user reads: progress lines, the per-trial line and text, the run summary
//! table, JSON.
//!
//! Owns the frame around the figures: parameter line and rule set, status, doubts,
//! placement, table layout. Must not: say what a family's figures mean — each
//! family's `workloads::Summary` does (its line, lines, cells, JSON), reached through
//! `Figures::summary`, and each kind's `Traffic::params_text` its parameters.

pub mod doc;
pub mod imported;
pub mod live;
pub mod search;

use crate::outcome::{Outcome, Status};
use crate::params::workload::Workload;
use crate::params::TrialParams;
use crate::plan::scenario::{Plan, PlannedTrial};
use crate::workloads::TextOf;

pub fn params_line(p: &TrialParams) -> String {
    let rules = if p.engine == firewall::Engine::None {
        String::new()
    } else {
        let family = if p.nft_family.is_default() {
            String::new()
        } else {
            format!(" nft_family={}", p.nft_family)
        };
        format!(
            " engine={}{family} model={} rules={} pos={}",
            p.engine, p.model, p.rules, p.position
        )
    };
    // A replayed trace, by its file's name (trials that differ only in it).
    let trace = match p.events.as_ref().and_then(|e| e.trace.as_ref()) {
        Some(t) => {
            let name = std::path::Path::new(&t.file)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!(" trace={name}({} ops)", t.operations)
        }
        None => String::new(),
    };
    format!(
        "{}{rules}{trace}",
        crate::workloads::traffic(&p.kind).params_text(p)
    )
}

/// ", ±0.8 % (95 % CI) after 3.4 s" for adaptive trials.
fn precision_note(o: &Outcome) -> String {
    match &o.precision {
        None => String::new(),
        Some(p) => format!(
            ", {} after {:.1} s ({} the ±{:.2} % target)",
            p.achieved
                .map(|a| format!("±{:.2} % (95 % CI)", a * 100.0))
                .unwrap_or_else(|| "too few windows for a CI".into()),
            p.duration_s,
            if p.reached { "met" } else { "NOT met:" },
            p.target * 100.0
        ),
    }
}

pub fn outcome_line(o: &Outcome) -> String {
    let mut line = outcome_line_fixed(o);
    if o.clean_start == Some(false) {
        line = format!("[gateway not clean at start] {line}");
    }
    if o.status.measured() {
        line += &precision_note(o);
    }
    if o.status == Status::Flagged {
        line += &format!(
            " [FLAGGED: {}]",
            o.error
                .as_deref()
                .unwrap_or("a figure's witness does not hold")
        );
    }
    line
}

fn outcome_line_fixed(o: &Outcome) -> String {
    let st = o.status.as_str();
    if let (true, Some(s)) = (o.status.measured(), &o.search) {
        return format!("{st}: {}", s.line());
    }
    match o.figures.as_ref().filter(|_| o.status.measured()) {
        Some(f) => format!("{st}: {}", f.summary().line()),
        None => format!("{st}: {}", o.error.as_deref().unwrap_or("no results")),
    }
}

/// The plan's trials, one a line, and the estimated duration: theirs and `searches_s`
/// of the capacity searches their `event_load` runs first.
pub fn plan_listing(
    plan: &Plan,
    estimate: impl Fn(&TrialParams) -> f64,
    searches_s: f64,
) -> String {
    let mut out = format!(
        "{} — {} trials (seed {})\n",
        plan.name,
        plan.trials.len(),
        plan.seed
    );
    if !plan.description.is_empty() {
        out += &format!("{}\n", plan.description.trim());
    }
    let mut total = 0.0;
    for (i, t) in plan.trials.iter().enumerate() {
        total += estimate(&t.params);
        out += &format!(
            "{:>4}  rep {}  {}  [{}]\n",
            i + 1,
            t.rep,
            params_line(&t.params),
            t.key
        );
    }
    if searches_s > 0.0 {
        out += &format!(
            "estimated duration: {:.0} s (of it {:.0} s of capacity searches for event_load)\n",
            total + searches_s,
            searches_s
        );
    } else {
        out += &format!("estimated duration: {:.0} s\n", total);
    }
    out
}

fn external_gateway(o: &Outcome) -> bool {
    o.placement
        .iter()
        .any(|r| r.place == crate::outcome::EXTERNAL_GATEWAY)
}

fn verdict_cell(o: &Outcome) -> String {
    match o.firewall().map(|f| f.verdicts_ok()) {
        None if external_gateway(o) => "external".into(),
        None => "-".into(),
        Some(Some(true)) => "ok".into(),
        Some(_) => "MISMATCH".into(),
    }
}

/// The table printed at the end of `fwbench run`.
pub fn summary_table(name: &str, rows: &[(PlannedTrial, Outcome)]) -> String {
    // (title, right-aligned)
    let header: [(&str, bool); 20] = [
        ("#", true),
        ("topology", false),
        ("engine", false),
        ("model", false),
        ("rules", true),
        ("P", false),
        ("A", false),
        ("T", false),
        ("n", true),
        ("f", false),
        ("rep", true),
        ("Mb/s", true),
        ("trans/s", true),
        ("p50 µs", true),
        ("p99 µs", true),
        ("errors", true),
        ("unsent", true),
        ("lost", true),
        ("verdicts", false),
        ("status", false),
    ];
    let echo = trial_table(&header, rows, |i, t, o| {
        let p = &t.params;
        // Socket echo's parameters: the trials with neither packet nor connection ones.
        if p.packet().is_some() || p.conn().is_some() {
            return None;
        }
        let installed = o.firewall().map_or(0, |f| f.rules);
        let mut r = vec![
            (i + 1).to_string(),
            p.topology.to_string(),
            engine_cell(p),
            model_cell(p),
            installed.to_string(),
            p.proto.to_string(),
            format!("IPv{}", p.family),
            p.server.to_string(),
            p.clients.to_string(),
            p.frame_size.clone(),
            t.rep.to_string(),
        ];
        match figure_cells(o) {
            Some(cells) => r.extend(cells),
            None => r.extend(std::iter::repeat_n("-".to_string(), 7)),
        }
        r.push(verdict_cell(o));
        r.push(o.status.as_str().into());
        Some(r)
    });
    let mut out = format!("\n{name}\n{echo}");
    for extra in [packet_table(rows), conn_table(rows)] {
        if !extra.is_empty() {
            if out.lines().count() > 2 {
                out += "\n";
            }
            out += &extra;
        }
    }
    let mut notes: Vec<String> = Vec::new();
    for (i, (_, o)) in rows.iter().enumerate() {
        if let Some(e) = &o.error {
            notes.push(format!("  #{}: {e}", i + 1));
        }
        if let Some(v) = o.firewall().and_then(|f| f.verdicts.as_ref()) {
            for p in &v.problems {
                notes.push(format!("  #{}: verdict check: {p}", i + 1));
            }
        }
    }
    if !notes.is_empty() {
        out += "\nnotes:\n";
        out += &notes.join("\n");
        out += "\n";
    }
    out
}

/// The rule-set and placement lines of a trial's text output.
fn firewall_lines(o: &Outcome) -> String {
    let mut out = String::new();
    if let Some(f) = o.firewall() {
        out +=
            &format!(
            "  rules        {} engine: {} rules, {} set elements; install {:.1} ms, remove {} ms\n",
            f.engine,
            f.rules,
            f.elements,
            f.install_ms,
            f.remove_ms.map(|m| format!("{m:.1}")).unwrap_or_else(|| "?".into()),
        );
        if !f.settings.is_empty() {
            out += &format!("  settings     {}\n", f.settings.to_line());
        }
        if let Some(e) = o.figures.as_ref().and_then(|f| f.events()) {
            let engine = f.engine.to_string();
            for line in crate::workloads::events::text(e, &engine).lines().skip(1) {
                out += &format!("  events       {}\n", line.trim_start());
            }
        }
        let v = f.verdicts.as_ref();
        if let (None, Some(e)) = (v, &f.verdicts_error) {
            out += &format!("  verdicts     not accounted for: {e}\n");
        }
        // Counters that could not be read print as JSON's null.
        let n = |x: Option<u64>| x.map_or_else(|| "null".to_string(), |x| x.to_string());
        out += &if v.is_none() && f.verdicts_error.is_some() {
            String::new()
        } else {
            format!(
                "  verdicts     {}: {} packets matched, filler {}, policy drops {}{}\n",
                if f.verdicts_ok() == Some(true) {
                    "ok"
                } else {
                    "MISMATCH"
                },
                n(v.map(|v| v.matched_packets)),
                n(v.map(|v| v.filler_packets)),
                n(v.map(|v| v.policy_drops)),
                v.filter(|v| !v.problems.is_empty())
                    .map(|v| format!(" ({})", v.problems.join("; ")))
                    .unwrap_or_default()
            )
        };
        if let Some(v) = v {
            out += &crate::output::imported::hits_text(v);
        }
    }
    if o.clean_start == Some(false) {
        out += &format!(
            "  gateway: not clean at start: {} (left by an earlier trial)\n",
            o.start_differences.join(", ")
        );
    }
    if external_gateway(o) {
        out += &format!("  gateway      {}\n", crate::outcome::EXTERNAL_GATEWAY);
    }
    // Shards of a role on the same CPUs (held connections) make one entry: "13 × client".
    let mut place: Vec<(String, usize)> = Vec::new();
    for r in o
        .placement
        .iter()
        .filter(|r| r.place != crate::outcome::EXTERNAL_GATEWAY)
    {
        let text = format!("{} on CPUs {}", r.role, r.cpus);
        match place.iter_mut().find(|(t, _)| *t == text) {
            Some((_, n)) => *n += 1,
            None => place.push((text, 1)),
        }
    }
    let place: Vec<String> = place
        .into_iter()
        .map(|(t, n)| if n == 1 { t } else { format!("{n} × {t}") })
        .collect();
    out += &format!("  placement    {}\n", place.join(", "));
    out
}

/// A flagged trial's doubts, one line each ("" for any other status): said before
/// its figures, so none is read as a finding.
fn flagged_text(o: &Outcome) -> String {
    if o.status != Status::Flagged {
        return String::new();
    }
    o.doubts
        .iter()
        .map(|d| format!("  FLAGGED      {d}\n"))
        .collect()
}

/// A trial's text: its parameter line, its status where it is not `ok`, the
/// family's figures ([`crate::workloads::Summary::text`]), the rule set and placement.
pub fn trial_text(p: &TrialParams, o: &Outcome) -> String {
    let mut out = format!(
        "{}\n",
        crate::workloads::traffic(&p.kind).heading(params_line(p))
    );
    if o.status == Status::Dropped {
        out += &format!("  DROPPED      {}\n", o.error.as_deref().unwrap_or(""));
    }
    out += &flagged_text(o);
    let figures = o
        .figures
        .as_ref()
        .filter(|_| matches!(o.status, Status::Ok | Status::Flagged | Status::Dropped));
    let Some(f) = figures else {
        return out + &format!("{}\n", outcome_line(o));
    };
    let adaptive = if o.precision.is_some() {
        format!(
            "  adaptive     {}\n",
            precision_note(o).trim_start_matches(", ")
        )
    } else {
        String::new()
    };
    out += &f.summary().text(&TextOf {
        p,
        gateway: o.gateway.as_ref(),
        adaptive,
    });
    out + &firewall_lines(o)
}

/// One trial's JSON object, any workload (the shape of docs/schema/trial.json).
pub fn trial_json(p: &TrialParams, o: &Outcome) -> serde_json::Value {
    serde_json::to_value(doc::TrialDoc::new(p, o)).unwrap_or_default()
}

/// Version of each `--json` output's shape. Bump a kind's number when a key changes
/// meaning or goes away (adding keys keeps it); scripts check `schema`.
pub const JSON_VERSION: u32 = 1;

/// The `schema` value of a `--json` output: `fwbench/<kind>/<version>`.
/// A command's JSON document (`compare`, `trend`) as text, its `schema` set to `kind`'s.
pub fn json_text(mut v: serde_json::Value, kind: &str) -> serde_json::Result<String> {
    v["schema"] = schema(kind).into();
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}

/// A command's output written to `--output` (saying so on stderr as `what`), or to
/// stdout without one or with `-`.
pub fn write_or_print(
    output: Option<&std::path::Path>,
    text: &str,
    what: &str,
) -> anyhow::Result<()> {
    use anyhow::Context;
    match output {
        Some(out) if out.as_os_str() != "-" => {
            std::fs::write(out, text).with_context(|| format!("writing {}", out.display()))?;
            eprintln!("fwbench: {what} written to {}", out.display());
        }
        _ => print!("{text}"),
    }
    Ok(())
}

pub fn schema(kind: &str) -> String {
    format!("fwbench/{kind}/{JSON_VERSION}")
}

/// The binary that produced an output (every `--json` object carries it).
pub fn build_json() -> serde_json::Value {
    serde_json::to_value(doc::BuildInfo::this()).unwrap_or_default()
}

/// The model column: `-` without an engine (nothing is installed).
fn model_cell(p: &TrialParams) -> String {
    if p.engine == firewall::Engine::None {
        "-".into()
    } else {
        p.model.to_string()
    }
}

/// One table of a run's trials: a row per trial `cells` gives one for (`None`: not
/// this table's, e.g. another workload's); empty when it gives none.
fn trial_table(
    header: &[(&str, bool)],
    rows: &[(PlannedTrial, Outcome)],
    mut cells: impl FnMut(usize, &PlannedTrial, &Outcome) -> Option<Vec<String>>,
) -> String {
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|h| h.0.to_string()).collect()];
    table.extend(
        rows.iter()
            .enumerate()
            .filter_map(|(i, (t, o))| cells(i, t, o)),
    );
    if table.len() == 1 {
        return String::new();
    }
    render_table(header, &table)
}

/// Columns aligned, a rule under the header. `header`: (title, right-aligned).
fn render_table(header: &[(&str, bool)], table: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (ri, r) in table.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                let pad = " ".repeat(widths[c] - v.chars().count());
                if header[c].1 {
                    format!("{pad}{v}")
                } else {
                    format!("{v}{pad}")
                }
            })
            .collect();
        out += line.join("  ").trim_end();
        out += "\n";
        if ri == 0 {
            out += &widths
                .iter()
                .map(|w| "-".repeat(*w))
                .collect::<Vec<_>>()
                .join("  ");
            out += "\n";
        }
    }
    out
}

/// A measured trial's figure cells in its table (`None`: not measured, or a search).
fn figure_cells(o: &Outcome) -> Option<Vec<String>> {
    let f = o.figures.as_ref().filter(|_| o.status.measured())?;
    Some(f.summary().cells())
}

/// Flood, flow, ping and new-flow trials of a run, one row each.
fn packet_table(rows: &[(PlannedTrial, Outcome)]) -> String {
    let header: [(&str, bool); 16] = [
        ("#", true),
        ("workload", false),
        ("topology", false),
        ("engine", false),
        ("model", false),
        ("rules", true),
        ("A", false),
        ("size", false),
        ("rate", false),
        ("rep", true),
        ("sent pps", true),
        ("recv pps", true),
        ("loss %", true),
        ("p50 µs", true),
        ("verdicts", false),
        ("status", false),
    ];
    let mut searches = Vec::new();
    let mut out = trial_table(&header, rows, |i, t, o| {
        let p = &t.params;
        let k = p.packet()?;
        let mut r = vec![
            (i + 1).to_string(),
            p.name().into(),
            p.topology.to_string(),
            engine_cell(p),
            model_cell(p),
            o.firewall().map_or(0, |f| f.rules).to_string(),
            format!("IPv{}", p.family),
            k.size.to_string(),
            (crate::workloads::traffic(&p.kind).rate(p)).map_or("-".into(), |r| r.to_string()),
            t.rep.to_string(),
        ];
        match figure_cells(o) {
            Some(cells) => r.extend(cells),
            None if o.status.measured() && o.search.is_some() => {
                let s = o.search.as_ref().expect("checked");
                let v = s.value().map(|v| format!("{v:.0}")).unwrap_or("-".into());
                // The loss criterion the search judged its steps by: an mlr's goals; none
                // for an envelope (updates/s by latency and effect) or a sweet spot.
                let bound = |l: f64| format!("≤{:.3}", l * 100.0);
                let loss = match p.search_params() {
                    Some(sp) if !sp.goals.is_empty() => sp
                        .goals
                        .iter()
                        .map(|&g| bound(g))
                        .collect::<Vec<_>>()
                        .join(" "),
                    Some(sp) => bound(sp.loss),
                    None => "-".to_string(),
                };
                let (recv, rules, loss) = match &p.search {
                    Some(
                        crate::params::search::Search::Ndr(_)
                        | crate::params::search::Search::Mlr(_),
                    ) => (v, "-".to_string(), loss),
                    // Its answer is updates/s, no column's: the rules it ran at, and the
                    // rate in its line below.
                    Some(crate::params::search::Search::Envelope(_)) => {
                        ("-".to_string(), p.rules.to_string(), "-".to_string())
                    }
                    Some(crate::params::search::Search::Degrade(_)) => ("-".to_string(), v, loss),
                    Some(crate::params::search::Search::SweetSpot) | None => {
                        ("-".to_string(), v, "-".to_string())
                    }
                };
                r[5] = rules;
                r.extend(["-".into(), recv, loss, "-".into()]);
                searches.push(format!("  #{}: {}", i + 1, s.line()));
            }
            None => r.extend(std::iter::repeat_n("-".to_string(), 4)),
        }
        r.push(verdict_cell(o));
        r.push(o.status.as_str().into());
        Some(r)
    });
    if !searches.is_empty() {
        out += "searches (ndr: recv pps is the rate found; degrade: rules is the first degraded count; envelope: rules is the count installed, its rate on its line):\n";
        out += &searches.join("\n");
        out += "\n";
    }
    out
}

/// Connection trials of a run (sessions, bulk, http, connections), one row each.
fn conn_table(rows: &[(PlannedTrial, Outcome)]) -> String {
    let header: [(&str, bool); 13] = [
        ("#", true),
        ("label / workload", false),
        ("topology", false),
        ("engine", false),
        ("rules", true),
        ("parallel", true),
        ("rep", true),
        ("sessions", true),
        ("sessions/s", true),
        ("mean ms", true),
        ("Mb/s", true),
        ("failed", true),
        ("status", false),
    ];
    trial_table(&header, rows, |i, t, o| {
        let p = &t.params;
        let k = p.conn()?;
        let mut r = vec![
            (i + 1).to_string(),
            p.label.clone().unwrap_or_else(|| p.name().to_string()),
            p.topology.to_string(),
            engine_cell(p),
            o.firewall().map_or(0, |f| f.rules).to_string(),
            match k.parallel {
                0 => "auto".into(),
                n => n.to_string(),
            },
            t.rep.to_string(),
        ];
        match (figure_cells(o), &o.search) {
            (Some(cells), _) => r.extend(cells),
            (None, Some(s)) if o.status.measured() => {
                r.extend(["-".into(), s.line(), "-".into(), "-".into(), "-".into()])
            }
            (None, _) => r.extend(std::iter::repeat_n("-".to_string(), 5)),
        }
        r.push(o.status.as_str().into());
        Some(r)
    })
}

/// `fwbench workload` text: totals, then per distinct command its count and durations.
pub fn workload_text(file: &str, total_s: f64, ran: &[crate::worklang::Ran]) -> String {
    let failed = ran.iter().filter(|r| r.exit != Some(0)).count();
    let mut out = format!(
        "workload {file}: {} commands in {total_s:.3} s, {failed} failed\n",
        ran.len()
    );
    // Durations are the runs that succeeded (a failed run's is its time to fail).
    out +=
        "  count   mean s   p50 s    max s  failed  command   (times: the runs that succeeded)\n";
    let mut by: std::collections::BTreeMap<String, Vec<&crate::worklang::Ran>> =
        std::collections::BTreeMap::new();
    for r in ran {
        by.entry(results::stored::command_line(&r.argv))
            .or_default()
            .push(r);
    }
    for (cmd, rs) in by {
        let mut d: Vec<f64> = rs
            .iter()
            .filter(|r| r.exit == Some(0))
            .map(|r| r.duration_s)
            .collect();
        d.sort_by(f64::total_cmp);
        let times = match (d.first(), d.last()) {
            (Some(_), Some(max)) => format!(
                "{:>7.4}  {:>6.4}  {:>7.4}",
                d.iter().sum::<f64>() / d.len() as f64,
                d[d.len() / 2],
                max
            ),
            _ => format!("{:>7}  {:>6}  {:>7}", "-", "-", "-"),
        };
        out += &format!(
            "  {:>5}  {times}  {:>6}  {cmd}\n",
            rs.len(),
            rs.len() - d.len()
        );
    }
    for r in ran.iter().filter_map(|r| r.error.as_ref()).take(3) {
        out += &format!("  error: {r}\n");
    }
    out
}

/// The rule set that stood on the gateway during `fwbench workload`.
pub fn workload_firewall_text(f: &firewall::Report) -> String {
    format!(
        "  gateway: {} with {} rules, {} set elements (installed in {:.1} ms)\n",
        f.engine, f.rules, f.elements, f.install_ms
    )
}

/// `fwbench run --list-axes`: the axis registry as a table.
pub fn axes_table() -> String {
    use crate::plan::axes::{Class, AXES};
    let mut out =
        String::from("Scenario axes ([params], [[case]], [[firewall]]; any may be a list):\n\n");
    for a in AXES {
        let users = if a.users.is_empty() {
            "all".to_string()
        } else {
            a.users
                .iter()
                .map(|c| match c {
                    Class::Echo => "echo",
                    Class::Packet => "flood/flow/ping",
                    Class::Search => "ndr/degrade",
                    Class::Conn => "sessions/bulk/http/connections",
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let default = a.default_for(crate::params::search::Asked::Traffic(Workload::Echo));
        out += &format!("  {:<18} {}\n  {:<18} used by: {users}", a.name, a.help, "");
        if !default.is_empty()
            && !a.foreign_to(crate::params::search::Asked::Traffic(Workload::Echo))
        {
            out += &format!("; default (echo): {default}");
        }
        out += "\n";
    }
    out
}

/// The engine as the tables show it: nft engines with their table family, which
/// changes what a rule costs ("nft (inet)", "nft-set (ip)").
fn engine_cell(p: &TrialParams) -> String {
    if p.engine.takes_nft_family() {
        format!("{} ({})", p.engine, p.nft_family)
    } else {
        p.engine.to_string()
    }
}

#[cfg(test)]
mod tests;
