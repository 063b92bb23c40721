//! Temporary stand-in until the real probe lands.
pub struct Tool {
    pub name: &'static str,
    pub version: Option<String>,
}
pub struct Report {
    pub tools: Vec<Tool>,
}
pub fn probe() -> Report {
    Report { tools: vec![] }
}
impl Report {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({})
    }
    pub fn render_text(&self) -> String {
        String::new()
    }
}
