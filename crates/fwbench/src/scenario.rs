//! Scenario files (TOML) → a typed, validated plan of trials.
//!
//! Any parameter under `[params]` may be a scalar or a list; the plan is the cross
//! product × `repetitions`, in `sequential` or seeded `random` order. Every error names
//! `file:line:column` and the field.

use crate::packet::{PacketParams, SenderPath, SinkKind};
use crate::testbed::Topology;
use crate::trial::{Pinning, TrialParams, Workload};
use proto::{Family, FrameSize, Proto, ServerMode};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// Parse a duration: `10` (seconds), `2.5s`, `500ms`, `1m`. Must be positive.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (like 10, 2.5s, 500ms or 1m)"))?;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("duration '{s}' must be greater than zero"));
    }
    if v * mult > 86_400.0 {
        return Err(format!("duration '{s}' is longer than a day"));
    }
    Ok(v * mult)
}

pub fn parse_clients(s: &str) -> Result<u32, String> {
    let n: u32 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a whole number of clients"))?;
    if n == 0 {
        return Err("the number of clients must be at least 1".into());
    }
    if n > crate::testbed::addr::MAX_CLIENTS {
        return Err(format!(
            "{n} clients is more than a testbed addresses ({})",
            crate::testbed::addr::MAX_CLIENTS
        ));
    }
    Ok(n)
}

pub fn parse_timeout_ms(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(v) if v > 0 && v <= 60_000 => Ok(v),
        _ => Err(format!("timeout '{s}' must be 1..60000 milliseconds")),
    }
}

/// Cross-field check of one trial's parameters.
pub fn check_combination(p: &TrialParams) -> Result<(), String> {
    check_adaptive(p)?;
    if p.workload == Workload::Degrade {
        crate::search::check_degrade(p, &p.search.clone().unwrap_or_default())?;
    }
    if p.workload != Workload::Echo {
        return crate::packet::check(p);
    }
    if p.proto == Proto::Udp && p.frame.max() > proto::MAX_UDP_PAYLOAD {
        return Err(format!(
            "frame size {} exceeds the largest UDP payload ({} bytes)",
            p.frame.max(),
            proto::MAX_UDP_PAYLOAD
        ));
    }
    if p.proto == Proto::Udp && p.clients as u64 + crate::trial::ECHO_PORT as u64 > 65_535 {
        return Err(format!(
            "{} UDP clients need more ports than exist",
            p.clients
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTrial {
    /// Stable id: hash of the parameters and the repetition.
    pub key: String,
    pub rep: u32,
    pub params: TrialParams,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub repetitions: u32,
    pub pinning: Pinning,
    /// Run on this existing testbed instead of ephemeral ones.
    pub testbed: Option<String>,
    /// Whether the scenario names a topology (else a named testbed's is used).
    pub topology_given: bool,
    /// Seconds of unmeasured traffic before each trial (a discarded trial of its own).
    pub warmup_s: Option<f64>,
    /// Axis values selecting the baseline trials (for the report's decrease in %).
    pub baseline: Option<serde_json::Value>,
    pub trials: Vec<PlannedTrial>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: Option<String>,
    description: Option<String>,
    workload: Option<Spanned<String>>,
    repetitions: Option<Spanned<i64>>,
    order: Option<Spanned<String>>,
    seed: Option<Spanned<i64>>,
    testbed: Option<RawTestbed>,
    params: Option<BTreeMap<Spanned<String>, Spanned<toml::Value>>>,
    /// Named combinations (`[[case]]`), each crossed with `[params]`: for tables whose
    /// rows are not a cross product (seed 001's methods).
    case: Option<Vec<BTreeMap<Spanned<String>, Spanned<toml::Value>>>>,
    warmup: Option<Spanned<toml::Value>>,
    /// Adaptive trial length for every trial: `{ precision = "1%", max_duration = "60s" }`.
    adaptive: Option<Spanned<BTreeMap<Spanned<String>, Spanned<toml::Value>>>>,
    /// Axis values of the baseline trials, e.g. `baseline = { engine = "none" }`.
    baseline: Option<Spanned<BTreeMap<Spanned<String>, Spanned<toml::Value>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTestbed {
    name: Option<Spanned<String>>,
    pin_client: Option<Spanned<String>>,
    pin_gateway: Option<Spanned<String>>,
    pin_server: Option<Spanned<String>>,
}

/// Axes every workload has.
const COMMON_AXES: &[&str] = &[
    "topology",
    "engine",
    "model",
    "rules",
    "position",
    "family",
    "clients",
    "duration",
    "timeout_ms",
    "import",
];
/// Axes that only the echo workload uses.
const ECHO_AXES: &[&str] = &["proto", "server", "frame_size"];
/// Axes that only packet-rate workloads (flood, flow, ping, and the searches) use.
const PACKET_AXES: &[&str] = &[
    "size",
    "rate",
    "flows",
    "threads",
    "sink_threads",
    "batch",
    "sender",
    "sink",
    "count",
    "interval",
    "fragment",
];
/// Axes that only searches (ndr, degrade) use.
const SEARCH_AXES: &[&str] = &[
    "loss",
    "precision",
    "max_rate",
    "max_trials",
    "max_rules",
    "resolution",
];

/// The axes a scenario may sweep, in the order the cross product nests them.
pub fn all_axes() -> impl Iterator<Item = &'static str> {
    [COMMON_AXES, ECHO_AXES, PACKET_AXES, SEARCH_AXES]
        .into_iter()
        .flatten()
        .copied()
}

/// Default of each axis when a scenario does not name it.
fn axis_default(axis: &str, w: Workload) -> &'static str {
    match (axis, w) {
        ("size", Workload::Flow | Workload::Degrade) => "128",
        ("size", Workload::Ping) => "8",
        ("size", _) => "18",
        ("rate", Workload::Flow | Workload::Degrade) => "15M",
        ("loss", Workload::Degrade) => "0.1%",
        ("loss", _) => "0",
        ("precision", _) => "2%",
        ("max_rate", _) => "max",
        ("max_trials", _) => "20",
        ("max_rules", _) => "20000",
        ("resolution", _) => "250",
        ("rate", _) => "max",
        ("flows" | "threads" | "sink_threads", _) => "1",
        ("batch", _) => "64",
        ("sender", _) => "udp",
        ("sink", _) => "socket",
        ("interval", _) => "0",
        ("fragment", _) => "false",
        ("clients", Workload::Echo) => "5",
        ("clients", _) => "1",
        _ => axis_default_echo(axis),
    }
}

fn axis_default_echo(axis: &str) -> &'static str {
    match axis {
        "topology" => "forward",
        "engine" => "none",
        "model" => "linear",
        "rules" => "0",
        "position" => "last",
        "proto" => "tcp",
        "family" => "4",
        "server" => "epoll",
        "clients" => "5",
        "frame_size" => "64",
        "duration" => "5",
        "timeout_ms" => "500",
        _ => "",
    }
}

/// Check one axis value; `Err` is the message without location.
fn check_axis(axis: &str, t: &str) -> Result<(), String> {
    let e = |r: Result<(), String>| r;
    match axis {
        "topology" => e(t.parse::<Topology>().map(|_| ())),
        "engine" => e(crate::cli::engine(t).map(|_| ())),
        "model" => e(crate::cli::model(t).map(|_| ())),
        "rules" => e(crate::cli::rule_count(t).map(|_| ())),
        "position" => e(crate::cli::position(t).map(|_| ())),
        "proto" => t.parse::<Proto>().map(|_| ()).map_err(|e| e.0),
        "family" => t.parse::<Family>().map(|_| ()).map_err(|e| e.0),
        "server" => t.parse::<ServerMode>().map(|_| ()).map_err(|e| e.0),
        "clients" => parse_clients(t).map(|_| ()),
        "frame_size" => t.parse::<FrameSize>().map(|_| ()).map_err(|e| e.0),
        "duration" => parse_duration(t).map(|_| ()),
        "timeout_ms" => parse_timeout_ms(t).map(|_| ()),
        "size" => t.parse::<proto::PacketSize>().map(|_| ()).map_err(|e| e.0),
        "rate" => t.parse::<proto::Rate>().map(|_| ()).map_err(|e| e.0),
        "flows" | "threads" | "sink_threads" | "batch" => parse_count(t).map(|_| ()),
        "count" if t.is_empty() => Ok(()),
        "count" => parse_count(t).map(|_| ()),
        "sender" => t.parse::<SenderPath>().map(|_| ()),
        "sink" => t.parse::<SinkKind>().map(|_| ()),
        "interval" => parse_interval(t).map(|_| ()),
        "fragment" => parse_bool(t).map(|_| ()),
        "loss" | "precision" => crate::cli::ratio(t).map(|_| ()),
        "max_rate" => t.parse::<proto::Rate>().map(|_| ()).map_err(|e| e.0),
        "max_trials" | "resolution" => parse_count(t).map(|_| ()),
        "max_rules" => crate::cli::rule_count(t).map(|_| ()),
        _ => Ok(()),
    }
}

pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.trim() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("'{s}' is not true or false")),
    }
}

/// A positive whole number (flows, threads, batch, count).
pub fn parse_count(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(v) if v > 0 => Ok(v),
        _ => Err(format!("'{s}' is not a whole number of at least 1")),
    }
}

/// A gap between probes: `0`, `10ms`, `1s`, `250us` → nanoseconds.
pub fn parse_interval(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t == "0" {
        return Ok(0);
    }
    if let Some(us) = t.strip_suffix("us") {
        return us
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0 && *v <= 60e6)
            .map(|v| (v * 1e3) as u64)
            .ok_or_else(|| format!("'{s}' is not an interval (like 0, 250us, 10ms, 1s)"));
    }
    parse_duration(t)
        .map(|v| (v * 1e9) as u64)
        .map_err(|_| format!("'{s}' is not an interval (like 0, 250us, 10ms, 1s)"))
}

/// Build one trial's parameters from one value per axis (all already checked).
fn params_from(v: &BTreeMap<&str, String>, seed: u64) -> Result<TrialParams, String> {
    let get = |a: &str| v.get(a).map(String::as_str).unwrap_or("");
    let spec = |e: proto::ParseSpecError| e.0;
    let topology: Topology = get("topology").parse()?;
    let frame: FrameSize = get("frame_size").parse().map_err(spec)?;
    let import = Some(get("import").to_string()).filter(|s| !s.is_empty());
    let mut model = crate::cli::model(get("model"))?;
    if import.is_some() && !v.contains_key("model_given") {
        model = firewall::models::Model::Import;
    }
    let workload: Workload = get("workload").parse()?;
    let packet = (workload != Workload::Echo)
        .then(|| -> Result<PacketParams, String> {
            let spec = |e: proto::ParseSpecError| e.0;
            Ok(PacketParams {
                size: get("size").parse().map_err(spec)?,
                rate: get("rate").parse().map_err(spec)?,
                flows: parse_count(get("flows"))?,
                threads: parse_count(get("threads"))?,
                sink_threads: parse_count(get("sink_threads"))?,
                batch: parse_count(get("batch"))?,
                sender: get("sender").parse()?,
                sink: get("sink").parse()?,
                count: Some(get("count"))
                    .filter(|c| !c.is_empty())
                    .map(|c| parse_count(c).map(u64::from))
                    .transpose()?,
                interval_ns: parse_interval(get("interval"))?,
                fragment: parse_bool(get("fragment"))?,
            })
        })
        .transpose()?;
    let search = matches!(workload, Workload::Ndr | Workload::Degrade)
        .then(|| -> Result<crate::search::SearchParams, String> {
            Ok(crate::search::SearchParams {
                loss: crate::cli::ratio(get("loss"))?,
                precision: crate::cli::ratio(get("precision"))?,
                max_rate: Some(get("max_rate").parse::<proto::Rate>().map_err(|e| e.0)?)
                    .filter(|r| *r != proto::Rate::Max),
                max_trials: parse_count(get("max_trials"))?,
                max_rules: crate::cli::rule_count(get("max_rules"))?,
                resolution: parse_count(get("resolution"))?,
            })
        })
        .transpose()?;
    let mut rules = crate::cli::rule_count(get("rules"))?;
    if let (Workload::Degrade, Some(sp)) = (workload, &search) {
        // The search varies the rule count; pre-flight renders the largest.
        rules = sp.max_rules;
    }
    let mut duration_s = parse_duration(get("duration"))?;
    if let Some(k) = packet.as_ref().filter(|_| workload == Workload::Ping) {
        let timeout = parse_timeout_ms(get("timeout_ms"))?;
        duration_s = crate::packet::ping_duration(duration_s, k.count, k.interval_ns, timeout);
    }
    Ok(TrialParams {
        topology,
        clients: parse_clients(get("clients"))?,
        duration_s,
        frame_size: frame.to_string(),
        frame,
        proto: if workload == Workload::Echo {
            get("proto").parse().map_err(spec)?
        } else {
            Proto::Udp
        },
        family: get("family").parse().map_err(spec)?,
        server: get("server").parse().map_err(spec)?,
        timeout_ms: parse_timeout_ms(get("timeout_ms"))?,
        seed,
        engine: crate::cli::engine(get("engine"))?,
        model,
        rules,
        position: crate::cli::position(get("position"))?,
        chain: crate::rules::chain_of(topology),
        import,
        workload,
        packet,
        search,
        adaptive: None,
        label: v.get("label").filter(|l| !l.is_empty()).cloned(),
    })
}

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn at(&self, span: std::ops::Range<usize>, field: &str, msg: impl std::fmt::Display) -> String {
        let before = &self.text[..span.start.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
        format!("{}:{line}:{col}: {field}: {msg}", self.file)
    }
}

fn value_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Parse scenario text. `file` is used in messages only.
pub fn parse(file: &str, text: &str, seed_if_unset: u64) -> Result<Plan, String> {
    let cx = Ctx { file, text };
    let raw: Raw = toml::from_str(text).map_err(|e| match e.span() {
        Some(span) => cx.at(span, "scenario", e.message()),
        None => format!("{file}: {}", e.message()),
    })?;
    let workload = match &raw.workload {
        None => Workload::Echo,
        Some(w) => w
            .get_ref()
            .parse::<Workload>()
            .map_err(|e| cx.at(w.span(), "workload", e))?,
    };
    let repetitions = match &raw.repetitions {
        None => 1,
        Some(r) if (1..=1000).contains(r.get_ref()) => *r.get_ref() as u32,
        Some(r) => return Err(cx.at(r.span(), "repetitions", "must be 1..1000")),
    };
    let random = match &raw.order {
        None => false,
        Some(o) => match o.get_ref().as_str() {
            "sequential" => false,
            "random" => true,
            other => {
                return Err(cx.at(
                    o.span(),
                    "order",
                    format!("'{other}' is not sequential or random"),
                ))
            }
        },
    };
    let seed = match &raw.seed {
        None => seed_if_unset,
        Some(s) if *s.get_ref() >= 0 => *s.get_ref() as u64,
        Some(s) => return Err(cx.at(s.span(), "seed", "must not be negative")),
    };
    let mut pinning = Pinning::default();
    let mut testbed = None;
    if let Some(tb) = &raw.testbed {
        let pin = |v: &Option<Spanned<String>>, field: &str| -> Result<Option<String>, String> {
            match v {
                None => Ok(None),
                Some(s) => traffic::sys::parse_cpus(s.get_ref())
                    .map(|c| Some(traffic::sys::format_cpus(&c)))
                    .map_err(|e| cx.at(s.span(), field, e)),
            }
        };
        pinning.client = pin(&tb.pin_client, "testbed.pin_client")?;
        pinning.gateway = pin(&tb.pin_gateway, "testbed.pin_gateway")?;
        pinning.server = pin(&tb.pin_server, "testbed.pin_server")?;
        if let Some(n) = &tb.name {
            crate::testbed::check_name(n.get_ref())
                .map_err(|e| cx.at(n.span(), "testbed.name", format!("{e:#}")))?;
            testbed = Some(n.get_ref().clone());
        }
    }

    // Each axis: list of (text, span) values, defaulting to one value.
    let mut axes: BTreeMap<&str, Vec<(String, std::ops::Range<usize>)>> = BTreeMap::new();
    for (k, v) in raw.params.iter().flatten() {
        let key = k.get_ref().as_str();
        let Some(axis) = all_axes().find(|a| *a == key) else {
            return Err(cx.at(
                k.span(),
                &format!("params.{key}"),
                format!(
                    "unknown parameter (known: {})",
                    all_axes().collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        let search = matches!(workload, Workload::Ndr | Workload::Degrade);
        let foreign = if workload == Workload::Echo {
            PACKET_AXES.contains(&axis) || SEARCH_AXES.contains(&axis)
        } else {
            ECHO_AXES.contains(&axis) || (!search && SEARCH_AXES.contains(&axis))
        };
        if foreign {
            return Err(cx.at(
                k.span(),
                &format!("params.{key}"),
                format!("not a parameter of the {} workload", workload.as_str()),
            ));
        }
        let field = format!("params.{key}");
        let items: Vec<toml::Value> = match v.get_ref() {
            toml::Value::Array(a) if a.is_empty() => {
                return Err(cx.at(v.span(), &field, "empty list: give at least one value"))
            }
            toml::Value::Array(a) => a.clone(),
            other => vec![other.clone()],
        };
        let mut vals = Vec::new();
        for it in items {
            let t = value_text(&it).ok_or_else(|| {
                cx.at(
                    v.span(),
                    &field,
                    format!("'{it}' is not a string or number"),
                )
            })?;
            vals.push((t, v.span()));
        }
        axes.insert(axis, vals);
    }
    // Every axis: its values (checked, with their location for messages).
    let mut values: Vec<(&str, Vec<String>)> = Vec::new();
    for axis in all_axes() {
        let field = format!("params.{axis}");
        let vals = axes
            .get(axis)
            .cloned()
            .unwrap_or_else(|| vec![(axis_default(axis, workload).to_string(), 0..0)]);
        if axis == "import" && vals.len() > 1 {
            return Err(cx.at(
                vals[1].1.clone(),
                &field,
                "give one import file per scenario",
            ));
        }
        let mut checked = Vec::new();
        for (t, span) in vals {
            check_axis(axis, &t).map_err(|e| cx.at(span, &field, e))?;
            checked.push(t);
        }
        values.push((axis, checked));
    }
    // Cases: each a set of single values overriding axes (checked like [params]).
    let mut cases: Vec<BTreeMap<&str, String>> = Vec::new();
    for (ci, case) in raw.case.iter().flatten().enumerate() {
        let mut one = BTreeMap::new();
        for (k, v) in case {
            let key = k.get_ref().as_str();
            let field = format!("case[{}].{key}", ci + 1);
            if key == "label" {
                let t = value_text(v.get_ref())
                    .ok_or_else(|| cx.at(v.span(), &field, "give the label as a string"))?;
                one.insert("label", t);
                continue;
            }
            let Some(axis) = all_axes().find(|a| *a == key) else {
                return Err(cx.at(
                    k.span(),
                    &field,
                    format!(
                        "unknown parameter (known: label, {})",
                        all_axes().collect::<Vec<_>>().join(", ")
                    ),
                ));
            };
            if axes.contains_key(axis) {
                return Err(cx.at(
                    k.span(),
                    &field,
                    "also set in [params]: set an axis in one place",
                ));
            }
            let t = match v.get_ref() {
                toml::Value::Array(_) => {
                    return Err(cx.at(v.span(), &field, "a case takes single values, not lists"))
                }
                other => value_text(other).ok_or_else(|| {
                    cx.at(
                        v.span(),
                        &field,
                        format!("'{other}' is not a string or number"),
                    )
                })?,
            };
            check_axis(axis, &t).map_err(|e| cx.at(v.span(), &field, e))?;
            one.insert(axis, t);
        }
        cases.push(one);
    }
    if cases.is_empty() {
        cases.push(BTreeMap::new());
    }
    // Cross product, first axis outermost (an odometer over the value indices).
    let mut combos = Vec::new();
    let mut idx = vec![0usize; values.len()];
    loop {
        let mut one: BTreeMap<&str, String> = values
            .iter()
            .zip(&idx)
            .map(|((a, v), &i)| (*a, v[i].clone()))
            .collect();
        if axes.contains_key("model") {
            one.insert("model_given", String::new());
        }
        one.insert("workload", workload.as_str().to_string());
        for (ci, case) in cases.iter().enumerate() {
            let mut with = one.clone();
            let mut model_given = axes.contains_key("model");
            for (k, v) in case {
                with.insert(k, v.clone());
                model_given |= *k == "model";
            }
            if model_given {
                with.insert("model_given", String::new());
            }
            let at = if case.is_empty() {
                "params".to_string()
            } else {
                format!("case[{}]", ci + 1)
            };
            let params = params_from(&with, seed).map_err(|e| format!("{file}: {at}: {e}"))?;
            check_combination(&params).map_err(|e| format!("{file}: {at}: {e}"))?;
            combos.push(params);
        }
        let mut k = values.len();
        loop {
            if k == 0 {
                break;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < values[k].1.len() {
                break;
            }
            idx[k] = 0;
        }
        if idx.iter().all(|&i| i == 0) {
            break;
        }
    }
    let mut trials = Vec::new();
    for rep in 1..=repetitions {
        for p in &combos {
            trials.push(PlannedTrial {
                key: trial_key(p, rep),
                rep,
                params: p.clone(),
            });
        }
    }
    let warmup_s = match &raw.warmup {
        None => None,
        Some(w) => Some(
            value_text(w.get_ref())
                .ok_or_else(|| "not a duration".to_string())
                .and_then(|t| parse_duration(&t))
                .map_err(|e| cx.at(w.span(), "warmup", e))?,
        ),
    };
    if let Some(a) = &raw.adaptive {
        let adaptive = parse_adaptive(&cx, a)?;
        for t in trials.iter_mut() {
            t.params.adaptive = Some(adaptive.clone());
            check_adaptive(&t.params).map_err(|e| cx.at(a.span(), "adaptive", e))?;
            t.key = trial_key(&t.params, t.rep);
        }
    }
    let baseline = match &raw.baseline {
        None => None,
        Some(b) => Some(parse_baseline(&cx, b, &trials)?),
    };
    if random {
        let mut rng = traffic::rng::Rng::new(seed);
        for i in (1..trials.len()).rev() {
            let j = rng.range_inclusive(0, i as u32) as usize;
            trials.swap(i, j);
        }
    }
    Ok(Plan {
        name: raw.name.unwrap_or_else(|| file.to_string()),
        description: raw.description.unwrap_or_default(),
        seed,
        repetitions,
        pinning,
        testbed,
        topology_given: axes.contains_key("topology"),
        warmup_s,
        baseline,
        trials,
    })
}

fn parse_adaptive(
    cx: &Ctx,
    a: &Spanned<BTreeMap<Spanned<String>, Spanned<toml::Value>>>,
) -> Result<crate::trial::Adaptive, String> {
    let mut precision = None;
    let mut max_s = 60.0;
    for (k, v) in a.get_ref() {
        let field = format!("adaptive.{}", k.get_ref());
        let t = value_text(v.get_ref())
            .ok_or_else(|| cx.at(v.span(), &field, "give a string or number"))?;
        match k.get_ref().as_str() {
            "precision" => {
                precision = Some(
                    crate::cli::ratio(&t)
                        .and_then(|r| {
                            if r > 0.0 {
                                Ok(r)
                            } else {
                                Err("must be above 0".into())
                            }
                        })
                        .map_err(|e| cx.at(v.span(), &field, e))?,
                )
            }
            "max_duration" => max_s = parse_duration(&t).map_err(|e| cx.at(v.span(), &field, e))?,
            _ => {
                return Err(cx.at(
                    k.span(),
                    &field,
                    "unknown key (known: precision, max_duration)",
                ))
            }
        }
    }
    let precision =
        precision.ok_or_else(|| cx.at(a.span(), "adaptive", "needs precision, e.g. \"1%\""))?;
    Ok(crate::trial::Adaptive { precision, max_s })
}

/// Adaptive length needs a role that counts while the trial runs.
pub fn check_adaptive(p: &TrialParams) -> Result<(), String> {
    let Some(a) = &p.adaptive else {
        return Ok(());
    };
    let counted = match p.workload {
        Workload::Echo => true,
        Workload::Flood | Workload::Flow => p
            .packet
            .as_ref()
            .is_some_and(|k| k.sink == crate::packet::SinkKind::Socket),
        _ => false,
    };
    if !counted {
        return Err(format!(
            "adaptive length works for echo, and flood/flow with a socket sink, not {}",
            p.workload.as_str()
        ));
    }
    if a.max_s < p.duration_s {
        return Err(format!(
            "the longest adaptive trial ({} s) is shorter than the duration ({} s)",
            a.max_s, p.duration_s
        ));
    }
    Ok(())
}

/// The baseline: known axes with valid values, and at least one planned trial whose
/// parameters have them all (bad input otherwise, naming the line).
fn parse_baseline(
    cx: &Ctx,
    b: &Spanned<BTreeMap<Spanned<String>, Spanned<toml::Value>>>,
    trials: &[PlannedTrial],
) -> Result<serde_json::Value, String> {
    let mut out = serde_json::Map::new();
    for (k, v) in b.get_ref() {
        let key = k.get_ref().as_str();
        let field = format!("baseline.{key}");
        let axis = all_axes().find(|a| *a == key).ok_or_else(|| {
            cx.at(
                k.span(),
                &field,
                "unknown parameter (use the axis names of [params], or label)",
            )
        });
        let t = value_text(v.get_ref())
            .ok_or_else(|| cx.at(v.span(), &field, "give a single string or number"))?;
        match (key, axis) {
            ("label", _) => {}
            (_, Ok(axis)) => check_axis(axis, &t).map_err(|e| cx.at(v.span(), &field, e))?,
            (_, Err(e)) => return Err(e),
        }
        out.insert(key.to_string(), serde_json::Value::String(t));
    }
    let baseline = serde_json::Value::Object(out);
    if !trials
        .iter()
        .any(|t| matches_baseline(&t.params, &baseline))
    {
        return Err(cx.at(b.span(), "baseline", "matches no trial of this scenario"));
    }
    Ok(baseline)
}

/// Whether a trial's parameters carry every baseline value (compared as text, so
/// `rules = 0` matches `rules = "0"`).
pub fn matches_baseline(p: &TrialParams, baseline: &serde_json::Value) -> bool {
    let Ok(v) = serde_json::to_value(p) else {
        return false;
    };
    let text = |x: &serde_json::Value| match x {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    baseline.as_object().is_some_and(|b| {
        b.iter().all(|(k, want)| {
            let got = v.get(k).or_else(|| v.get("packet").and_then(|p| p.get(k)));
            got.is_some_and(|g| text(g) == text(want))
        })
    })
}

/// FNV-1a over the canonical JSON of the parameters and the repetition.
pub fn trial_key(p: &TrialParams, rep: u32) -> String {
    let canon = serde_json::to_string(p).unwrap_or_default();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in canon.bytes().chain(rep.to_be_bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
repetitions = 2
order = "sequential"
seed = 7

[testbed]
pin_client = "0"

[params]
proto = ["tcp", "udp"]
family = [4, 6]
clients = 5
frame_size = [64, "64-1024"]
duration = "1s"
"#;

    #[test]
    fn cross_product_and_repetitions() {
        let p = parse("s.toml", GOOD, 0).unwrap();
        assert_eq!(p.trials.len(), 2 * 2 * 2 * 2);
        assert_eq!(p.seed, 7);
        assert_eq!(p.pinning.client.as_deref(), Some("0"));
        let first = &p.trials[0].params;
        assert_eq!((first.proto, first.family), (Proto::Tcp, Family::V4));
        assert_eq!(first.duration_s, 1.0);
        assert_eq!(first.topology, Topology::Forward);
        let keys: std::collections::HashSet<_> = p.trials.iter().map(|t| &t.key).collect();
        assert_eq!(keys.len(), p.trials.len(), "keys unique");
        assert_eq!(p.trials[0].rep, 1);
        assert_eq!(p.trials[8].rep, 2);
    }

    #[test]
    fn random_order_is_a_seeded_permutation() {
        let text = GOOD.replace("sequential", "random");
        let a = parse("s.toml", &text, 0).unwrap();
        let b = parse("s.toml", &text, 0).unwrap();
        let seq = parse("s.toml", GOOD, 0).unwrap();
        assert_eq!(a.trials, b.trials);
        assert_ne!(a.trials, seq.trials);
        let mut ka: Vec<_> = a.trials.iter().map(|t| t.key.clone()).collect();
        let mut ks: Vec<_> = seq.trials.iter().map(|t| t.key.clone()).collect();
        ka.sort();
        ks.sort();
        assert_eq!(ka, ks);
    }

    #[test]
    fn trial_keys_are_stable() {
        let p = parse("s.toml", GOOD, 0).unwrap();
        // A change here breaks resuming old runs: do it only with a schema change.
        assert_eq!(p.trials[0].key, trial_key(&p.trials[0].params, 1));
        assert_ne!(
            trial_key(&p.trials[0].params, 1),
            trial_key(&p.trials[0].params, 2)
        );
    }

    fn err(text: &str) -> String {
        parse("bad.toml", text, 0).unwrap_err()
    }

    #[test]
    fn errors_name_file_line_and_field() {
        assert_eq!(
            err("[params]\nproto = [\"tcp\", \"icmp\"]\n"),
            "bad.toml:2:9: params.proto: unknown protocol 'icmp' (expected tcp, udp or sctp)"
        );
        assert!(err("[params]\nclients = 0\n").starts_with("bad.toml:2:11: params.clients:"));
        assert!(
            err("[params]\nspeed = 3\n").contains("bad.toml:2:1: params.speed: unknown parameter")
        );
        assert!(err("[params]\nfamily = []\n").contains("params.family: empty list"));
        assert!(err("[params]\nduration = \"soon\"\n")
            .contains("params.duration: 'soon' is not a duration"));
        assert!(err("[params]\nframe_size = 16\n").contains("below the 28-byte frame header"));
        assert!(err("[params]\nserver = \"fork\"\n").contains("params.server"));
        assert!(
            err("colour = 1\n").starts_with("bad.toml:1:1:"),
            "{}",
            err("colour = 1\n")
        );
        assert!(err("[params\n").starts_with("bad.toml:1:"));
        assert!(err("workload = \"storm\"\n").contains("unknown workload 'storm'"));
        assert!(err("workload = \"flood\"\n[params]\nserver = \"epoll\"\n")
            .contains("params.server: not a parameter of the flood workload"));
        assert!(err("[params]\nrate = \"1M\"\n").contains("not a parameter of the echo workload"));
        assert!(err("workload = \"flood\"\n[params]\nrate = \"fast\"\n")
            .starts_with("bad.toml:3:8: params.rate: rate 'fast' is not a rate"));
        assert!(err("workload = \"flood\"\n[params]\nsize = 1473\n")
            .contains("above the 1500-byte MTU"));
        assert!(err("workload = \"flow\"\n[params]\nrate = \"max\"\n").contains("needs a rate"));
        assert!(
            err("workload = \"flood\"\n[params]\nthreads = 500\nflows = 500\n")
                .contains("threads must be")
        );
        assert!(
            err("workload = \"flood\"\n[params]\nfamily = 6\nsize = \"frame:64\"\n")
                .contains("below the 66 bytes")
        );
        assert!(err("order = \"backwards\"\n").contains("order:"));
        assert!(err("[testbed]\npin_client = \"x\"\n").contains("testbed.pin_client"));
        assert!(
            err("[params]\nproto = \"udp\"\nframe_size = 65536\n").contains("largest UDP payload")
        );
    }

    #[test]
    fn cases_cross_params_and_carry_labels() {
        let text = r#"
workload = "flood"
[params]
family = [4, 6]
[[case]]
label = "no firewall"
engine = "none"
[[case]]
label = "raw drop after 5"
engine = "iptables-legacy"
model = "raw-drop"
rules = 5
sink = "gateway"
"#;
        let p = parse("s.toml", text, 1).unwrap();
        assert_eq!(p.trials.len(), 4);
        let t = &p.trials[1].params;
        assert_eq!(t.label.as_deref(), Some("raw drop after 5"));
        assert_eq!(
            (t.engine, t.model, t.rules),
            (
                firewall::Engine::IptablesLegacy,
                firewall::models::Model::RawDrop,
                5
            )
        );
        assert_eq!(t.packet.as_ref().unwrap().sink, SinkKind::Gateway);
        assert_eq!(p.trials[0].params.label.as_deref(), Some("no firewall"));
        assert_eq!(p.trials[2].params.family, Family::V6);
        assert!(
            err("workload = \"flood\"\n[params]\nrules = 5\n[[case]]\nrules = 6\n")
                .contains("case[1].rules: also set in [params]")
        );
        assert!(err("workload = \"flood\"\n[[case]]\nrate = [1, 2]\n").contains("single values"));
        assert!(
            err("workload = \"flood\"\n[[case]]\nlabel = \"x\"\nspeed = 2\n")
                .starts_with("bad.toml:4:1: case[1].speed: unknown parameter")
        );
        assert!(err("workload = \"flood\"\n[[case]]\nengine = \"pf\"\n").contains("case[1].engine"));
    }

    #[test]
    fn searches_as_workloads() {
        let p = parse(
            "s.toml",
            "workload = \"ndr\"\n[params]\nsize = \"frame:64\"\nprecision = \"1%\"\nmax_rate = \"50kpps\"\n",
            1,
        )
        .unwrap();
        let t = &p.trials[0].params;
        let sp = t.search.as_ref().unwrap();
        assert_eq!((sp.loss, sp.precision), (0.0, 0.01));
        assert_eq!(sp.max_rate, Some(proto::Rate::Pps(50_000.0)));
        let p = parse(
            "s.toml",
            "workload = \"degrade\"\n[params]\nengine = \"nft\"\nmax_rules = 5000\n",
            1,
        )
        .unwrap();
        let t = &p.trials[0].params;
        assert_eq!(t.rules, 5000, "pre-flight renders the largest rule set");
        assert_eq!(t.search.as_ref().unwrap().loss, 0.001);
        assert_eq!(t.packet.as_ref().unwrap().rate, proto::Rate::Bps(15e6));
        assert!(
            err("workload = \"degrade\"\n[params]\nmax_rules = 5\n").contains("choose an engine")
        );
        assert!(err("workload = \"flood\"\n[params]\nprecision = \"1%\"\n")
            .contains("params.precision: not a parameter of the flood workload"));
        assert!(err("workload = \"ndr\"\n[params]\nloss = \"200%\"\n").contains("params.loss"));
    }

    #[test]
    fn baseline_and_warmup() {
        let text = "warmup = \"1s\"\nbaseline = { engine = \"none\" }\n[params]\nengine = [\"none\", \"nft\"]\nrules = [0, 100]\n";
        let p = parse("s.toml", text, 1).unwrap();
        assert_eq!(p.warmup_s, Some(1.0));
        assert_eq!(p.baseline, Some(serde_json::json!({"engine": "none"})));
        let n = p
            .trials
            .iter()
            .filter(|t| matches_baseline(&t.params, p.baseline.as_ref().unwrap()))
            .count();
        assert_eq!(n, 2);
        assert!(
            err("baseline = { engine = \"nft\" }\n[params]\nengine = \"none\"\n")
                .starts_with("bad.toml:1:12: baseline: matches no trial")
        );
        assert!(err("baseline = { colour = 1 }\n").contains("baseline.colour: unknown parameter"));
        assert!(err("baseline = { engine = \"pf\" }\n").contains("baseline.engine"));
        assert!(err("warmup = \"soon\"\n").contains("warmup:"));
        // Numbers match numbers.
        let p = parse(
            "s.toml",
            "baseline = { rules = 0 }\n[params]\nrules = [0, 5]\nengine = \"nft\"\n",
            1,
        )
        .unwrap();
        assert!(matches_baseline(
            &p.trials[0].params,
            p.baseline.as_ref().unwrap()
        ));
    }

    #[test]
    fn adaptive_length() {
        let p = parse(
            "s.toml",
            "workload = \"flood\"\nadaptive = { precision = \"1%\", max_duration = \"30s\" }\n",
            1,
        )
        .unwrap();
        let a = p.trials[0].params.adaptive.as_ref().unwrap();
        assert_eq!((a.precision, a.max_s), (0.01, 30.0));
        assert!(err("adaptive = { max_duration = 5 }\n").contains("needs precision"));
        assert!(err("adaptive = { precision = \"1%\", max_duration = 1 }\n")
            .contains("shorter than the duration"));
        assert!(
            err("workload = \"ping\"\nadaptive = { precision = \"1%\" }\n").contains("not ping")
        );
        assert!(err("adaptive = { precision = 0 }\n").contains("adaptive.precision"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10"), Ok(10.0));
        assert_eq!(parse_duration("500ms"), Ok(0.5));
        assert_eq!(parse_duration("1m"), Ok(60.0));
        assert_eq!(parse_duration("2.5s"), Ok(2.5));
        for bad in ["0", "-1", "abc", "", "1h", "nan", "inf"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
