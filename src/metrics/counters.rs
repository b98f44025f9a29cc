//! TEMP STUB
#[derive(Clone, Debug)]
pub enum CounterSpec {
    TaskClock,
}
pub fn default_specs() -> Vec<CounterSpec> {
    vec![CounterSpec::TaskClock]
}
pub fn parse_list(s: &str) -> Result<Vec<CounterSpec>, String> {
    if s.contains("bogus") {
        Err("bogus".into())
    } else {
        Ok(default_specs())
    }
}
pub struct ThreadCounters;
#[derive(Clone, Debug)]
pub struct CounterSample;
impl ThreadCounters {
    pub fn open(_s: &[CounterSpec]) -> Self {
        ThreadCounters
    }
    pub fn enable(&mut self) {}
    pub fn disable(&mut self) {}
    pub fn read(&mut self) -> Vec<CounterSample> {
        vec![]
    }
}
#[derive(Clone, Debug, serde::Serialize)]
pub struct CounterReport {
    pub name: String,
}
pub fn merge(_p: &[Vec<CounterSample>], _n: u64) -> Vec<CounterReport> {
    vec![]
}
