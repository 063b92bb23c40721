//! Engine `none`: the baseline. Installs nothing, whatever the rule set says.
//!
//! Must not: run any program.

use super::Backend;
use crate::model::{Engine, EngineOptions, Hook, RuleSet};
use crate::rendered::{RenderError, Rendered};
use crate::tool::ToolError;

pub struct NoRules;

pub static NONE: NoRules = NoRules;

impl Backend for NoRules {
    fn render(&self, rs: &RuleSet, _opts: &EngineOptions) -> Result<Rendered, RenderError> {
        Ok(Rendered::empty(Engine::None, rs.ip))
    }

    fn count(&self, _r: &Rendered) -> Result<(usize, usize), ToolError> {
        Ok((0, 0))
    }

    fn counters(&self, _r: &Rendered) -> Result<Vec<(Hook, Vec<u64>)>, ToolError> {
        Ok(vec![])
    }
}
