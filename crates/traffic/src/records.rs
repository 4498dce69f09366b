/// One column of per-operation records.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Per-operation records of one application (each download, each packet...).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Records {
    pub columns: Vec<(&'static str, Column)>,
}

impl Records {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
    pub fn f64(&self, name: &str) -> Option<&[f64]> {
        self.columns.iter().find(|(n, _)| *n == name).and_then(|(_, c)| match c {
            Column::F64(v) => Some(v.as_slice()),
            _ => None,
        })
    }
    pub fn i64(&self, name: &str) -> Option<&[i64]> {
        self.columns.iter().find(|(n, _)| *n == name).and_then(|(_, c)| match c {
            Column::I64(v) => Some(v.as_slice()),
            _ => None,
        })
    }
}

/// What an application hands to the run directory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppReport {
    pub name: String,
    pub kind: &'static str,
    /// The column holding the application's main metric (for summary.json).
    pub metric: Option<&'static str>,
    pub records: Records,
    /// Whole-run counters, in summary.json next to the metric.
    pub counters: Vec<(&'static str, f64)>,
}
