//! Scenario files (TOML) → a typed, validated plan of trials.
//!
//! Any parameter under `[params]` may be a scalar or a list; the plan is the cross
//! product × `repetitions`, in `sequential`, seeded `random`, or interleaved (`abba`,
//! `paired`: blocks of one case's configurations per repetition) order. Every error
//! names `file:line:column` and the field ([`ScenarioError`]). Every trial is built
//! through the front door ([`crate::plan::build`]); every text of the file is bounded
//! and one-line texts hold no control characters ([`crate::limits::check_text`]),
//! checked before anything is expanded.
//!
//! Must not: read other files or touch the host (import and testbed files are only
//! named here).

use crate::limits::{
    check_text, Lines, MAX_DESCRIPTION, MAX_LABEL, MAX_NAME, MAX_PATH, MAX_RANGE_VALUES,
    MAX_TRIALS, MAX_VALUE_TEXT,
};
use crate::params::search::Asked;
use crate::params::values::{parse_duration, ValueError};
use crate::params::workload::Workload;
use crate::params::{Pinning, TrialParams};
use crate::plan::axes::{AxisValues, Value};
pub use crate::plan::build::trial_key;
use crate::plan::build::{build, Context, PlanError};
use crate::textpos::{Ctx, Located};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// Why a scenario file does not make a plan (bad input). Every message starts with
/// the file's name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// A value refused where it stands: `file:line:col: field: why`.
    #[error(transparent)]
    At(#[from] Located),
    /// More `[[case]]`/`[[firewall]]` rows than a scenario may have trials, counted
    /// before the text is parsed.
    #[error(transparent)]
    Rows(#[from] crate::limits::TooManyRows),
    /// A trial of a row refused by the front door: `file: case[2]: why`.
    #[error("{file}: {row}: {why}")]
    Trial {
        file: String,
        /// Where the trial's values came from (`params`, `firewall[1] × case[2]`).
        row: String,
        why: PlanError,
    },
    /// The file as a whole: `file: why` (too many trials, an axis set in two rows, a
    /// duplicate trial).
    #[error("{file}: {why}")]
    File { file: String, why: String },
}

/// For callers that carry messages as text (`error::usage`).
impl From<ScenarioError> for String {
    fn from(e: ScenarioError) -> String {
        e.to_string()
    }
}

impl ScenarioError {
    fn file(file: &str, why: impl Into<String>) -> ScenarioError {
        ScenarioError::File {
            file: file.to_string(),
            why: why.into(),
        }
    }
}

type Table = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTrial {
    /// Stable id: hash of the parameters and the repetition.
    pub key: String,
    pub rep: u32,
    pub params: TrialParams,
}

/// The order trials run in. Every order runs each (configuration, repetition) once, and
/// a trial's key does not depend on the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Repetition outermost, then the configurations in file order.
    Sequential,
    /// A seeded shuffle of the sequential order.
    Random,
    /// Blocks: for each repetition, each case's configurations together, in a seeded
    /// order that is reversed every other repetition (A B, B A, A B, …: ABBA), so a
    /// linear drift cancels over two repetitions and no configuration runs more than
    /// twice in a row.
    Abba,
    /// Blocks as `Abba`, each in its own seeded random order (randomised pairs).
    Paired,
}

impl Order {
    pub const NAMES: [&'static str; 4] = ["sequential", "random", "abba", "paired"];

    pub fn parse(s: &str) -> Option<Order> {
        Some(match s {
            "sequential" => Order::Sequential,
            "random" => Order::Random,
            "abba" => Order::Abba,
            "paired" => Order::Paired,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub repetitions: u32,
    pub order: Order,
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
    name: Option<Spanned<String>>,
    description: Option<Spanned<String>>,
    workload: Option<Spanned<String>>,
    repetitions: Option<Spanned<i64>>,
    order: Option<Spanned<String>>,
    seed: Option<Spanned<i64>>,
    testbed: Option<RawTestbed>,
    params: Option<Table>,
    /// Named combinations (`[[case]]`), each crossed with `[params]`: for tables whose
    /// rows are not a cross product (seed 001's methods).
    case: Option<Vec<Table>>,
    /// Firewall types (`[[firewall]]`), each crossed with every case: seed 003's null
    /// firewall, packet filter and proxy × its workloads.
    firewall: Option<Vec<Table>>,
    warmup: Option<Spanned<toml::Value>>,
    /// Adaptive trial length for every trial: `{ precision = "1%", max_duration = "60s" }`.
    adaptive: Option<Spanned<Table>>,
    /// Axis values of the baseline trials, e.g. `baseline = { engine = "none" }`.
    baseline: Option<Spanned<Table>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTestbed {
    name: Option<Spanned<String>>,
    /// A testbed file, relative to the scenario file.
    file: Option<Spanned<String>>,
    pin_client: Option<Spanned<String>>,
    pin_gateway: Option<Spanned<String>>,
    pin_server: Option<Spanned<String>>,
}

/// A `[testbed] file` relative to the scenario file's directory, spelled so that
/// `--testbed` takes it as a file (see [`crate::testbed::file::is_file`]).
fn testbed_file_path(scenario: &str, f: &str) -> String {
    let p = std::path::Path::new(f);
    if p.is_absolute() {
        return f.to_string();
    }
    let dir = std::path::Path::new(scenario)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    dir.join(p).display().to_string()
}

/// A text of the file within `max` bytes, without control characters (but tab and
/// newline for [`Lines::Several`]).
fn bounded(
    cx: &Ctx,
    span: Range<usize>,
    field: &str,
    text: &str,
    max: usize,
    lines: Lines,
) -> Result<(), Located> {
    check_text(text, max, lines).map_err(|e| cx.locate(span, field, e))
}

/// A key of a table (a parameter's name), bounded before it is echoed in a message.
fn key_of<'a>(cx: &Ctx, k: &'a Spanned<String>, table: &str) -> Result<&'a str, Located> {
    bounded(cx, k.span(), table, k.get_ref(), MAX_NAME, Lines::One)?;
    Ok(k.get_ref().as_str())
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

/// A single value as text, bounded (a string of at most [`MAX_VALUE_TEXT`] bytes,
/// one line); `None` for a list or a table.
fn one_text(cx: &Ctx, v: &Spanned<toml::Value>, field: &str) -> Result<Option<String>, Located> {
    let t = value_text(v.get_ref());
    if let Some(t) = &t {
        bounded(cx, v.span(), field, t, MAX_VALUE_TEXT, Lines::One)?;
    }
    Ok(t)
}

/// Expand `A..B` or `A..B step S` (inclusive, whole numbers) into its values; any
/// other text is one value. Only text that starts with a whole number followed by `..`
/// is a range: `../rules.txt` or `v1..v2` are single values.
pub fn expand_range(t: &str) -> Result<Vec<String>, ValueError> {
    // `each:K` (for `aim`): rules 1 to K.
    if let Some(k) = t.strip_prefix("each:") {
        return expand_range(&format!("1..{}", k.trim()));
    }
    let Some((a, rest)) = t
        .split_once("..")
        .filter(|(a, _)| !a.trim().is_empty() && a.trim().bytes().all(|b| b.is_ascii_digit()))
    else {
        return Ok(vec![t.to_string()]);
    };
    let (b, step) = match rest.split_once("step") {
        Some((b, st)) => (b, st.trim()),
        None => (rest, "1"),
    };
    let num = |x: &str| x.trim().parse::<u64>();
    let (Ok(lo), Ok(hi), Ok(step)) = (num(a), num(b), num(step)) else {
        return Err(ValueError::not_a(
            t,
            "a range (like \"0..8000 step 250\" or \"0..2000\")",
        ));
    };
    if step == 0 || hi < lo {
        return Err(ValueError::Other(format!(
            "range '{t}': the step must be at least 1 and the end not below the start"
        )));
    }
    let n = (hi - lo) / step + 1;
    if n > MAX_RANGE_VALUES {
        return Err(ValueError::refused(
            "range",
            t,
            format!("has {n} values; at most {MAX_RANGE_VALUES}"),
        ));
    }
    Ok((0..n).map(|i| (lo + i * step).to_string()).collect())
}

/// A value or a list of values as text, each bounded, ranges expanded (`field` names
/// it in errors).
fn value_list(cx: &Ctx, v: &Spanned<toml::Value>, field: &str) -> Result<Vec<String>, Located> {
    let items: Vec<toml::Value> = match v.get_ref() {
        toml::Value::Array(a) if a.is_empty() => {
            return Err(cx.locate(v.span(), field, "empty list: give at least one value"))
        }
        toml::Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    };
    let mut vals = Vec::new();
    for it in items {
        let t = value_text(&it).ok_or_else(|| {
            cx.locate(v.span(), field, format!("'{it}' is not a string or number"))
        })?;
        bounded(cx, v.span(), field, &t, MAX_VALUE_TEXT, Lines::One)?;
        vals.extend(expand_range(&t).map_err(|e| cx.locate(v.span(), field, e))?);
    }
    Ok(vals)
}

/// The axes named in `[params]`: per axis its values as text, each with its span.
type Named<'a> = BTreeMap<&'a str, Vec<(String, Range<usize>)>>;

/// One expanded row: axis values, where they came from (`case[2]`) and the row's own
/// `repetitions` (a `[[case]]` may set it).
type Row<'a> = (Given<'a>, String, Option<u32>);

/// Values given for one trial (or one row): per axis (and `workload`, `label`) the text
/// as written, for messages, and its typed value, parsed once.
type Given<'a> = BTreeMap<&'a str, (String, Value)>;

/// One row's keys: per key its values (text as written, typed), crossed later.
type Lists<'a> = Vec<(&'a str, Vec<(String, Value)>)>;

/// The workload a row asks for (its own `workload`, else the scenario's).
fn row_workload(cx: &Ctx, row: &Table, at: &str, workload: Asked) -> Result<Asked, Located> {
    let Some((_, v)) = row.iter().find(|(k, _)| k.get_ref() == "workload") else {
        return Ok(workload);
    };
    let field = format!("{at}.workload");
    one_text(cx, v, &field)?
        .unwrap_or_default()
        .parse::<Asked>()
        .map_err(|e| cx.locate(v.span(), &field, e))
}

/// One `[[case]]`/`[[firewall]]` row's keys, each parsed into its list of typed values
/// (single values, lists and ranges), and the row's own repetitions.
fn row_lists<'a>(
    cx: &Ctx,
    row: &'a Table,
    (table, at): (&str, &str),
    params: &Named,
    workload: Asked,
) -> Result<(Lists<'a>, Option<u32>), Located> {
    let row_workload = row_workload(cx, row, at, workload)?;
    let mut lists: Lists<'a> = Vec::new();
    let mut reps = None;
    for (k, v) in row {
        let key = key_of(cx, k, at)?;
        let field = format!("{at}.{key}");
        if key == "repetitions" {
            if table != "case" {
                return Err(cx.locate(
                    k.span(),
                    &field,
                    "set repetitions at the top level or in a [[case]]",
                ));
            }
            reps = match v.get_ref() {
                toml::Value::Integer(n) if (1..=1000).contains(n) => Some(*n as u32),
                _ => return Err(cx.locate(v.span(), &field, "must be 1..1000")),
            };
            continue;
        }
        if key == "label" {
            let t = value_text(v.get_ref())
                .ok_or_else(|| cx.locate(v.span(), &field, "give the label as a string"))?;
            bounded(cx, v.span(), &field, &t, MAX_LABEL, Lines::One)?;
            lists.push(("label", vec![(t.clone(), Value::label(t))]));
            continue;
        }
        if key == "workload" {
            let typed = Value::workload(row_workload);
            lists.push(("workload", vec![(row_workload.as_str().to_string(), typed)]));
            continue;
        }
        let Some(axis) = crate::plan::axes::find(key) else {
            return Err(cx.locate(
                k.span(),
                &field,
                format!(
                    "unknown parameter (known: label, workload, {})",
                    crate::plan::axes::names().join(", ")
                ),
            ));
        };
        if params.contains_key(axis.name) {
            return Err(cx.locate(
                k.span(),
                &field,
                "also set in [params]: set an axis in one place",
            ));
        }
        let vals = value_list(cx, v, &field)?
            .into_iter()
            .map(|one| match axis.parse(&one, row_workload) {
                Ok(typed) => Ok((one, typed)),
                Err(e) => Err(cx.locate(v.span(), &field, e)),
            })
            .collect::<Result<_, _>>()?;
        lists.push((axis.name, vals));
    }
    Ok((lists, reps))
}

/// The cross product of one row's lists (first key outermost).
fn cross<'a>(lists: &Lists<'a>) -> Vec<Given<'a>> {
    let mut expanded: Vec<Given<'a>> = vec![Given::new()];
    for (axis, vals) in lists {
        expanded = expanded
            .into_iter()
            .flat_map(|m| {
                vals.iter().map(move |v| {
                    let mut m = m.clone();
                    m.insert(*axis, v.clone());
                    m
                })
            })
            .collect();
    }
    expanded
}

/// The `[[case]]`/`[[firewall]]` rows: each row's lists crossed within it. Returns the
/// expanded rows with where they came from.
fn parse_rows<'a>(
    cx: &Ctx,
    raw: Option<&'a [Table]>,
    table: &str,
    params: &Named,
    workload: Asked,
) -> Result<Vec<Row<'a>>, ScenarioError> {
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Ok(vec![(Given::new(), String::new(), None)]);
    };
    let mut out = Vec::new();
    for (ri, row) in raw.iter().enumerate() {
        let at = format!("{table}[{}]", ri + 1);
        let (lists, reps) = row_lists(cx, row, (table, &at), params, workload)?;
        // Count the row's product before building it.
        let n = lists
            .iter()
            .fold(1u64, |n, (_, v)| n.saturating_mul(v.len() as u64));
        if n.saturating_add(out.len() as u64) > MAX_TRIALS {
            return Err(ScenarioError::file(
                cx.file,
                format!(
                    "{at}: the {table} rows up to this one cross to {} combinations ({} before it, {n} in it), more than the {MAX_TRIALS} trials a scenario may have",
                    n.saturating_add(out.len() as u64),
                    out.len()
                ),
            ));
        }
        out.extend(cross(&lists).into_iter().map(|m| (m, at.clone(), reps)));
    }
    Ok(out)
}

/// A `[[firewall]]` × `[[case]]` row: values, where from, the axes the firewall row set
/// (exempt from the workload check), repetitions.
type CrossedRow<'a> = (Given<'a>, String, Vec<&'a str>, u32);

/// What the top level of a scenario says besides its parameters.
struct Head {
    name: String,
    description: String,
    workload: Asked,
    repetitions: u32,
    order: Order,
    seed: u64,
}

/// The top level: name, description, workload, repetitions, order, seed.
fn parse_head(cx: &Ctx, raw: &Raw, seed_if_unset: u64) -> Result<Head, Located> {
    let text = |v: &Option<Spanned<String>>, field: &str, max: usize, lines: Lines| {
        v.as_ref()
            .map(|s| {
                bounded(cx, s.span(), field, s.get_ref(), max, lines).map(|()| s.get_ref().clone())
            })
            .transpose()
    };
    let name = text(&raw.name, "name", MAX_NAME, Lines::One)?;
    let description = text(
        &raw.description,
        "description",
        MAX_DESCRIPTION,
        Lines::Several,
    )?;
    let workload = match text(&raw.workload, "workload", MAX_NAME, Lines::One)? {
        None => Asked::Traffic(Workload::default()),
        Some(w) => w
            .parse::<Asked>()
            .map_err(|e| cx.locate(span_of(&raw.workload), "workload", e))?,
    };
    let repetitions = match &raw.repetitions {
        None => 1,
        Some(r) if (1..=1000).contains(r.get_ref()) => *r.get_ref() as u32,
        Some(r) => return Err(cx.locate(r.span(), "repetitions", "must be 1..1000")),
    };
    let order = match text(&raw.order, "order", MAX_NAME, Lines::One)? {
        None => Order::Sequential,
        Some(o) => Order::parse(&o).ok_or_else(|| {
            cx.locate(
                span_of(&raw.order),
                "order",
                format!(
                    "'{o}' is not an order (expected {})",
                    Order::NAMES.join(", ")
                ),
            )
        })?,
    };
    let seed = match &raw.seed {
        None => seed_if_unset,
        Some(s) if *s.get_ref() >= 0 => *s.get_ref() as u64,
        Some(s) => return Err(cx.locate(s.span(), "seed", "must not be negative")),
    };
    Ok(Head {
        name: name.unwrap_or_else(|| cx.file.to_string()),
        description: description.unwrap_or_default(),
        workload,
        repetitions,
        order,
        seed,
    })
}

fn span_of(v: &Option<Spanned<String>>) -> Range<usize> {
    v.as_ref().map_or(0..0, |s| s.span())
}

/// `[testbed]`: CPU pinning, and a named testbed or a testbed file (relative to the
/// scenario file).
fn parse_testbed(cx: &Ctx, tb: Option<&RawTestbed>) -> Result<(Pinning, Option<String>), Located> {
    let mut pinning = Pinning::default();
    let Some(tb) = tb else {
        return Ok((pinning, None));
    };
    let pin = |v: &Option<Spanned<String>>, field: &str| -> Result<Option<String>, Located> {
        let Some(s) = v else {
            return Ok(None);
        };
        bounded(cx, s.span(), field, s.get_ref(), MAX_VALUE_TEXT, Lines::One)?;
        crate::params::values::cpus(s.get_ref())
            .map(Some)
            .map_err(|e| cx.locate(s.span(), field, e))
    };
    pinning.client = pin(&tb.pin_client, "testbed.pin_client")?;
    pinning.gateway = pin(&tb.pin_gateway, "testbed.pin_gateway")?;
    pinning.server = pin(&tb.pin_server, "testbed.pin_server")?;
    let mut testbed = None;
    if let Some(n) = &tb.name {
        bounded(
            cx,
            n.span(),
            "testbed.name",
            n.get_ref(),
            MAX_NAME,
            Lines::One,
        )?;
        crate::testbed::netns::check_name(n.get_ref())
            .map_err(|e| cx.locate(n.span(), "testbed.name", format!("{e:#}")))?;
        testbed = Some(n.get_ref().clone());
    }
    if let Some(f) = &tb.file {
        if tb.name.is_some() {
            return Err(cx.locate(
                f.span(),
                "testbed.file",
                "give a testbed name or a testbed file, not both",
            ));
        }
        bounded(
            cx,
            f.span(),
            "testbed.file",
            f.get_ref(),
            MAX_PATH,
            Lines::One,
        )?;
        testbed = Some(testbed_file_path(cx.file, f.get_ref()));
    }
    Ok((pinning, testbed))
}

/// The axes `[params]` names, each with its values as text (ranges expanded).
fn named_params<'a>(cx: &Ctx, raw: &'a Raw, workload: Asked) -> Result<Named<'a>, Located> {
    let rows_set_workload = raw
        .case
        .iter()
        .chain(raw.firewall.iter())
        .flatten()
        .any(|r| r.keys().any(|k| k.get_ref() == "workload"));
    let mut axes: Named = BTreeMap::new();
    for (k, v) in raw.params.iter().flatten() {
        let key = key_of(cx, k, "params")?;
        let field = format!("params.{key}");
        let Some(axis) = crate::plan::axes::find(key) else {
            return Err(cx.locate(
                k.span(),
                &field,
                format!(
                    "unknown parameter (known: {})",
                    crate::plan::axes::names().join(", ")
                ),
            ));
        };
        if !rows_set_workload && axis.foreign_to(workload) {
            return Err(cx.locate(
                k.span(),
                &field,
                format!("not a parameter of the {} workload", workload.as_str()),
            ));
        }
        let vals = value_list(cx, v, &field)?;
        axes.insert(axis.name, vals.into_iter().map(|t| (t, v.span())).collect());
    }
    Ok(axes)
}

/// Every axis `[params]` names, in the registry's order: its values, parsed once
/// (errors with their location).
fn typed_params<'a>(cx: &Ctx, named: &Named<'a>, workload: Asked) -> Result<Lists<'a>, Located> {
    let mut values: Lists = Vec::new();
    for axis in crate::plan::axes::AXES {
        let field = format!("params.{}", axis.name);
        let Some(vals) = named.get(axis.name) else {
            continue;
        };
        if axis.name == "import" && vals.len() > 1 {
            return Err(cx.locate(
                vals[1].1.clone(),
                &field,
                "give one import file per scenario",
            ));
        }
        let mut parsed = Vec::new();
        for (t, span) in vals {
            let typed = axis
                .parse(t, workload)
                .map_err(|e| cx.locate(span.clone(), &field, e))?;
            parsed.push((t.clone(), typed));
        }
        values.push((axis.name, parsed));
    }
    Ok(values)
}

/// Rows: `[[firewall]]` × `[[case]]`, each row's lists crossed within it; a case's
/// label follows its firewall row's.
fn crossed_rows<'a>(
    cx: &Ctx,
    raw: &'a Raw,
    named: &Named,
    head: &Head,
) -> Result<Vec<CrossedRow<'a>>, ScenarioError> {
    let file = cx.file;
    let firewalls = parse_rows(
        cx,
        raw.firewall.as_deref(),
        "firewall",
        named,
        head.workload,
    )?;
    let cases = parse_rows(cx, raw.case.as_deref(), "case", named, head.workload)?;
    let n_rows = (firewalls.len() as u64).saturating_mul(cases.len() as u64);
    if n_rows > MAX_TRIALS {
        return Err(ScenarioError::file(
            file,
            format!(
                "{} [[firewall]] × {} [[case]] rows are more than the {MAX_TRIALS} trials a scenario may have",
                firewalls.len(),
                cases.len()
            ),
        ));
    }
    let mut rows: Vec<CrossedRow> = Vec::new();
    for (f, fat, _) in &firewalls {
        for (c, cat, case_reps) in &cases {
            let mut one = f.clone();
            for (k, v) in c {
                if *k == "label" {
                    let joined = match f.get("label") {
                        Some((fl, _)) => format!("{fl}: {}", v.0),
                        None => v.0.clone(),
                    };
                    one.insert("label", (joined.clone(), Value::label(joined)));
                } else if let Some(prev) = one.insert(k, v.clone()) {
                    if prev.0 != v.0 {
                        return Err(ScenarioError::file(
                            file,
                            format!("{cat}.{k}: also set in {fat}: set an axis in one place"),
                        ));
                    }
                }
            }
            let at = [fat.as_str(), cat.as_str()]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" × ");
            rows.push((
                one,
                if at.is_empty() { "params".into() } else { at },
                f.keys().copied().collect(),
                case_reps.unwrap_or(head.repetitions),
            ));
        }
    }
    Ok(rows)
}

/// The number of trials (cross product × rows × repetitions), counted before anything
/// is built.
fn count_trials(file: &str, values: &Lists, rows: &[CrossedRow]) -> Result<(), ScenarioError> {
    let per_row = values
        .iter()
        .fold(1u64, |n, (_, v)| n.saturating_mul(v.len() as u64));
    let total = rows.iter().fold(0u64, |t, r| {
        t.saturating_add(per_row.saturating_mul(u64::from(r.3)))
    });
    if total > MAX_TRIALS {
        return Err(ScenarioError::file(
            file,
            format!(
                "the scenario expands to {total} trials (cross product × cases × repetitions), more than {MAX_TRIALS}"
            ),
        ));
    }
    Ok(())
}

/// One combination of the cross product in one row: its trial, its block (the row it
/// came from: a case) and its repetitions.
struct Combo {
    params: TrialParams,
    block: usize,
    reps: u32,
}

/// How every trial of the scenario is built: seed, the front door's context, and the
/// `adaptive` table's span (its errors are reported there).
struct Builder<'c> {
    seed: u64,
    context: Context,
    adaptive_at: Option<Range<usize>>,
    cx: &'c Ctx<'c>,
}

impl Builder<'_> {
    /// The trial of one row with the cross product's values `one`: the row's values
    /// over them, the workload check, then the front door.
    fn trial<'a>(
        &self,
        one: &Given<'a>,
        (values, at, exempt, _): &CrossedRow<'a>,
    ) -> Result<(Given<'a>, TrialParams), ScenarioError> {
        let mut with = one.clone();
        for (k, v) in values {
            with.insert(k, v.clone());
        }
        let w = match with.get("workload") {
            Some((_, Value::workload(w))) => *w,
            _ => Asked::Traffic(Workload::default()),
        };
        if let Some(axis) = with.keys().find(|a| {
            crate::plan::axes::find(a).is_some_and(|x| x.foreign_to(w)) && !exempt.contains(a)
        }) {
            return Err(ScenarioError::file(
                self.cx.file,
                format!(
                    "{at}: {axis} is not a parameter of the {} workload",
                    w.as_str()
                ),
            ));
        }
        let mut typed = AxisValues::defaults(w);
        for (_, value) in with.values() {
            typed.set(value.clone());
        }
        let params =
            build(&typed, self.seed, &self.context).map_err(|e| match (e, &self.adaptive_at) {
                (PlanError::Adaptive(why), Some(span)) => {
                    ScenarioError::At(self.cx.locate(span.clone(), "adaptive", why))
                }
                (why, _) => ScenarioError::Trial {
                    file: self.cx.file.to_string(),
                    row: at.clone(),
                    why,
                },
            })?;
        Ok((with, params))
    }

    /// The cross product of `[params]` (first axis outermost: an odometer over the
    /// value indices) in every row; two combinations that are one trial are refused.
    fn combinations(
        &self,
        values: &Lists,
        rows: &[CrossedRow],
        workload: Asked,
    ) -> Result<Vec<Combo>, ScenarioError> {
        let mut combos: Vec<Combo> = Vec::new();
        // The values each combination was written with (to name a duplicate's axis).
        let mut written: Vec<Given> = Vec::new();
        let mut blocks: Vec<&str> = Vec::new();
        let mut idx = vec![0usize; values.len()];
        loop {
            let mut one: Given = values
                .iter()
                .zip(&idx)
                .map(|((a, v), &i)| (*a, v[i].clone()))
                .collect();
            one.insert(
                "workload",
                (workload.as_str().to_string(), Value::workload(workload)),
            );
            for row in rows {
                let (with, params) = self.trial(&one, row)?;
                if let Some(j) = combos.iter().position(|c| c.params == params) {
                    return Err(ScenarioError::file(
                        self.cx.file,
                        duplicate(&row.1, &written[j], &with),
                    ));
                }
                written.push(with);
                let block = match blocks.iter().position(|b| *b == row.1) {
                    Some(i) => i,
                    None => {
                        blocks.push(&row.1);
                        blocks.len() - 1
                    }
                };
                combos.push(Combo {
                    params,
                    block,
                    reps: row.3,
                });
            }
            if !advance(&mut idx, values) {
                return Ok(combos);
            }
        }
    }
}

/// The next combination's indices (the last axis fastest); `false` once every
/// combination was given.
fn advance(idx: &mut [usize], values: &Lists) -> bool {
    for k in (0..idx.len()).rev() {
        idx[k] += 1;
        if idx[k] < values[k].1.len() {
            return true;
        }
        idx[k] = 0;
    }
    false
}

/// Sequential order: repetition outermost, then the combinations (a case with fewer
/// repetitions drops out after its last); each trial's key computed here, once. Also
/// returns each trial's block.
fn repeat(combos: &[Combo], repetitions: u32) -> (Vec<PlannedTrial>, Vec<usize>) {
    let most = combos.iter().map(|c| c.reps).max().unwrap_or(repetitions);
    let mut trials = Vec::new();
    let mut block_of = Vec::new();
    for rep in 1..=most {
        for c in combos.iter().filter(|c| rep <= c.reps) {
            trials.push(PlannedTrial {
                key: trial_key(&c.params, rep),
                rep,
                params: c.params.clone(),
            });
            block_of.push(c.block);
        }
    }
    (trials, block_of)
}

/// Parse scenario text. `file` is used in messages, and import files are relative to
/// its directory.
pub fn parse(file: &str, text: &str, seed_if_unset: u64) -> Result<Plan, ScenarioError> {
    let cx = Ctx { file, text };
    crate::limits::check_table_rows(file, text)?;
    let raw: Raw = toml::from_str(text).map_err(|e| match e.span() {
        Some(span) => ScenarioError::At(cx.locate(span, "scenario", e.message())),
        None => ScenarioError::file(file, e.message()),
    })?;
    let head = parse_head(&cx, &raw, seed_if_unset)?;
    let (pinning, testbed) = parse_testbed(&cx, raw.testbed.as_ref())?;
    let named = named_params(&cx, &raw, head.workload)?;
    let values = typed_params(&cx, &named, head.workload)?;
    let rows = crossed_rows(&cx, &raw, &named, &head)?;
    count_trials(file, &values, &rows)?;
    let builder = Builder {
        seed: head.seed,
        context: Context {
            adaptive: raw
                .adaptive
                .as_ref()
                .map(|a| parse_adaptive(&cx, a))
                .transpose()?,
            ..Context::scenario(file)
        },
        adaptive_at: raw.adaptive.as_ref().map(|a| a.span()),
        cx: &cx,
    };
    let combos = builder.combinations(&values, &rows, head.workload)?;
    let (trials, block_of) = repeat(&combos, head.repetitions);
    let warmup_s = match &raw.warmup {
        None => None,
        Some(w) => Some(
            one_text(&cx, w, "warmup")?
                .ok_or_else(|| ValueError::from("not a duration"))
                .and_then(|t| parse_duration(&t))
                .map_err(|e| cx.locate(w.span(), "warmup", e))?,
        ),
    };
    let baseline = match &raw.baseline {
        None => None,
        Some(b) => Some(parse_baseline(&cx, b, &trials, head.workload)?),
    };
    let trials = arrange(trials, &block_of, head.order, head.seed);
    Ok(Plan {
        name: head.name,
        description: head.description,
        seed: head.seed,
        repetitions: head.repetitions,
        order: head.order,
        pinning,
        testbed,
        topology_given: named.contains_key("topology"),
        warmup_s,
        baseline,
        trials,
    })
}

impl Plan {
    /// Run on a named testbed's topology (a scenario that names none): each trial
    /// moved to it through the front door (checked again), its key computed again.
    pub fn use_topology(
        &mut self,
        topology: crate::params::topology::Topology,
    ) -> Result<(), PlanError> {
        for t in self.trials.iter_mut() {
            crate::plan::build::with_topology(&mut t.params, topology)?;
            t.key = trial_key(&t.params, t.rep);
        }
        Ok(())
    }
}

/// Two combinations that are one trial (equal canonical parameters, so one trial key):
/// name the axis whose texts differ, e.g. `rate: '10MB/s' and '80Mbit' are the same
/// value (80M bits/s)`. Refused rather than merged, so a sweep has the points it shows.
fn duplicate(at: &str, first: &Given, second: &Given) -> String {
    let differs = second
        .iter()
        .find(|(k, v)| first.get(*k).is_some_and(|f| f.0 != v.0) && **k != "label");
    match differs {
        Some((k, (v, _))) => {
            let canon = match *k {
                "rate" | "max_rate" => v
                    .parse::<proto::Rate>()
                    .map(|r| {
                        format!(
                            " ({r}{})",
                            if matches!(r, proto::Rate::Bps(_)) {
                                " bits/s"
                            } else {
                                ""
                            }
                        )
                    })
                    .unwrap_or_default(),
                _ => String::new(),
            };
            format!(
                "{at}.{k}: duplicate value: '{}' and '{v}' are the same value{canon}; list it once",
                first[k].0
            )
        }
        None => format!("{at}: duplicate trial: two combinations give the same parameters"),
    }
}

/// A seeded Fisher–Yates shuffle.
fn shuffle<T>(v: &mut [T], rng: &mut traffic::rng::Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.range_inclusive(0, i as u32) as usize;
        v.swap(i, j);
    }
}

/// Put trials given in sequential order (`block_of[i]`: the block — case row — of trial
/// i) into `order`. A permutation: every trial stays, keys unchanged.
fn arrange(
    mut trials: Vec<PlannedTrial>,
    block_of: &[usize],
    order: Order,
    seed: u64,
) -> Vec<PlannedTrial> {
    let mut rng = traffic::rng::Rng::new(seed);
    match order {
        Order::Sequential => trials,
        Order::Random => {
            shuffle(&mut trials, &mut rng);
            trials
        }
        Order::Abba | Order::Paired => {
            // Blocks: (repetition, case row), repetitions outermost, rows in file order;
            // within a block the trials are in sequential (combination) order.
            let mut blocks: BTreeMap<(u32, usize), Vec<PlannedTrial>> = BTreeMap::new();
            for (t, &b) in trials.into_iter().zip(block_of) {
                blocks.entry((t.rep, b)).or_default().push(t);
            }
            // ABBA: one seeded base order per case row (over its combinations, by
            // position in the block), reversed on even repetitions.
            let mut base: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
            let mut out = Vec::new();
            for ((rep, b), mut block) in blocks {
                match order {
                    Order::Paired => shuffle(&mut block, &mut rng),
                    _ => {
                        let perm = base.entry(b).or_insert_with(|| {
                            let mut p: Vec<usize> = (0..block.len()).collect();
                            shuffle(&mut p, &mut rng);
                            p
                        });
                        // A row's combinations are the same in every repetition.
                        let mut slots: Vec<Option<PlannedTrial>> =
                            block.into_iter().map(Some).collect();
                        let mut one: Vec<PlannedTrial> = perm
                            .iter()
                            .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
                            .collect();
                        one.extend(slots.into_iter().flatten());
                        if rep % 2 == 0 {
                            one.reverse();
                        }
                        block = one;
                    }
                }
                out.extend(block);
            }
            out
        }
    }
}

fn parse_adaptive(cx: &Ctx, a: &Spanned<Table>) -> Result<crate::params::Adaptive, Located> {
    let mut precision = None;
    let mut max_s = 60.0;
    for (k, v) in a.get_ref() {
        let field = format!("adaptive.{}", key_of(cx, k, "adaptive")?);
        let t = one_text(cx, v, &field)?
            .ok_or_else(|| cx.locate(v.span(), &field, "give a string or number"))?;
        match k.get_ref().as_str() {
            "precision" => {
                precision = Some(
                    crate::params::values::ratio(&t)
                        .and_then(|r| {
                            if r > 0.0 {
                                Ok(r)
                            } else {
                                Err("must be above 0".into())
                            }
                        })
                        .map_err(|e| cx.locate(v.span(), &field, e))?,
                )
            }
            "max_duration" => {
                max_s = parse_duration(&t).map_err(|e| cx.locate(v.span(), &field, e))?
            }
            _ => {
                return Err(cx.locate(
                    k.span(),
                    &field,
                    "unknown key (known: precision, max_duration)",
                ))
            }
        }
    }
    let precision =
        precision.ok_or_else(|| cx.locate(a.span(), "adaptive", "needs precision, e.g. \"1%\""))?;
    Ok(crate::params::Adaptive { precision, max_s })
}

/// The baseline: known axes with valid values, and at least one planned trial whose
/// parameters have them all (bad input otherwise, naming the line).
fn parse_baseline(
    cx: &Ctx,
    b: &Spanned<Table>,
    trials: &[PlannedTrial],
    workload: Asked,
) -> Result<serde_json::Value, Located> {
    let mut out = serde_json::Map::new();
    for (k, v) in b.get_ref() {
        let key = key_of(cx, k, "baseline")?;
        let field = format!("baseline.{key}");
        let axis = crate::plan::axes::find(key).ok_or_else(|| {
            cx.locate(
                k.span(),
                &field,
                "unknown parameter (use the axis names of [params], or label)",
            )
        });
        let t = one_text(cx, v, &field)?
            .ok_or_else(|| cx.locate(v.span(), &field, "give a single string or number"))?;
        match (key, axis) {
            ("label", _) => {}
            (_, Ok(axis)) => {
                axis.parse(&t, workload)
                    .map_err(|e| cx.locate(v.span(), &field, e))?;
            }
            (_, Err(e)) => return Err(e),
        }
        out.insert(key.to_string(), serde_json::Value::String(t));
    }
    let baseline = serde_json::Value::Object(out);
    if !trials
        .iter()
        .any(|t| matches_baseline(&t.params, &baseline))
    {
        return Err(cx.locate(b.span(), "baseline", "matches no trial of this scenario"));
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

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
