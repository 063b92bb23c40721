//! Trials: one row of `trials` per trial, with its per-client rows (`echo_clients`),
//! samples and gateway updates, all written in one transaction.
//!
//! Owns: what a trial stores ([`TrialRecord`]) and reads back ([`TrialRow`]): its kind
//! ([`KindRow`]: family and main metric, which the views select by), its effective
//! engine ([`EngineRow`]), rule set ([`FirewallRow`]) and per-client rows; a run's
//! finished keys and the dropping of failed trials on resume.
//! Must not: name a workload (a trial without a kind gets it from the frozen legacy
//! table of `schema`) or analyse anything.

use crate::schema::LEGACY_KINDS;
use crate::{samples, sql_at, updates, Headline, Result, SampleRow, Store, UpdateRecord};
use rusqlite::{params, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

/// One echo client connection, both ends' counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EchoClientRow {
    pub client: u32,
    pub source: String,
    pub mp: [(u64, u64); 4],
    pub unsent_client: u64,
    pub unsent_server: u64,
    pub lost: u64,
    /// malformed, wrong_client, wrong_size, gaps, duplicates, reordered (both ends summed)
    pub validation: [u64; 6],
    pub throughput_bps: f64,
    pub transactions_per_s: f64,
    /// p50, p90, p99, p99.9, max in µs
    pub rtt_us: Option<[f64; 5]>,
    pub error: Option<String>,
}

/// The rule set a trial ran with, as the gateway reported it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FirewallRow {
    pub engine: String,
    /// Rules the gateway installed (not the number asked for: that is `params.rules`).
    pub rules_installed: u64,
    pub set_elements: u64,
    pub install_ms: Option<f64>,
    pub remove_ms: Option<f64>,
    pub verdicts_ok: Option<bool>,
    /// Verdict-check problems, `; `-separated.
    pub verdict_problems: Option<String>,
}

/// The engine a trial ran with, as the controller recorded it: what the report groups
/// and compares engines by (their names are only shown).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EngineRow {
    /// `ENGINE` or `ENGINE/FAMILY`: `nft/inet`, `nft-set/ip`, `iptables-legacy`, `none`.
    pub id: String,
    /// `none`, `nft`, `xtables` or `bpf`.
    pub kind: String,
}

impl EngineRow {
    /// The row of an effective engine (how the controller records every trial).
    pub fn of(e: fwmodel::EffectiveEngine) -> EngineRow {
        EngineRow {
            id: e.id(),
            kind: e.kind().name().into(),
        }
    }

    /// The engine's name: the id without its family.
    pub fn name(&self) -> &str {
        self.id.split_once('/').map_or(&self.id, |(e, _)| e)
    }

    /// The nft table family, for the engines that take one.
    pub fn family(&self) -> Option<&str> {
        self.id.split_once('/').map(|(_, f)| f)
    }

    /// No rules (the baseline engine).
    pub fn is_none(&self) -> bool {
        self.kind == fwmodel::EngineKind::None.name()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    pub run_id: i64,
    pub trial_key: String,
    pub rep: u32,
    pub workload: String,
    /// `ok`, `failed` or `unavailable`
    pub status: String,
    pub error: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub params: serde_json::Value,
    pub placement: serde_json::Value,
    pub headline: Headline,
    /// The effective engine (every trial; `None` only for callers that know none).
    pub engine: Option<EngineRow>,
    pub firewall: Option<FirewallRow>,
    pub results: serde_json::Value,
    /// The trial's kind as the controller knows it (`None`: the pre-v5 names decide).
    pub kind: Option<KindRow>,
    pub echo_clients: Vec<EchoClientRow>,
    pub samples: Vec<SampleRow>,
    /// Gateway events' updates (issue 25), one per scheduled update.
    pub updates: Vec<UpdateRecord>,
}

/// A stored trial read back (without per-client rows and samples).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrialRow {
    pub id: i64,
    pub run_id: i64,
    pub trial_key: String,
    pub rep: u32,
    pub workload: String,
    pub status: String,
    pub error: Option<String>,
    pub params: serde_json::Value,
    pub headline: Headline,
    pub started_at: String,
    pub finished_at: String,
    /// The effective engine (`None`: a trial whose parameters name no known engine).
    pub engine: Option<EngineRow>,
    /// The rule set as the gateway reported it (`None` without rules).
    pub firewall: Option<FirewallRow>,
    /// The whole outcome (JSON), as stored.
    pub results: serde_json::Value,
    /// The trial's kind: its family and main metric.
    pub kind: Option<KindRow>,
}

/// What a trial's kind says about its rows: the family (`echo`, `packet`, `conn`: which
/// view shows it) and the metric that ranks its configurations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KindRow {
    pub family: String,
    /// The main metric's name, as the report names metrics (`received_pps` …);
    /// `None` for a search (its result is the search's).
    pub main_metric: Option<String>,
    /// Higher is better (throughput), else lower (latency).
    pub main_higher: bool,
}

impl Store {
    /// Store one trial and its per-client rows atomically; durable on return.
    pub fn insert_trial(&mut self, t: &TrialRecord) -> Result<i64> {
        let path = self.path.clone();
        let sql = sql_at(&path);
        let tx = self.conn.transaction().map_err(sql)?;
        let id = insert(&tx, t).map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(id)
    }

    /// Keys of the trials of a run that are finished for good: every status but
    /// `failed` (`ok`, `flagged` — it ran, its doubts are stored with it —, `dropped`,
    /// `unavailable`, and any a newer fwbench stored); `failed` trials are dropped
    /// ([`Store::drop_failed`]) and run again on resume. (Counting only `ok` and
    /// `unavailable` ran a flagged trial again, and storing it hit the stored row's
    /// key: the resumed seed002 run stopped at its first trial.)
    pub fn done_keys(&self, run_id: i64) -> Result<std::collections::HashSet<String>> {
        self.rows(
            "SELECT trial_key FROM trials WHERE run_id = ?1 AND status <> 'failed'",
            [run_id],
            |r| r.get::<_, String>(0),
        )
    }

    /// How many trials run `run_id` holds, whatever their status (a search's steps
    /// with it).
    pub fn trial_count(&self, run_id: i64) -> Result<usize> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM trials WHERE run_id = ?1",
                [run_id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as usize)
            .map_err(|e| self.sql(e))
    }

    /// The status and stored results (JSON) of one trial of a run, by key.
    pub fn trial_by_key(
        &self,
        run_id: i64,
        key: &str,
    ) -> Result<Option<(String, serde_json::Value)>> {
        let row: Option<(String, String)> = self
            .conn
            .query_row(
                "SELECT status, results FROM trials WHERE run_id = ?1 AND trial_key = ?2",
                params![run_id, key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        row.map(|(status, results)| Ok((status, serde_json::from_str(&results)?)))
            .transpose()
    }

    /// Forget a run's failed trials (before they are run again on resume).
    pub fn drop_failed(&self, run_id: i64) -> Result<usize> {
        self.conn
            .execute(
                "DELETE FROM echo_clients WHERE trial_id IN (SELECT id FROM trials WHERE run_id = ?1 AND status = 'failed');",
                [run_id],
            )
            .and_then(|_| {
                self.conn.execute(
                    "DELETE FROM samples WHERE trial_id IN (SELECT id FROM trials WHERE run_id = ?1 AND status = 'failed')",
                    [run_id],
                )
            })
            .and_then(|_| {
                self.conn.execute(
                    "DELETE FROM gateway_updates WHERE trial_id IN (SELECT id FROM trials WHERE run_id = ?1 AND status = 'failed')",
                    [run_id],
                )
            })
            .and_then(|_| {
                self.conn.execute(
                    "DELETE FROM trials WHERE run_id = ?1 AND status = 'failed'",
                    [run_id],
                )
            })
            .map_err(|e| self.sql(e))
    }

    /// Gateway updates of one trial, in time order.
    pub fn updates(&self, trial_id: i64) -> Result<Vec<UpdateRecord>> {
        updates::read(&self.conn, trial_id).map_err(|e| self.sql(e))
    }

    /// Trials of one run (or of every run), in insertion order.
    pub fn trials(&self, run_id: Option<i64>) -> Result<Vec<TrialRow>> {
        self.rows(
                "SELECT id, run_id, trial_key, rep, workload, status, error, params,
                    duration_s, throughput_bps, transactions_per_s, rtt_p50_us, rtt_p90_us,
                    rtt_p99_us, rtt_p999_us, rtt_max_us, validation_errors, unsent, lost,
                    offered_pps, sent_pps, received_pps, loss_ratio, owd_p50_us, jitter_us,
                    started_at, finished_at, engine, rules_installed, set_elements, install_ms, remove_ms,
                    verdicts_ok, verdict_problems, results, family, main_metric, main_higher, engine_id, engine_kind
                 FROM trials WHERE ?1 IS NULL OR run_id = ?1 ORDER BY id",
            params![run_id],
            |r| {
                let params: String = r.get(7)?;
                Ok(TrialRow {
                    id: r.get(0)?,
                    run_id: r.get(1)?,
                    trial_key: r.get(2)?,
                    rep: r.get(3)?,
                    workload: r.get(4)?,
                    status: r.get(5)?,
                    error: r.get(6)?,
                    params: serde_json::from_str(&params).unwrap_or(serde_json::Value::Null),
                    headline: Headline {
                        duration_s: r.get(8)?,
                        throughput_bps: r.get(9)?,
                        transactions_per_s: r.get(10)?,
                        rtt_p50_us: r.get(11)?,
                        rtt_p90_us: r.get(12)?,
                        rtt_p99_us: r.get(13)?,
                        rtt_p999_us: r.get(14)?,
                        rtt_max_us: r.get(15)?,
                        validation_errors: r.get::<_, Option<i64>>(16)?.map(|v| v as u64),
                        unsent: r.get::<_, Option<i64>>(17)?.map(|v| v as u64),
                        lost: r.get::<_, Option<i64>>(18)?.map(|v| v as u64),
                        offered_pps: r.get(19)?,
                        sent_pps: r.get(20)?,
                        received_pps: r.get(21)?,
                        loss_ratio: r.get(22)?,
                        owd_p50_us: r.get(23)?,
                        jitter_us: r.get(24)?,
                    },
                    started_at: r.get(25)?,
                    finished_at: r.get(26)?,
                    firewall: match r.get::<_, Option<String>>(27)? {
                        None => None,
                        Some(engine) => Some(FirewallRow {
                            engine,
                            rules_installed: r.get::<_, Option<i64>>(28)?.unwrap_or(0) as u64,
                            set_elements: r.get::<_, Option<i64>>(29)?.unwrap_or(0) as u64,
                            install_ms: r.get(30)?,
                            remove_ms: r.get(31)?,
                            verdicts_ok: r.get(32)?,
                            verdict_problems: r.get(33)?,
                        }),
                    },
                    results: serde_json::from_str(&r.get::<_, String>(34)?)
                        .unwrap_or(serde_json::Value::Null),
                    kind: match r.get::<_, Option<String>>(35)? {
                        None => None,
                        Some(family) => Some(KindRow {
                            family,
                            main_metric: r.get(36)?,
                            main_higher: r.get::<_, Option<bool>>(37)?.unwrap_or(true),
                        }),
                    },
                    engine: match (r.get::<_, Option<String>>(38)?, r.get(39)?) {
                        (Some(id), Some(kind)) => Some(EngineRow { id, kind }),
                        _ => None,
                    },
                })
            },
        )
    }

    /// Per-client rows of a trial, ordered by client number.
    pub fn echo_client_count(&self, trial_id: i64) -> Result<i64> {
        self.conn
            .query_row(
                "SELECT count(*) FROM echo_clients WHERE trial_id = ?1",
                [trial_id],
                |r| r.get(0),
            )
            .map_err(|e| self.sql(e))
    }
}

/// Insert one trial with its per-client rows, samples and updates in transaction `tx`
/// (committed by the caller: one trial, or every trial of a recovery file).
pub(crate) fn insert(tx: &Transaction, t: &TrialRecord) -> rusqlite::Result<i64> {
    let h = &t.headline;
    let fw = t.firewall.as_ref();
    tx.execute(
            "INSERT INTO trials (run_id, trial_key, rep, workload, status, error, started_at, finished_at,
                params, placement, duration_s, throughput_bps, transactions_per_s,
                rtt_p50_us, rtt_p90_us, rtt_p99_us, rtt_p999_us, rtt_max_us,
                validation_errors, unsent, lost, engine, rules_installed, set_elements, install_ms, remove_ms,
                verdicts_ok, verdict_problems, results,
                offered_pps, sent_pps, received_pps, loss_ratio, owd_p50_us, jitter_us,
                family, main_metric, main_higher, engine_id, engine_kind)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40)",
            params![
                t.run_id,
                t.trial_key,
                t.rep,
                t.workload,
                t.status,
                t.error,
                t.started_at,
                t.finished_at,
                t.params.to_string(),
                t.placement.to_string(),
                h.duration_s,
                h.throughput_bps,
                h.transactions_per_s,
                h.rtt_p50_us,
                h.rtt_p90_us,
                h.rtt_p99_us,
                h.rtt_p999_us,
                h.rtt_max_us,
                h.validation_errors.map(|v| v as i64),
                h.unsent.map(|v| v as i64),
                h.lost.map(|v| v as i64),
                fw.map(|f| f.engine.clone()),
                fw.map(|f| f.rules_installed as i64),
                fw.map(|f| f.set_elements as i64),
                fw.and_then(|f| f.install_ms),
                fw.and_then(|f| f.remove_ms),
                fw.and_then(|f| f.verdicts_ok),
                fw.and_then(|f| f.verdict_problems.clone()),
                t.results.to_string(),
                h.offered_pps,
                h.sent_pps,
                h.received_pps,
                h.loss_ratio,
                h.owd_p50_us,
                h.jitter_us,
                t.kind.as_ref().map(|k| k.family.clone()),
                t.kind.as_ref().and_then(|k| k.main_metric.clone()),
                t.kind.as_ref().map(|k| k.main_higher),
                t.engine.as_ref().map(|e| e.id.clone()),
                t.engine.as_ref().map(|e| e.kind.clone()),
            ],
        )?;
    let trial_id = tx.last_insert_rowid();
    if t.kind.is_none() {
        tx.execute_batch(LEGACY_KINDS)?;
    }
    insert_clients(tx, trial_id, &t.echo_clients)?;
    samples::insert(tx, trial_id, &t.samples)?;
    updates::insert(tx, trial_id, &t.updates)?;
    Ok(trial_id)
}

/// An echo trial's per-client rows.
fn insert_clients(
    tx: &Transaction,
    trial_id: i64,
    clients: &[EchoClientRow],
) -> rusqlite::Result<()> {
    let mut stmt = tx
                .prepare(
                    "INSERT INTO echo_clients VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,
                     ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)",
                )
                ?;
    for c in clients {
        let r = c.rtt_us;
        let v = &c.validation;
        stmt.execute(params![
            trial_id,
            c.client,
            c.source,
            c.mp[0].0 as i64,
            c.mp[0].1 as i64,
            c.mp[1].0 as i64,
            c.mp[1].1 as i64,
            c.mp[2].0 as i64,
            c.mp[2].1 as i64,
            c.mp[3].0 as i64,
            c.mp[3].1 as i64,
            c.unsent_client as i64,
            c.unsent_server as i64,
            c.lost as i64,
            v[0] as i64,
            v[1] as i64,
            v[2] as i64,
            v[3] as i64,
            v[4] as i64,
            v[5] as i64,
            c.throughput_bps,
            c.transactions_per_s,
            r.map(|r| r[0]),
            r.map(|r| r[1]),
            r.map(|r| r[2]),
            r.map(|r| r[3]),
            r.map(|r| r[4]),
            c.error,
        ])?;
    }
    Ok(())
}
