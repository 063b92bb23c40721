//! From stored trials to configurations: repetitions grouped by their parameters (the
//! trial seed left out), metric aggregates, and the pairing with the run's baseline;
//! accessors of stored results (`conn_of`, `search_of`, `lookup`).
//!
//! Owns: `Config` and the metric extraction from stored trial rows.
//! Must not: build figures or tables; it imports only `stats` from this crate.

use crate::stats::Summary;
use results::stored::{ConnStored, Phase, SearchKind, SearchStored};
use results::{Status, StoredParams, StoredTrial, StoredWorkload};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use store::{RunRow, TrialRow};

/// A stored trial with its status, results and parameters read typed, once, where
/// the report loads trials: every reader looks at `stored` and `p`, not at JSON keys.
/// The row's other columns read through (`Deref`).
#[derive(Debug, Clone)]
pub struct Trial {
    pub row: TrialRow,
    /// The row's status word, typed (a word fwbench does not know reads as `failed`;
    /// its text stays in `row.status`).
    pub status: Status,
    /// `results`, typed.
    pub stored: StoredTrial,
    /// `params`, the fields read by name, typed.
    pub p: StoredParams,
    /// The row's workload, typed: what readers ask of it (`is_stream`, `is_conn`, …)
    /// instead of comparing names (its text stays in `row.workload`).
    pub workload: StoredWorkload,
}

impl Trial {
    pub fn new(row: TrialRow) -> Trial {
        Trial {
            status: row.status.parse().unwrap_or(Status::Failed),
            stored: StoredTrial::read(&row.results),
            p: StoredParams::read(&row.params),
            workload: StoredWorkload::read(&row.workload),
            row,
        }
    }

    /// Who of fwbench's own limited its rate (`packet.limited_by`: its sender or its
    /// sink): then its packets/s are fwbench's limit, not the gateway's. `None`
    /// otherwise (the gateway, nothing, a shared CPU, or not judged).
    pub fn fwbench_limited(&self) -> Option<results::LimitedBy> {
        self.stored
            .packet
            .as_ref()?
            .limited_by
            .as_ref()?
            .by
            .filter(|b| b.is_fwbench())
    }

    /// It passed every packet offered (`packet.limited_by` is "nothing": a paced
    /// stream below what the gateway forwards): its packets/s are the sender's pace, a
    /// floor of the gateway's rate, not a time the gateway takes per packet.
    pub fn paced_through(&self) -> bool {
        let by = self
            .stored
            .packet
            .as_ref()
            .and_then(|p| p.limited_by.as_ref());
        by.and_then(|l| l.by) == Some(results::LimitedBy::Nothing)
    }

    /// The search it was a step of (`results.step_of`): its rate probes the search,
    /// it measures no configuration asked for.
    pub fn step_of(&self) -> Option<results::StepOf> {
        self.stored.step_of
    }

    /// Its case name: the label, else the engine (text, as stored).
    pub fn label_or_engine(&self) -> Option<String> {
        self.p.label.clone().or_else(|| self.p.engine.clone())
    }
}

impl std::ops::Deref for Trial {
    type Target = TrialRow;
    fn deref(&self) -> &TrialRow {
        &self.row
    }
}

/// Kernel CPU time per received packet (ns), from a trial's samples (see
/// [`cpu_ns_per_packet`]): the cost model's second estimator.
pub const CPU_NS_PER_PACKET: &str = "cpu_ns_per_packet";

/// Per-trial metrics, by name: (name, unit, extractor). Derived ones included.
type Extract = fn(&Trial) -> Option<f64>;

/// The metrics aggregated per configuration (name, what it is).
pub const METRICS: &[(&str, Extract)] = &[
    (THROUGHPUT_BPS, |t| t.headline.throughput_bps),
    ("throughput_per_client_bps", |t| {
        let n = t.p.clients.filter(|n| *n > 0.0)?;
        Some(t.headline.throughput_bps? / n)
    }),
    ("transactions_per_s", |t| t.headline.transactions_per_s),
    ("rtt_p50_us", |t| t.headline.rtt_p50_us),
    ("rtt_p99_us", |t| t.headline.rtt_p99_us),
    (RECEIVED_PPS, |t| t.headline.received_pps),
    ("sent_pps", |t| t.headline.sent_pps),
    ("loss_ratio", |t| t.headline.loss_ratio),
    ("owd_p50_us", |t| t.headline.owd_p50_us),
    ("jitter_us", |t| t.headline.jitter_us),
    ("ns_per_packet", |t| {
        t.headline
            .received_pps
            .filter(|p| *p > 0.0)
            .map(|p| 1e9 / p)
    }),
    // Connection workloads (sessions, bulk, http, connections): from `results.conn`.
    (SESSIONS_PER_S, |t| conn_f64(t, |c| c.sessions_per_s)),
    (GOODPUT_BPS, |t| conn_f64(t, |c| c.goodput_bps)),
    ("net_goodput_bps", net_goodput_bps),
    ("elapsed_s", |t| conn_f64(t, |c| c.elapsed_s)),
    ("session_mean_ms", |t| duration_mean_ms(t, Phase::Session)),
    ("connect_mean_ms", |t| duration_mean_ms(t, Phase::Connect)),
    ("ttfb_mean_ms", |t| duration_mean_ms(t, Phase::Ttfb)),
    ("ttlb_mean_ms", |t| duration_mean_ms(t, Phase::Ttlb)),
    ("hold_reached", |t| {
        conn_f64(t, |c| c.hold.as_ref()?.reached.map(|r| r as f64))
    }),
];

/// Connection trials' sessions per second (a metric name of [`METRICS`]).
pub const SESSIONS_PER_S: &str = "sessions_per_s";
/// Connection trials' goodput, b/s (a metric name of [`METRICS`]).
pub const GOODPUT_BPS: &str = "goodput_bps";
/// Packet trials' received packets/s (a metric name of [`METRICS`]).
pub const RECEIVED_PPS: &str = "received_pps";
/// New-flow trials' admitted new flows/s (one datagram each: the sink's received
/// packets/s), a per-trial sample of `lib::build`.
pub const NEW_FLOWS_PER_S: &str = "new_flows_per_s";
/// New-flow trials' flows whose datagram the sink did not count (offered − admitted).
pub const CT_DROPPED_FLOWS: &str = "ct_dropped_flows";
/// Echo trials' throughput, b/s (a metric name of [`METRICS`]).
pub const THROUGHPUT_BPS: &str = "throughput_bps";

/// The combined outcome of a connection trial (`results.conn`), if it has one.
pub fn conn_of(t: &Trial) -> Option<&ConnStored> {
    t.stored.conn.as_ref()
}

/// A bulk trial's goodput net of session overhead: none when the overhead charged
/// filled the whole run (stored as null; results before 2026-11-27 stored bytes over
/// the 1-ns floor of `transfer_s`, ~10¹⁷ b/s).
pub fn net_goodput_bps(t: &Trial) -> Option<f64> {
    conn_f64(t, |c| c.overhead.as_ref()?.transfer_s).filter(|s| *s > 1e-6)?;
    conn_f64(t, |c| c.overhead.as_ref()?.net_goodput_bps)
}

/// A finite number of `results.conn`.
fn conn_f64(t: &Trial, f: impl Fn(&ConnStored) -> Option<f64>) -> Option<f64> {
    f(conn_of(t)?).filter(|v| v.is_finite())
}

/// Mean of one of `results.conn`'s duration distributions in ms (none without values).
fn duration_mean_ms(t: &Trial, which: Phase) -> Option<f64> {
    let d = durations(t, which)?;
    (d.0 > 0).then_some(d.1 / 1e6)
}

/// A `Durations` of `results.conn` (`session`, `connect`, `ttfb`, `ttlb`) as
/// (count, mean ns, sd ns).
pub fn durations(t: &Trial, which: Phase) -> Option<(u64, f64, f64)> {
    let d = conn_of(t)?.durations(which)?;
    Some((d.count?, d.mean_ns?, d.sd_ns.unwrap_or(0.0)))
}

/// The metric that ranks a configuration, and whether higher is better: what its
/// trials' kind said when they were stored (`store::KindRow`; files from before
/// schema 5 get it from their workload names when opened). Sessions rank by
/// sessions/s (for sequential sessions that is 1 / latency, so the order and the CV
/// are the latency's); http by the mean download time; searches by none.
pub fn main_metric(c: &Config) -> Option<(&str, bool)> {
    let k = c
        .reps
        .iter()
        .chain(&c.failed)
        .chain(&c.unavailable)
        .find_map(|t| t.kind.as_ref())?;
    Some((k.main_metric.as_deref()?, k.main_higher))
}

/// One configuration: all repetitions of one parameter set.
#[derive(Debug, Clone)]
pub struct Config {
    /// Canonical text of `params` (sorted keys): the grouping key.
    pub key: String,
    /// Parameters without `seed`.
    pub params: Value,
    /// `params` flattened to dotted keys with text values (`packet.size.payload` → "64").
    pub flat: BTreeMap<String, String>,
    pub workload: StoredWorkload,
    pub label: Option<String>,
    /// The effective engine (engine, nft family, kind) as the store recorded it.
    pub engine: Option<store::EngineRow>,
    /// Repetitions that succeeded.
    pub reps: Vec<Trial>,
    pub failed: Vec<Trial>,
    pub unavailable: Vec<Trial>,
    /// Aggregates over `reps` whose rate is the gateway's (`gateway_values`), by metric
    /// name (only metrics with values). Gateway CPU
    /// samples appear as `gateway.cpuN.softirq` (mean per trial, then over reps).
    pub metrics: BTreeMap<String, Summary>,
    /// Per repetition values of each metric, every repetition (what was measured).
    pub values: BTreeMap<String, Vec<f64>>,
    /// The same, without what fwbench's own sender or sink limited: the rates (and a
    /// sink's loss) of the repetitions it limited ([`Trial::fwbench_limited`],
    /// [`capped_by`]). `metrics`, the cost model, the ratios, compare and trend read
    /// these.
    pub gateway_values: BTreeMap<String, Vec<f64>>,
    /// Rules installed (mean of the gateway's count over reps) or else `params.rules`.
    pub rules: Option<f64>,
    /// This configuration is (one of) the run's baseline.
    pub is_baseline: bool,
    /// Decrease of the main metric against the paired baseline configuration, in %
    /// (positive = worse; for latency, the increase).
    pub cost_pct: Option<f64>,
    /// Its 95 % CI half-width, from both configurations' CIs (`None` without them).
    pub cost_ci95: Option<f64>,
    /// Why no cost against the paired baseline is stated although both have a mean
    /// ([`Config::rate_doubt`] of either: a rate that is the sender's pace, or the
    /// rest of repetitions fwbench mostly limited).
    pub cost_withheld: Option<RateDoubt>,
}

/// Why a row's rate is no measure of the gateway's ([`Config::rate_doubt`]): no cost
/// of it, or against it, is stated.
#[derive(Debug, Clone, PartialEq)]
pub struct RateDoubt {
    pub by: DoubtedBy,
    /// The sentence, naming the row.
    pub why: String,
}

/// What made a rate no measure of the gateway's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoubtedBy {
    /// fwbench's own sender or sink limited most of its repetitions.
    Fwbench,
    /// Some of its repetitions passed every packet offered: the sender's pace.
    Pace,
}

impl DoubtedBy {
    /// Why the rows it doubts have no cost against their baseline, for a sentence that
    /// counts them ("…: {because}").
    pub fn because(self) -> &'static str {
        match self {
            DoubtedBy::Fwbench => {
                "fwbench's own sender or sink limited most repetitions of it or of its \
                 baseline, so those left are no fair sample of the gateway's rate (see the \
                 run's warnings)"
            }
            DoubtedBy::Pace => {
                "it or its baseline passed every packet offered (in some or all of its \
                 repetitions), so its rate is (partly) the sender's pace, not the gateway's \
                 limit (offer more to measure the gateway)"
            }
        }
    }

    /// How many of `configs` have their cost vs baseline withheld, by what, those
    /// with none left out.
    pub fn count<'a>(configs: impl IntoIterator<Item = &'a Config>) -> Vec<(DoubtedBy, usize)> {
        let by: Vec<DoubtedBy> = configs
            .into_iter()
            .filter_map(|c| Some(c.cost_withheld.as_ref()?.by))
            .collect();
        [DoubtedBy::Fwbench, DoubtedBy::Pace]
            .into_iter()
            .map(|b| (b, by.iter().filter(|x| **x == b).count()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

/// The repetitions of a configuration that fwbench's own sender or sink limited
/// ([`Config::fwbench_limit`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FwbenchLimit {
    /// How many of them.
    pub limited: usize,
    /// Of how many repetitions.
    pub of: usize,
    /// Which of fwbench's roles: "sender", "sink".
    pub by: BTreeSet<&'static str>,
}

impl FwbenchLimit {
    /// "sender", "sink" or "sender and sink".
    pub fn roles(&self) -> String {
        self.by.iter().copied().collect::<Vec<_>>().join(" and ")
    }

    /// More than half: what is left is no fair sample of the gateway's rate.
    pub fn most(&self) -> bool {
        2 * self.limited > self.of
    }

    /// Over every repetition of `configs` (one, or a baseline pooled over several);
    /// `None` where fwbench limited none.
    pub fn over<'a>(configs: impl IntoIterator<Item = &'a Config>) -> Option<FwbenchLimit> {
        let (mut limited, mut of, mut by) = (0, 0, BTreeSet::new());
        for t in configs.into_iter().flat_map(|c| &c.reps) {
            of += 1;
            if let Some(b) = t.fwbench_limited() {
                limited += 1;
                by.insert(b.as_str());
            }
        }
        (limited > 0).then_some(FwbenchLimit { limited, of, by })
    }

    /// Every repetition.
    pub fn all(&self) -> bool {
        self.limited == self.of
    }

    /// "fwbench's sink limited 3 of {who}'s 4 repetitions: the rest are no fair sample
    /// of the gateway's {of} (fwbench's limit may have cut off the faster ones)" where
    /// most were ([`FwbenchLimit::most`]); `None` where fewer were. `of` names the
    /// measure: "rate", "CPU time per packet".
    pub fn doubt(&self, who: &str, of: &str) -> Option<String> {
        self.most().then(|| {
            format!(
                "fwbench's {} limited {} of {who}'s {} repetitions: the rest are no fair \
                 sample of the gateway's {of} (fwbench's limit may have cut off the faster \
                 ones)",
                self.roles(),
                self.limited,
                self.of
            )
        })
    }
}

impl Config {
    /// Recorded with the engine of kind `none` (no firewall, no rules installed): a
    /// baseline, never a series with a cost per rule.
    pub fn no_firewall(&self) -> bool {
        self.engine.as_ref().is_some_and(|e| e.is_none())
    }

    /// The same gateway whatever `rules` says: no firewall, or a model whose rule set
    /// does not grow with the count (`fwmodel::Model::uses_rule_count`: conntrack
    /// alone, hashlimit, …) — two configurations that differ only in it are one
    /// gateway measured twice.
    pub fn ignores_rule_count(&self) -> bool {
        self.same_gateway_whatever(fwmodel::models::Model::uses_rule_count)
    }

    /// Every one of its repetitions was a search's step (`results.step_of`): its rates
    /// probe searches, it is no configuration asked for — the first one's kind of
    /// search. `None` when any repetition was asked for, or it has none.
    pub fn step_of(&self) -> Option<results::StepOf> {
        let kind = self.reps.first()?.step_of()?;
        self.reps
            .iter()
            .all(|t| t.step_of().is_some())
            .then_some(kind)
    }

    /// The same gateway wherever `position` puts the matching rule: no firewall, or a
    /// model that places no rule by it (`fwmodel::Model::uses_position`: conntrack
    /// alone, raw-drop, the string models, …).
    pub fn ignores_position(&self) -> bool {
        self.same_gateway_whatever(fwmodel::models::Model::uses_position)
    }

    /// No firewall, or a model that `uses` says does not use the setting.
    fn same_gateway_whatever(&self, uses: fn(fwmodel::models::Model) -> bool) -> bool {
        self.no_firewall()
            || self
                .param("model")
                .and_then(|m| m.parse::<fwmodel::models::Model>().ok())
                .is_some_and(|m| !uses(m))
    }

    /// How many of its repetitions fwbench's own sender or sink limited (left out of
    /// `metrics` and `gateway_values`).
    pub fn fwbench_limited(&self) -> usize {
        self.reps
            .iter()
            .filter(|t| t.fwbench_limited().is_some())
            .count()
    }

    /// The repetitions whose rate counts: those fwbench's own sender or sink did not
    /// limit (what `gateway_values` holds the rates of).
    pub fn gateway_reps(&self) -> impl Iterator<Item = &Trial> {
        self.reps.iter().filter(|t| t.fwbench_limited().is_none())
    }

    /// Every repetition of it whose rate counts (not limited by fwbench's sender or sink:
    /// its means are made of these) carried its whole offered rate (`packet.limited_by`
    /// is "nothing"): its rate is the sender's pace, so a ratio or a cost of it says
    /// that the gateway was not the limit, not what the gateway costs. A repetition
    /// fwbench limited is left out of the means, so it is left out here too: it does
    /// not make the kept ones a measure of the gateway.
    pub fn paced_throughout(&self) -> bool {
        self.paced().throughout()
    }

    /// How many of its repetitions whose rate counts passed every packet offered
    /// ([`Trial::paced_through`]): where some did, its mean rate is partly the sender's
    /// pace ([`paced_doubt`]).
    pub fn paced(&self) -> Paced {
        Paced::of(self.gateway_reps())
    }

    /// fwbench's own sender or sink limited every repetition (there is one): no rate of
    /// it is the gateway's.
    pub fn limited_throughout(&self) -> bool {
        self.fwbench_limit().is_some_and(|l| l.all())
    }

    /// What fwbench's own sender or sink limited of it, for the sentences that say so
    /// (the cost model's, the advantage ratio's, compare's); `None` when nothing.
    pub fn fwbench_limit(&self) -> Option<FwbenchLimit> {
        FwbenchLimit::over([self])
    }

    /// Why its rate is no measure of the gateway's, to state a cost of it against
    /// another row or of another against it: fwbench's own sender or sink limited most
    /// of its repetitions ([`FwbenchLimit::doubt`]), or some of those kept passed every
    /// packet offered ([`Paced::doubt`]); `None`: its rate is the gateway's. `who` names
    /// it in the sentence ("this row", "the baseline row").
    pub fn rate_doubt(&self, who: &str) -> Option<RateDoubt> {
        let doubt = |by, why: Option<String>| why.map(|why| RateDoubt { by, why });
        doubt(
            DoubtedBy::Fwbench,
            self.fwbench_limit().and_then(|l| l.doubt(who, "rate")),
        )
        .or_else(|| doubt(DoubtedBy::Pace, self.paced().doubt(who)))
    }

    /// fwbench's own sender or sink limited no more than half its repetitions: those
    /// kept are a fair sample of the gateway's rate (never a reference or "best"
    /// otherwise).
    pub fn fair_sample(&self) -> bool {
        !self.fwbench_limit().is_some_and(|l| l.most())
    }

    /// Whether its repetitions kept of metric `m` are a fair sample of the gateway's:
    /// it kept some, and no more than half of those that measured it were left out as
    /// fwbench's own sender's or sink's limit (the rest may be the slower ones: a change
    /// of them would be fwbench's limit). Counted per metric: a sender's limit leaves
    /// out the rate, not the loss.
    pub fn fair_metric(&self, m: &str) -> bool {
        let kept = self.gateway_values.get(m).map_or(0, Vec::len);
        kept > 0 && self.left_out(m) <= kept
    }

    /// Of its repetitions that measured metric `m`, those left out of `gateway_values`
    /// as fwbench's own sender's or sink's limit ([`capped_by`]: per metric).
    pub fn left_out(&self, m: &str) -> usize {
        let kept = self.gateway_values.get(m).map_or(0, Vec::len);
        self.values.get(m).map_or(0, Vec::len).saturating_sub(kept)
    }

    /// Mean of a metric, if measured.
    pub fn mean(&self, metric: &str) -> Option<f64> {
        self.metrics.get(metric).map(|s| s.mean)
    }

    /// A parameter as text (dotted path), if present.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.flat.get(key).map(String::as_str)
    }

    /// A parameter as a number, if present and numeric.
    pub fn param_f64(&self, key: &str) -> Option<f64> {
        self.param(key)?.parse().ok()
    }

    /// Every trial of the configuration, whatever its status.
    pub fn all_trials(&self) -> impl Iterator<Item = &Trial> {
        self.reps
            .iter()
            .chain(self.failed.iter())
            .chain(self.unavailable.iter())
    }
}

/// Sorted-key JSON text of a value, independent of map ordering.
pub fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let body: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&m[*k])))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// A scalar as text: strings unquoted, others as JSON.
pub fn text(v: &Value) -> String {
    match v {
        // Stored text may hold control characters (files from before labels were
        // checked): escaped, never passed on raw.
        Value::String(s) => results::shown(s),
        other => canonical(other),
    }
}

/// Flatten objects to dotted keys; arrays and scalars become text values.
pub fn flatten(v: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    flatten_into(v, "", &mut out);
    out
}

/// Recursive step of [`flatten`].
fn flatten_into(v: &Value, prefix: &str, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten_into(x, &key, out);
            }
        }
        Value::Null => {}
        other => {
            out.insert(prefix.to_string(), text(other));
        }
    }
}

/// The value at a dotted path of a JSON object.
pub fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// Baseline equality: numbers compare as numbers, everything else as text.
pub fn same_value(a: &Value, b: &Value) -> bool {
    let (ta, tb) = (text(a), text(b));
    match (ta.parse::<f64>(), tb.parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => ta == tb,
    }
}

/// Order of configurations in tables: by every parameter (sorted by name), numbers as
/// numbers, so a sweep reads top to bottom whatever order the trials ran in.
fn config_order(a: &Config, b: &Config) -> std::cmp::Ordering {
    let keys: std::collections::BTreeSet<&String> = a.flat.keys().chain(b.flat.keys()).collect();
    for k in keys {
        let (x, y) = (a.flat.get(k), b.flat.get(k));
        let o = match (
            x.and_then(|v| v.parse::<f64>().ok()),
            y.and_then(|v| v.parse::<f64>().ok()),
        ) {
            (Some(p), Some(q)) => p.total_cmp(&q),
            _ => x.cmp(&y),
        };
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    a.workload.cmp(&b.workload)
}

/// Group a run's trials into configurations, sorted by their parameters.
/// `samples` holds per-trial sample means (trial id → metric → value).
pub fn configs(trials: &[Trial], samples: &BTreeMap<i64, BTreeMap<String, f64>>) -> Vec<Config> {
    let mut order: Vec<String> = Vec::new();
    let mut by_key: BTreeMap<String, Config> = BTreeMap::new();
    for t in trials {
        let params = results::stored::configuration(&t.params);
        let key = format!("{}|{}", t.workload, canonical(&params));
        let c = by_key.entry(key.clone()).or_insert_with(|| {
            order.push(key.clone());
            Config::new(key.clone(), params, t.workload.clone(), t.engine.clone())
        });
        // A flagged trial's figures are doubted: listed with the failed and dropped
        // ones, never aggregated into a finding.
        match t.status {
            Status::Ok => c.reps.push(t.clone()),
            Status::Unavailable => c.unavailable.push(t.clone()),
            Status::Flagged | Status::Dropped | Status::Failed => c.failed.push(t.clone()),
        }
    }
    let mut v: Vec<Config> = order
        .into_iter()
        .filter_map(|k| by_key.remove(&k))
        .map(|mut c| {
            aggregate(&mut c, samples);
            c
        })
        .collect();
    v.sort_by(config_order);
    v
}

/// The configurations with a cost against their baseline.
pub fn costed<'a>(configs: &[&'a Config]) -> Vec<&'a Config> {
    configs
        .iter()
        .copied()
        .filter(|c| c.cost_pct.is_some())
        .collect()
}

impl Config {
    /// An empty configuration (no trials yet) of these parameters; its label is the
    /// parameters' `label`.
    pub fn new(
        key: String,
        params: Value,
        workload: StoredWorkload,
        engine: Option<store::EngineRow>,
    ) -> Config {
        Config {
            key,
            flat: flatten(&params),
            label: StoredParams::read(&params).label,
            params,
            workload,
            engine,
            reps: vec![],
            failed: vec![],
            unavailable: vec![],
            metrics: BTreeMap::new(),
            values: BTreeMap::new(),
            gateway_values: BTreeMap::new(),
            rules: None,
            is_baseline: false,
            cost_pct: None,
            cost_ci95: None,
            cost_withheld: None,
        }
    }
}

/// A trial's value of one of [`METRICS`] (`None`: not measured, or no such metric).
pub fn value_of(t: &Trial, metric: &str) -> Option<f64> {
    METRICS
        .iter()
        .find(|(name, _)| *name == metric)
        .and_then(|(_, f)| f(t))
}

/// The metrics a trial limited by fwbench's `by` states as fwbench's, not the
/// gateway's: its rates (received packets/s and bits/s, and the time per packet of
/// each estimator), which the limit set; with the sink the limit, its loss too (the
/// sink's drops). Its other figures (commit latencies, delays, CPU, conntrack) are
/// the gateway's as measured, and kept.
pub fn capped_by(by: results::LimitedBy, metric: &str) -> bool {
    const RATES: &[&str] = &[
        RECEIVED_PPS,
        "ns_per_packet",
        CPU_NS_PER_PACKET,
        THROUGHPUT_BPS,
        "throughput_per_client_bps",
        NEW_FLOWS_PER_S,
    ];
    // What the sink missed: its loss, and the new flows it did not count (`dropped` is
    // offered − what the sink counted).
    const SINKS: &[&str] = &["loss_ratio", CT_DROPPED_FLOWS];
    RATES.contains(&metric) || (by == results::LimitedBy::Sink && SINKS.contains(&metric))
}

/// Fill a configuration's per-metric values and summaries from its repetitions.
fn aggregate(c: &mut Config, samples: &BTreeMap<i64, BTreeMap<String, f64>>) {
    for t in &c.reps {
        let mine = METRICS
            .iter()
            .filter_map(|(name, f)| Some((name.to_string(), f(t)?)))
            .chain(
                samples
                    .get(&t.id)
                    .into_iter()
                    .flatten()
                    .map(|(m, x)| (m.clone(), *x)),
            );
        let limited = t.fwbench_limited();
        for (m, x) in mine {
            if !limited.is_some_and(|by| capped_by(by, &m)) {
                c.gateway_values.entry(m.clone()).or_default().push(x);
            }
            c.values.entry(m).or_default().push(x);
        }
    }
    // What a configuration's means and CIs state is the gateway's: the rates of the
    // repetitions fwbench's own sender or sink limited are left out of them (`values`
    // keeps all).
    c.metrics = c
        .gateway_values
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), Summary::of(v)?)))
        .collect();
    let installed: Vec<f64> = c
        .reps
        .iter()
        .filter_map(|t| t.firewall.as_ref().map(|f| f.rules_installed as f64))
        .collect();
    c.rules = crate::stats::mean(&installed).or_else(|| c.param_f64("rules"));
}

/// Mean of `cpuN.softirq` samples of role `gateway`, per CPU, as `gateway.cpuN.softirq`.
pub fn softirq_means(samples: &[store::SampleRow]) -> BTreeMap<String, f64> {
    let mut acc: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in samples {
        if s.role == "gateway" && s.metric.starts_with("cpu") && s.metric.ends_with(".softirq") {
            acc.entry(format!("gateway.{}", s.metric))
                .or_default()
                .push(s.value);
        }
    }
    acc.into_iter()
        .filter_map(|(k, v)| Some((k, crate::stats::mean(&v)?)))
        .collect()
}

/// Per-trial means of the host samples: `ROLE.cpu_busy` (% of one CPU, the mean over
/// CPUs and samples of 100 − idle), `ROLE.ctxt_per_s` (context switches/s, the whole
/// machine's), `ROLE.proc_ctxt_per_s` (context switches/s of the role's own process,
/// all threads, voluntary + nonvoluntary), `ROLE.mem_mib` (memory in use) for every
/// role sampled, and
/// `gateway.cpuN.STATE` for every CPU state the gateway's samples have (user, system,
/// softirq, irq, idle; [`softirq_means`] is the softirq part).
pub fn host_means(samples: &[store::SampleRow]) -> BTreeMap<String, f64> {
    let mut acc: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.value.is_finite()) {
        let key = match s.metric.as_str() {
            "ctxt" => format!("{}.ctxt_per_s", s.role),
            "proc.ctxt" => format!("{}.proc_ctxt_per_s", s.role),
            "mem.used_kib" => format!("{}.mem_mib", s.role),
            m if m.starts_with("cpu") && m.ends_with(".idle") => {
                acc.entry(format!("{}.cpu_busy", s.role))
                    .or_default()
                    .push(100.0 - s.value);
                if s.role != "gateway" {
                    continue;
                }
                format!("gateway.{m}")
            }
            m if m.starts_with("cpu") && s.role == "gateway" => format!("gateway.{m}"),
            // Every interface of the gateway: their sum is the packets through it.
            m if s.role == "gateway" && m.starts_with("if.") && m.ends_with(".rx_pps") => {
                format!("gateway.{m}")
            }
            _ => continue,
        };
        let v = if key.ends_with(".mem_mib") {
            s.value / 1024.0
        } else {
            s.value
        };
        acc.entry(key).or_default().push(v);
    }
    let mut out: BTreeMap<String, f64> = acc
        .into_iter()
        .filter_map(|(k, v)| Some((k, crate::stats::mean(&v)?)))
        .collect();
    let through: Vec<f64> = out
        .iter()
        .filter(|(k, _)| k.starts_with("gateway.if.") && k.ends_with(".rx_pps"))
        .map(|(_, v)| *v)
        .collect();
    if !through.is_empty() {
        out.insert(GATEWAY_PPS.into(), through.iter().sum());
    }
    out
}

/// Packets/s the gateway's interfaces received, summed over them (every packet that
/// went through the gateway, both directions), from its interface counters.
pub const GATEWAY_PPS: &str = "gateway.rx_pps";

/// CPUs of a list such as `0-1,3`; `None` when it does not parse.
fn cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((lo, hi)) => {
                out.extend(lo.trim().parse::<usize>().ok()?..=hi.trim().parse().ok()?)
            }
            None => out.push(part.parse().ok()?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The CPUs a packet trial's packets were processed on, from `results.placement`: the
/// client's and the server's CPUs (the sender's CPU also runs the gateway's forwarding
/// in softirq on veth), plus the gateway's when it was pinned (its interfaces are then
/// steered there). `None` when the placement is missing or unreadable (then every CPU).
pub fn data_path_cpus(t: &Trial) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for p in t.stored.placement.as_ref()? {
        let list = if p.role.as_deref() == Some("gateway") {
            &p.requested_cpus
        } else {
            &p.cpus
        };
        if let Some(list) = list {
            cpus.extend(cpu_list(list)?);
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    (!cpus.is_empty()).then_some(cpus)
}

/// The CPUs each trial's data path ran on ([`data_path_cpus`]), as a set over the
/// configurations' repetitions ("CPUs [0]", "unpinned"): a baseline and what it is
/// compared with must agree, and so must two runs compared.
pub fn placements<'a>(cs: impl IntoIterator<Item = &'a Config>) -> BTreeSet<String> {
    cs.into_iter()
        .flat_map(|c| &c.reps)
        .map(|t| match data_path_cpus(t) {
            Some(cpus) => format!("CPUs {cpus:?}"),
            None => "unpinned".to_string(),
        })
        .collect()
}

/// Kernel CPU time per received packet, in ns: the mean share of system + softirq +
/// irq time over the trial's 5-Hz samples (role `gateway`, else any role: /proc/stat
/// is the whole machine's), summed over `cpus` (every CPU when `None`), divided by the
/// received packets/s. User time is left out: the sender's is a constant per packet,
/// and on a shared CPU it is mostly other processes' (a compile), which 1/pps counts as
/// if the path cost it. `None` without samples or packets.
pub fn cpu_ns_per_packet(
    samples: &[store::SampleRow],
    received_pps: f64,
    cpus: Option<&[usize]>,
) -> Option<f64> {
    if received_pps.is_nan() || received_pps <= 0.0 {
        return None;
    }
    let role = if samples.iter().any(|s| s.role == "gateway") {
        "gateway"
    } else {
        samples.first()?.role.as_str()
    };
    // (CPU, field) → values; field is system, softirq or irq.
    let mut by_cpu: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    let mut times: std::collections::BTreeSet<u64> = std::collections::BTreeSet::new();
    for s in samples.iter().filter(|s| s.role == role) {
        let Some((cpu, field)) = s.metric.strip_prefix("cpu").and_then(|m| m.split_once('.'))
        else {
            continue;
        };
        let Ok(cpu) = cpu.parse::<usize>() else {
            continue;
        };
        if !matches!(field, "system" | "softirq" | "irq") || !s.value.is_finite() {
            continue;
        }
        if cpus.is_some_and(|c| !c.contains(&cpu)) {
            continue;
        }
        times.insert(s.t_s.to_bits());
        by_cpu.entry(cpu).or_default().push(s.value);
    }
    if times.is_empty() {
        return None;
    }
    // Per CPU: Σ over its three fields and samples / number of samples = mean % busy.
    let share: f64 =
        by_cpu.values().map(|v| v.iter().sum::<f64>()).sum::<f64>() / times.len() as f64 / 100.0;
    Some(share * 1e9 / received_pps)
}

/// The run's baseline selector: the stored one, or `model = seed000-f0` when the run
/// compares seed 000's F values without naming a baseline.
pub fn baseline_of(run: &RunRow, configs: &[Config]) -> Option<Value> {
    if let Some(b) = run.baseline.as_ref().filter(|b| b.is_object()) {
        return Some(b.clone());
    }
    let models: std::collections::BTreeSet<&str> =
        configs.iter().filter_map(|c| c.param("model")).collect();
    let seed000 = models.contains("seed000-f0")
        && models
            .iter()
            .any(|m| *m == "seed000-f2" || *m == "seed000-f4");
    seed000.then(|| serde_json::json!({"model": "seed000-f0"}))
}

/// Does a configuration match every key of the baseline selector?
pub fn matches_baseline(c: &Config, baseline: &Value) -> bool {
    baseline.as_object().is_some_and(|b| {
        b.iter().all(|(k, want)| {
            lookup(&c.params, k).is_some_and(|have| same_value(have, want))
                || (k == "workload" && same_value(&Value::String(c.workload.to_string()), want))
        })
    })
}

/// The configuration's identity without the baseline's keys (to pair it with one);
/// `label` is left out too: it names a case, it is not a setting.
fn rest_key(c: &Config, baseline: &Value) -> String {
    let keys: Vec<&String> = baseline
        .as_object()
        .map(|b| b.keys().collect())
        .unwrap_or_default();
    let rest: BTreeMap<&String, &String> = c
        .flat
        .iter()
        .filter(|(k, _)| *k != "label")
        .filter(|(k, _)| {
            !keys
                .iter()
                .any(|b| k == b || k.starts_with(&format!("{b}.")))
        })
        .collect();
    format!("{}|{rest:?}", c.workload)
}

/// Mark baseline configurations and set every other configuration's cost against the
/// baseline configuration that has the same other parameters. A search's steps are
/// neither: their rates probe the search, not a configuration asked for.
pub fn pair_with_baseline(configs: &mut [Config], baseline: &Value) {
    let mut base: BTreeMap<String, (Summary, bool, Option<RateDoubt>)> = BTreeMap::new();
    for c in configs.iter_mut() {
        c.is_baseline = c.step_of().is_none() && matches_baseline(c, baseline);
        let Some((m, higher)) = main_metric(c) else {
            continue;
        };
        if let (true, Some(s)) = (c.is_baseline, c.metrics.get(m)) {
            let doubt = c.rate_doubt("the baseline row");
            base.insert(rest_key(c, baseline), (*s, higher, doubt));
        }
    }
    for c in configs
        .iter_mut()
        .filter(|c| !c.is_baseline && c.step_of().is_none())
    {
        let Some((m, _)) = main_metric(c) else {
            continue;
        };
        if let (Some((b, higher, b_doubt)), Some(s)) =
            (base.get(&rest_key(c, baseline)), c.metrics.get(m))
        {
            if let Some(why) = c.rate_doubt("this row").or_else(|| b_doubt.clone()) {
                c.cost_withheld = Some(why);
            } else if let Some((cost, ci)) = crate::stats::cost_pct(s, b, *higher) {
                c.cost_pct = Some(cost);
                c.cost_ci95 = ci;
            }
        }
    }
}

/// Of some repetitions whose rate counts, how many passed every packet offered
/// ([`Trial::paced_through`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paced {
    pub paced: usize,
    pub of: usize,
}

impl Paced {
    /// Counted over `reps`.
    pub fn of<'a>(reps: impl Iterator<Item = &'a Trial>) -> Paced {
        reps.fold(Paced::default(), |p, t| Paced {
            paced: p.paced + usize::from(t.paced_through()),
            of: p.of + 1,
        })
    }

    /// Every one (and there is one): its rate is the sender's pace.
    pub fn throughout(self) -> bool {
        self.of > 0 && self.paced == self.of
    }

    /// Some (or every) one: its mean rate is partly the sender's pace at least.
    pub fn any(self) -> bool {
        self.paced > 0
    }

    /// "" where every one passed whole, else " in 2 of 5 repetitions".
    pub fn share(self) -> String {
        if self.throughout() {
            String::new()
        } else {
            format!(" in {} of {} repetitions", self.paced, self.of)
        }
    }

    /// "{who} passed every packet offered[ in 2 of 5 repetitions], its rate [partly]
    /// the sender's pace"; `None` where none did.
    pub fn doubt(self, who: &str) -> Option<String> {
        let partly = if self.throughout() { "" } else { "partly " };
        self.any().then(|| {
            format!(
                "{who} passed every packet offered{}, its rate {partly}the sender's pace",
                self.share()
            )
        })
    }
}

/// Why no cost is stated of a row against another (its baseline, the best row): either
/// passed every packet offered in some repetition, so its mean rate is (partly) the
/// sender's pace and the difference the offered loads' (seed 002's flows of three rates
/// read "70 % cost" against the fastest). Each side is (its name in the sentence, how
/// many of its repetitions passed whole); `None`: both rates are the gateway's.
pub fn paced_doubt(
    (row, row_paced): (&str, Paced),
    (other, other_paced): (&str, Paced),
) -> Option<String> {
    row_paced.doubt(row).or_else(|| other_paced.doubt(other))
}

/// The search summary (`results.search`) of an ndr/degrade/sweetspot trial.
pub fn search_of(t: &Trial) -> Option<&SearchStored> {
    t.stored.search.as_ref()
}

/// Is a search summary that of a sessions sweet-spot search (`parallel` auto)?
pub fn is_sweet_spot(s: &SearchStored) -> bool {
    s.is(SearchKind::Sweetspot)
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
