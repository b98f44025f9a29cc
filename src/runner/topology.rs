//! TEMP STUB
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum PinMode {
    Physical,
    Logical,
    None,
}
pub struct Topology {
    n: usize,
}
#[derive(Clone, Debug, serde::Serialize)]
pub struct Host {
    pub logical_cpus: usize,
}
impl Host {
    pub fn detect(t: &Topology) -> Host {
        Host { logical_cpus: t.n }
    }
}
impl Topology {
    pub fn detect() -> std::io::Result<Topology> {
        Ok(Topology {
            n: std::thread::available_parallelism()?.get(),
        })
    }
    pub fn placement(&self, pin: PinMode, _smt: bool) -> Vec<usize> {
        if pin == PinMode::None {
            vec![]
        } else {
            (0..self.n).collect()
        }
    }
    pub fn logical_cpus(&self) -> usize {
        self.n
    }
    pub fn physical_cores(&self) -> usize {
        self.n
    }
    pub fn smt(&self) -> bool {
        false
    }
}
pub fn cpu_for(p: &[usize], t: usize) -> Option<usize> {
    if p.is_empty() {
        None
    } else {
        Some(p[t % p.len()])
    }
}
pub fn pin_current_thread(_c: usize) -> std::io::Result<()> {
    Ok(())
}
