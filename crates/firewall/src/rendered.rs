//! What rendering produces, whatever the engine: the install and removal batches, the
//! counts the installer must read back, and the chain layout.
//!
//! Owns: [`Rendered`] (and its dry-run text), [`ChainLayout`], [`RenderError`],
//! [`Settings`] (the engine's hidden choices that change what a rule costs).
//! Must not: know any engine's syntax or run programs.

use crate::model::{Engine, Hook, ImportedRule, Ip, NftFamily, Role, L4};
use crate::tool::Batch;
pub use fwmodel::report::Settings;
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
    /// Table family of the nft engines (where counts and counters are read back).
    #[serde(default)]
    pub nft_family: NftFamily,
    /// The choices the engine made that change a rule's cost, recorded with the trial.
    #[serde(default)]
    pub settings: Settings,
    /// An imported ruleset's rules, in chain order (their counters are the verdicts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imported_rules: Vec<ImportedRule>,
    /// fwbench's sets that a drop rule matches (where gateway events add and remove
    /// elements), in plan order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop_sets: Vec<DropSet>,
}

/// A set a drop rule matches: its name (without an engine's prefix), the hook of
/// that rule and the protocol of its ports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropSet {
    pub name: String,
    pub hook: Hook,
    pub l4: L4,
    /// Position of that rule in its chain's layout.
    #[serde(default)]
    pub at: usize,
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
            nft_family: NftFamily::default(),
            settings: Settings::default(),
            imported_rules: vec![],
            drop_sets: vec![],
        }
    }

    /// Everything that would be applied, as the user would type it (dry run).
    pub fn to_text(&self) -> String {
        self.text(false)
    }

    /// [`Rendered::to_text`] with a first comment line naming the [`Settings`]
    /// (`fwbench rules render`).
    pub fn to_text_with_settings(&self) -> String {
        self.text(true)
    }

    fn text(&self, settings: bool) -> String {
        let mut out = String::new();
        if settings && !self.settings.is_empty() {
            out += &format!("# settings: {}\n", self.settings.to_line());
        }
        for b in &self.install {
            out += &format!(
                "# {} <<'EOF'\n{}EOF\n",
                crate::tool::shell_line(&b.tool.argv()),
                b.text
            );
        }
        out += &format!(
            "# expect {} rules, {} set elements\n",
            self.expect_rules, self.expect_elements
        );
        out
    }
}
