//! Planted trials stored the way the controller stores them: the effective engine
//! (`store::EngineRow`) comes from the trial's parameters through
//! `fwmodel::EffectiveEngine`, as `fwbench`'s `run::record` does, so the report reads
//! the engine's kind and family from the store's row as it does for real runs.

use serde_json::Value;
use store::{EngineRow, Store, TrialRecord};

/// The effective engine of planted parameters (`None` when they name no engine).
pub fn engine_of(params: &Value) -> Option<EngineRow> {
    let engine: fwmodel::Engine = params.get("engine")?.as_str()?.parse().ok()?;
    let family: fwmodel::NftFamily = params
        .get("nft_family")
        .and_then(Value::as_str)
        .unwrap_or("inet")
        .parse()
        .ok()?;
    Some(EngineRow::of(fwmodel::EffectiveEngine::new(engine, family)))
}

/// `Store::insert_trial` with the effective engine recorded.
pub trait Record {
    fn record(&mut self, t: &TrialRecord) -> store::Result<i64>;
}

impl Record for Store {
    fn record(&mut self, t: &TrialRecord) -> store::Result<i64> {
        let mut t = t.clone();
        if t.engine.is_none() {
            t.engine = engine_of(&t.params);
        }
        self.insert_trial(&t)
    }
}
