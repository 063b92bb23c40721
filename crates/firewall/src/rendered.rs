//! What rendering produces, whatever the engine: the install and removal batches, the
//! counts the installer must read back, and the chain layout.
//!
//! Owns: [`Rendered`] (and its dry-run text), [`ChainLayout`], [`RenderError`].
//! Must not: know any engine's syntax or run programs.

use crate::model::{Engine, Hook, Ip, Role};
use crate::tool::Batch;
use serde::{Deserialize, Serialize};

/// Roles of the rules of one of fwbench's chains, in evaluation order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainLayout {
    pub hook: Hook,
    pub roles: Vec<Role>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rendered {
    pub engine: Engine,
    pub ip: Ip,
    /// Applied in order; each batch is atomic.
    pub install: Vec<Batch>,
    /// Applied in order at removal; removes exactly what `install` created.
    pub remove: Vec<Batch>,
    /// Rules in fwbench's own chains (hook jump rules not counted).
    pub expect_rules: usize,
    /// Elements over all of fwbench's sets.
    pub expect_elements: usize,
    pub layout: Vec<ChainLayout>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("engine {engine} cannot express {feature}{hint}")]
    Unsupported {
        engine: Engine,
        feature: String,
        hint: String,
    },
    #[error("{0}")]
    Invalid(String),
}

impl Rendered {
    /// Nothing to install yet: the start of every engine's rendering.
    pub fn empty(engine: Engine, ip: Ip) -> Rendered {
        Rendered {
            engine,
            ip,
            install: vec![],
            remove: vec![],
            expect_rules: 0,
            expect_elements: 0,
            layout: vec![],
        }
    }

    /// Everything that would be applied, as the user would type it (dry run).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for b in &self.install {
            out += &format!("# {} <<'EOF'\n{}EOF\n", b.tool.argv().join(" "), b.text);
        }
        out += &format!(
            "# expect {} rules, {} set elements\n",
            self.expect_rules, self.expect_elements
        );
        out
    }
}
