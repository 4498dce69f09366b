//! Loading a scenario file: TOML syntax, case overrides, schema, semantics.

use crate::error::ScenarioError;
use crate::resolve::{resolve, Resolved};
use crate::schema::Scenario;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// The largest scenario file read (a scenario is a page of TOML).
pub const SCENARIO_MAX_BYTES: u64 = 4 << 20;

/// A scenario file, checked in full: the base scenario and every case.
#[derive(Clone, Debug)]
pub struct ScenarioFile {
    /// The path as the user gave it (used in messages).
    pub display: String,
    /// Directory that relative paths in the file are resolved against.
    pub dir: PathBuf,
    /// Case names in file order; empty if the file has no cases.
    pub cases: Vec<String>,
    /// The case the others are compared against.
    pub baseline: Option<String>,
    base: Table,
    overrides: Vec<Table>,
}

impl ScenarioFile {
    pub fn load(path: &Path) -> Result<ScenarioFile, ScenarioError> {
        let display = path.display().to_string();
        let text = units::read::read_text(path, SCENARIO_MAX_BYTES).map_err(|e| ScenarioError::new(&display, "", e.to_string()))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let file = ScenarioFile::parse(&display, &dir, &text)?;
        // Check everything now, so that no run starts from a file with a bad case.
        file.scenario(None)?;
        for c in &file.cases {
            file.scenario(Some(c))?;
        }
        Ok(file)
    }

    /// Parses TOML text; `dir` resolves relative paths such as `sizes_file`.
    pub fn parse(display: &str, dir: &Path, text: &str) -> Result<ScenarioFile, ScenarioError> {
        let mut base: Table = text.parse::<Table>().map_err(|e| {
            let at = e.span().map(|s| {
                let before = &text[..s.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!(" at line {line}, column {col}")
            });
            ScenarioError::new(display, "", format!("not valid TOML{}: {}", at.unwrap_or_default(), one_line(e.message())))
        })?;
        let mut cases = Vec::new();
        let mut overrides = Vec::new();
        match base.remove("cases") {
            None => {}
            Some(Value::Table(t)) => {
                for (name, v) in t {
                    if let Err(why) = crate::resolve::usable_name(&name) {
                        return Err(ScenarioError::new(display, "cases", format!("{:?} is not a usable case name: {why}", name)));
                    }
                    match v {
                        Value::Table(o) if o.contains_key("case") => {
                            return Err(ScenarioError::new(display, format!("cases.{name}.case"), CASE_FIELD))
                        }
                        Value::Table(o) => {
                            cases.push(name);
                            overrides.push(o);
                        }
                        _ => {
                            return Err(ScenarioError::new(
                                display,
                                format!("cases.{name}"),
                                "a case must be a table of fields overriding the base scenario",
                            ))
                        }
                    }
                }
            }
            Some(_) => return Err(ScenarioError::new(display, "cases", "expected tables [cases.NAME]")),
        }
        if !cases.is_empty() && base.contains_key("case") {
            return Err(ScenarioError::new(display, "case", CASE_FIELD));
        }
        if let Some(Value::String(c)) = base.get("case") {
            if let Err(why) = crate::resolve::usable_name(c) {
                return Err(ScenarioError::new(display, "case", format!("{c:?} is not a usable case name: {why}")));
            }
        }
        let baseline = match base.remove("baseline") {
            None => None,
            Some(Value::String(b)) if cases.contains(&b) => Some(b),
            Some(Value::String(b)) => {
                let allowed = if cases.is_empty() { "no cases are defined".to_string() } else { format!("one of {}", cases.join(", ")) };
                return Err(ScenarioError::new(display, "baseline", format!("{b:?} is not a case: expected {allowed}")));
            }
            Some(_) => return Err(ScenarioError::new(display, "baseline", "expected the name of a case")),
        };
        Ok(ScenarioFile { display: display.to_string(), dir: dir.to_path_buf(), cases, baseline, base, overrides })
    }

    /// The scenario of `case` (or the base when `None`), as written.
    pub fn scenario(&self, case: Option<&str>) -> Result<Scenario, ScenarioError> {
        let mut table = self.table(case)?;
        crate::schema::tags_first(&mut table);
        let s: Scenario = serde_path_to_error::deserialize(Value::Table(table)).map_err(|e| {
            let field = e.path().to_string();
            let field = if field == "." { String::new() } else { field };
            let mut err = ScenarioError::new(&self.display, field, clean_message(e.inner()));
            err.case = case.map(str::to_string);
            err
        })?;
        // Semantic checks live with the resolution into engine settings.
        resolve(&s, &self.dir).map_err(|mut e| {
            e.file = self.display.clone();
            e.case = case.map(str::to_string);
            e
        })?;
        Ok(s)
    }

    /// Resolved settings of `case`, with `seed` replacing the file's seed if given.
    /// The scenario returned names its case (`Scenario::case`).
    pub fn resolved(&self, case: Option<&str>, seed: Option<u64>) -> Result<(Scenario, Resolved), ScenarioError> {
        let mut s = self.scenario(case)?;
        if let Some(seed) = seed {
            s.seed = seed;
        }
        if let Some(c) = case {
            s.case = Some(c.to_string());
        }
        let r = resolve(&s, &self.dir).map_err(|mut e| {
            e.file = self.display.clone();
            e.case = case.map(str::to_string);
            e
        })?;
        Ok((s, r))
    }

    fn table(&self, case: Option<&str>) -> Result<Table, ScenarioError> {
        let mut t = self.base.clone();
        if let Some(c) = case {
            let i =
                self.cases.iter().position(|n| n == c).ok_or_else(|| {
                    ScenarioError::new(&self.display, "", format!("no case named {c:?}: the file has {}", list_or_none(&self.cases)))
                })?;
            merge(&mut t, &self.overrides[i]);
        }
        Ok(t)
    }
}

const CASE_FIELD: &str =
    "names the case a run directory's scenario.toml was resolved from, and cannot be set in a file with [cases] (the case table's own name is its case)";

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "no cases".into()
    } else {
        v.join(", ")
    }
}

/// Merges `over` into `base`: tables key by key, anything else replaced.
fn merge(base: &mut Table, over: &Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// serde's messages, made to read as this project's.
fn clean_message(e: &toml::de::Error) -> String {
    let m = one_line(e.message());
    if let Some(rest) = m.strip_prefix("unknown field ") {
        // "unknown field `x`, expected one of `a`, `b`" (or "expected `a`")
        let rest = rest.replace(", expected one of", "; allowed fields are").replace(", expected", "; the allowed field is");
        return format!("unknown field {}", rest.replace('`', "\""));
    }
    if let Some(rest) = m.strip_prefix("missing field ") {
        let field = rest.trim_matches('`');
        let hint = match field {
            "transport" => " (\"udp\" or \"tcp\")",
            "file" => " (a model from `undertow extract`)",
            "rate" => " (a rate such as \"10Mbps\", or a share of the bottleneck such as \"66%\")",
            _ => "",
        };
        return format!("missing required field \"{field}\"{hint}");
    }
    // "invalid type: string \"x\", expected u32" and "invalid value: integer `-3`, expected u32"
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = m.strip_prefix(prefix) {
            if let Some((got, want)) = rest.rsplit_once(", expected ") {
                let want = match want {
                    "u8" => "a whole number from 0 to 255",
                    "u16" => "a whole number from 0 to 65535",
                    "u32" => "a whole number from 0 to 4294967295",
                    "u64" | "usize" => "a whole number, 0 or more",
                    "i64" | "i32" => "a whole number",
                    "a boolean" => "true or false",
                    "a string" => "a string in quotes",
                    w => w,
                };
                return format!("{} is not allowed here: expected {want}", got.replace('`', "\""));
            }
        }
    }
    m.replace('`', "\"")
}
